"""A free worker's outlook: whether to start a document now, or leave it to a model that would
finish it sooner (the end-of-run rule, :mod:`~wiki_assets.engine.dispatch.run_end`), and when that
may change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.opinions import SecondOpinions
from wiki_assets.engine.dispatch.queue import Job
from wiki_assets.engine.dispatch.run_end.leave_rule import Prospect, first, should_start
from wiki_assets.engine.dispatch.run_end.when_done import RunEnd

TAIL_RECHECK_S = 5.0  # a worker that left a document looks again at least this often


class Outlook:
    """The end-of-run rule as the workers apply it."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        opinions: SecondOpinions,
        end: RunEnd,
        expected: Callable[[], int],
        started: Callable[[], int],
        now: Callable[[], float],
    ) -> None:
        self.lanes = lanes
        self.opinions = opinions
        self.end = end
        self.expected = expected  # requests the run expects to send, parts included
        self.started = started  # documents sent to a model at least once
        self.now = now

    def start(self, lane: Lane, job: Job, prompt_tokens: int) -> tuple[bool, int | None]:
        """Whether ``lane`` should start ``job`` now, and if not, which model would finish it
        first (its place in the fleet)."""
        now = self.now()
        own = lane.pace.expected_s(prompt_tokens)
        if own is None:
            return True, None  # no pace yet: nothing to compare with
        # This worker is free: its model's finish is its own time for the document.
        mine = Prospect(lane.order, own, lane.pace.docs_per_s(lane.workers.limit))
        # Only models that would take it: a second opinion is never left to a model that gave
        # the first answer, nor to one that would not take it now (it could wait forever).
        others = [
            prospect
            for other in self.lanes
            if other is not lane
            and job.may_take(other.order)
            and (
                self.opinions.likely(job.flags, other.order)
                if job.second_opinion
                else not self.end.demoted(other)
            )
            and (prospect := other.prospect(prompt_tokens, now)) is not None
        ]
        unstarted = max(0, self.expected() - self.started() - (not job.started))
        if should_start(mine, others, unstarted):
            return True, None
        return False, first(others).order

    def would_start(self, lane: Lane, job: Job) -> bool:
        if job.prepared is None:
            return True  # not read yet: take it and decide then
        return self.start(lane, job, job.prepared.prompt_tokens)[0]

    def next_change(self) -> float:
        """When a running request reaches its expected time or its tail percentile (the waits
        the end-of-run rule compares change then), at most :data:`TAIL_RECHECK_S` from now."""
        now = self.now()
        times = [now + TAIL_RECHECK_S]
        for lane in self.lanes:
            for attempt in lane.attempts:
                for offset in attempt.outlook():
                    if attempt.started + offset > now:
                        times.append(attempt.started + offset + 1e-6)
        return min(times)
