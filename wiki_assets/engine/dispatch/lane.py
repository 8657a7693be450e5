"""One model during a run: its client, limits, breaker, pace, requests in flight and outlook.

A :class:`Lane` is the per-model state the workers share; an :class:`Attempt` is one request in
flight on it. Both only describe: the workers (:mod:`~wiki_assets.engine.dispatch.worker`) act.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.dispatch.limits import Breaker, Workers
from wiki_assets.engine.dispatch.queue import Job
from wiki_assets.engine.dispatch.run_end.hedge_thresholds import (
    HEDGE_BLIND_S,
    HEDGE_WITHOUT_PERCENTILE,
)
from wiki_assets.engine.dispatch.run_end.leave_rule import Prospect, remaining_s
from wiki_assets.engine.dispatch.run_end.pace import Pace
from wiki_assets.engine.dispatch.tally import LaneTally
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.prompting.candidate import PageRequest
from wiki_assets.engine.prompting.results import Notes, Summary
from wiki_assets.engine.verification.prompt import Judgement


class Client(Protocol):
    """What the dispatcher needs of a model: :class:`~wiki_assets.engine.llm.client.ModelClient`,
    or a simulated model."""

    max_tokens: int

    async def summarize(self, request: PageRequest) -> Summary: ...

    async def notes(self, path: str, text: str, part: int, parts: int, language: str) -> Notes: ...

    async def judge(self, text: str, sentences: Sequence[str]) -> Judgement: ...

    async def close(self) -> None: ...


@dataclass(eq=False)
class Attempt:
    """One request for one document on one model."""

    job: Job
    lane: Lane
    started: float
    expected_s: float  # the model's pace for this document when the request was sent
    give_up_s: float | None  # its 95th-percentile time for it: past that, presumed stuck
    hedge: bool
    task: asyncio.Future[Summary | Notes] | None = None
    # Cancelled because the run ended or stopped (a second opinion still out as the last first
    # answer came in, a stop): no failure of its model's (LaneTally.cut).
    cut: bool = False

    def cut_short(self) -> None:
        """Cancel the request because the run ends or stops (see :attr:`cut`)."""
        if self.task is not None:
            self.cut = True
            self.task.cancel()

    def outlook(self) -> tuple[float, float]:
        """(expected seconds, seconds past which it is presumed stuck) with what its model's
        pace says now. Sent before the model had answered, the request had no expectation of
        its own; and without a percentile yet, twice the expected time is the limit: a request
        that hangs must not make its model look about to come free forever."""
        pace = self.lane.pace
        tokens = self.job.prepared.prompt_tokens if self.job.prepared else 0
        expected = self.expected_s or pace.expected_s(tokens) or 0.0
        give_up = self.give_up_s or pace.percentile_s(tokens)
        if give_up is None:
            give_up = HEDGE_WITHOUT_PERCENTILE * expected if expected else HEDGE_BLIND_S
        return expected, give_up


@dataclass(eq=False)
class Lane:
    """One model during a run: its client, limits, breaker, pace and figures."""

    order: int  # place in the fleet: the end-of-run rule's tie-break
    endpoint: Endpoint
    client: Client
    workers: Workers  # how many of its workers may send
    tally: LaneTally = field(default_factory=LaneTally)  # its figures, as its requests settle
    breaker: Breaker = field(default_factory=Breaker)
    pace: Pace = field(default_factory=Pace)
    attempts: list[Attempt] = field(default_factory=list)  # its requests in flight
    leased: dict[int, int] = field(default_factory=dict)  # worker -> its fleet-wide lease
    lease_blocked: bool = False  # its fleet-wide limit is taken by other runs
    nudged: int = 0  # documents other models left to this one
    last_error: ModelError | None = None  # its last failed request's error
    answered: bool = False  # it has answered a request in this run
    # For a model served by a child process of the run (the embedded model): None while the
    # process runs, why it is gone once it has died. The dispatcher watches it.
    gone: Callable[[], str | None] | None = None

    def allows(self, worker: int, now: float) -> bool:
        """Whether its ``worker``-th worker may send now."""
        return worker < self.workers.limit and self.breaker.allows(worker, now)

    def wait_for_worker_s(self, now: float) -> float:
        """Seconds until one of its workers is free to start a request (inf: none will be)."""
        if len(self.attempts) < self.workers.limit:
            return 0.0
        return min((remaining_s(now - a.started, *a.outlook()) for a in self.attempts), default=0.0)

    def prospect(self, prompt_tokens: int, now: float) -> Prospect | None:
        """Its outlook for a document, or None when it cannot be counted on to take it."""
        own = self.pace.expected_s(prompt_tokens)
        if own is None or self.breaker.tripped or self.lease_blocked:
            return None
        wait = self.wait_for_worker_s(now)
        if math.isinf(wait):
            return None
        return Prospect(self.order, wait + own, self.pace.docs_per_s(self.workers.limit))
