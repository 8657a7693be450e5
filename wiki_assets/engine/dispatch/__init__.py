"""Dispatch: one shared queue that every model's workers pull from whenever they are free.

A worker has one request in flight at a time: how many workers a model has is how many requests
it has in flight. ``queue`` (claims, give-back, stealing), ``limits`` (how many workers each
model gets, and the breaker), ``lane`` (one model during a run and its requests in flight),
``dispatcher`` (the :class:`Dispatcher`: every model's workers in one task group, and what they
share), ``worker`` (one worker's loop: park, lease, claim, start or leave, race), ``run_end``
(the end of a run, a room of its own: each model's pace, the end-of-run rule, hedges, and when
the run is done), ``parts`` (a long document's parts, sent as jobs of their own), ``opinions``
(which flagged answers get a second opinion, learned as they answer), ``judges`` (which pages
another model judges, on idle workers), ``request`` (one request sent and settled), ``retry``
(what a failure means for the model and the document), ``fleet_workers`` (a model's workers
across every run, leased in the state store), ``tally`` (what the dispatcher counts, which the
run's report takes when it is done) and ``work`` (what the dispatcher asks of the run around
it).
"""

from wiki_assets.engine.dispatch.dispatcher import Dispatcher
from wiki_assets.engine.dispatch.judges import JudgeQueue, PageToJudge
from wiki_assets.engine.dispatch.lane import Attempt, Client, Lane
from wiki_assets.engine.dispatch.limits import (
    AdaptiveWorkers,
    Breaker,
    FixedWorkers,
    Workers,
    work_units,
    workers_for,
)
from wiki_assets.engine.dispatch.opinions import SecondOpinions
from wiki_assets.engine.dispatch.queue import Job, Prepared, WorkQueue
from wiki_assets.engine.dispatch.run_end.leave_rule import Prospect, should_start
from wiki_assets.engine.dispatch.run_end.pace import Pace
from wiki_assets.engine.dispatch.tally import DispatchTally, LaneTally
from wiki_assets.engine.dispatch.work import Recorded, Work

__all__ = [
    "AdaptiveWorkers",
    "Attempt",
    "Breaker",
    "Client",
    "DispatchTally",
    "Dispatcher",
    "FixedWorkers",
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
    "Workers",
    "should_start",
    "work_units",
    "workers_for",
]
