"""Dispatch: one shared queue that every model's workers pull from whenever they are free.

``queue`` (claims, give-back, stealing), ``limits`` (how many requests each model gets in flight,
and the breaker), ``tail`` (pace, the end-of-run rule and hedges) and ``workers`` (a model's
workers and the retry policy, in the :class:`Dispatcher`).
"""

from wiki_assets.engine.dispatch.limits import (
    AdaptiveConcurrency,
    Breaker,
    Concurrency,
    FixedConcurrency,
    concurrency_for,
    work_units,
)
from wiki_assets.engine.dispatch.queue import Job, Prepared, WorkQueue
from wiki_assets.engine.dispatch.tail import Pace, Prospect, should_start
from wiki_assets.engine.dispatch.workers import Attempt, Client, Dispatcher, Lane, Work

__all__ = [
    "AdaptiveConcurrency",
    "Attempt",
    "Breaker",
    "Client",
    "Concurrency",
    "Dispatcher",
    "FixedConcurrency",
    "Job",
    "Lane",
    "Pace",
    "Prepared",
    "Prospect",
    "Work",
    "WorkQueue",
    "concurrency_for",
    "should_start",
    "work_units",
]
