"""Dispatch: one shared queue that every model's workers pull from whenever they are free.

``queue`` (claims, give-back, stealing), ``limits`` (how many requests each model gets in flight,
and the breaker), ``lane`` (one model during a run and its requests in flight), ``dispatcher``
(the :class:`Dispatcher`: every model's workers in one task group, and what they share),
``worker`` (one worker's loop: park, lease, claim, start or leave, race), ``run_end`` (the end of
a run, a room of its own: each model's pace, the end-of-run rule, hedges, and when the run is
done), ``parts`` (a long document's parts, sent as jobs of their own), ``opinions`` (which
flagged answers get a second opinion, learned as they answer), ``judges`` (which pages another
model judges, on idle workers), ``request`` (one request sent and settled), ``retry`` (what a
failure means for the model and the document), ``slots`` (fleet-wide in-flight slots),
``tally`` (what the dispatcher counts, which the run's report takes when it is done) and
``work`` (what the dispatcher asks of the run around it).
"""

from wiki_assets.engine.dispatch.dispatcher import Dispatcher
from wiki_assets.engine.dispatch.judges import JudgeQueue, PageToJudge
from wiki_assets.engine.dispatch.lane import Attempt, Client, Lane
from wiki_assets.engine.dispatch.limits import (
    AdaptiveConcurrency,
    Breaker,
    Concurrency,
    FixedConcurrency,
    concurrency_for,
    work_units,
)
from wiki_assets.engine.dispatch.opinions import SecondOpinions
from wiki_assets.engine.dispatch.queue import Job, Prepared, WorkQueue
from wiki_assets.engine.dispatch.run_end.leave_rule import Prospect, should_start
from wiki_assets.engine.dispatch.run_end.pace import Pace
from wiki_assets.engine.dispatch.tally import DispatchTally, LaneTally
from wiki_assets.engine.dispatch.work import Recorded, Work

__all__ = [
    "AdaptiveConcurrency",
    "Attempt",
    "Breaker",
    "Client",
    "Concurrency",
    "DispatchTally",
    "Dispatcher",
    "FixedConcurrency",
    "Job",
    "JudgeQueue",
    "Lane",
    "LaneTally",
    "Pace",
    "PageToJudge",
    "Prepared",
    "Prospect",
    "Recorded",
    "SecondOpinions",
    "Work",
    "WorkQueue",
    "concurrency_for",
    "should_start",
    "work_units",
]
