"""One worker's loop: park, lease, claim, start (or leave to a faster model), race, wait.

A model has as many workers as requests it may have in flight; each runs this loop until the
run ends. What the workers share (the queue, the requests, the end of the run, the judges, the
wake-ups) is the :class:`~.dispatcher.Dispatcher`'s, seen here as :class:`Crew`. Which document
to start or leave to a faster model, and which late request to race, is :mod:`~.run_end`'s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol

from wiki_assets.engine.dispatch.fleet_workers import FleetWorkers
from wiki_assets.engine.dispatch.judges import JudgeQueue
from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.opinions import SecondOpinions
from wiki_assets.engine.dispatch.parts import Parts
from wiki_assets.engine.dispatch.queue import Job, WorkQueue
from wiki_assets.engine.dispatch.request import Requests
from wiki_assets.engine.dispatch.run_end.late_requests import hedge_target, next_idle_change
from wiki_assets.engine.dispatch.run_end.when_done import RunEnd
from wiki_assets.engine.dispatch.run_end.who_starts import Outlook
from wiki_assets.engine.dispatch.tally import DispatchTally
from wiki_assets.engine.dispatch.work import Work
from wiki_assets.engine.documents.corpus import DocumentError

LEASE_POLL_S = 0.5  # how often a worker waiting for a fleet-wide lease looks again
RESCANS = 4  # returned documents a worker that left one may try before it waits


class Crew(Protocol):
    """What the workers share: the dispatcher, as a worker sees it."""

    lanes: list[Lane]
    queue: WorkQueue
    work: Work
    tally: DispatchTally
    claim_size: int
    fleet_workers: FleetWorkers
    opinions: SecondOpinions
    parts: Parts
    end: RunEnd
    requests: Requests
    judges: JudgeQueue
    outlook: Outlook
    finished: bool

    def now(self) -> float: ...

    def wake(self) -> None: ...

    async def wait(self, ready: Callable[[], bool], wake_at: float | None) -> None: ...

    def end_if_answered(self) -> None: ...


class Worker:
    """One of ``lane``'s workers (its ``index``-th): sends one request at a time, until the run
    ends (see the module docstring)."""

    def __init__(self, crew: Crew, lane: Lane, index: int) -> None:
        self.crew = crew
        self.lane = lane
        self.index = index
        self.id = lane.order * 100_000 + index  # whose claims the queue holds

    async def run(self) -> None:
        crew, lane, index, worker = self.crew, self.lane, self.index, self.id
        try:
            while not crew.finished:
                now = crew.now()
                if not lane.allows(index, now):
                    # Parked (above the limit, or the model is out): the others get its claim.
                    crew.queue.give_back(worker)
                    await crew.fleet_workers.release(lane, index)
                    # Only worker 0 probes a tripped model, once its cooldown is over; the rest
                    # wait for a change (the probe's success, a higher limit).
                    probe = (
                        lane.breaker.tripped
                        and not lane.breaker.retired
                        and index == 0 < lane.workers.limit
                    )
                    wake_at = lane.breaker.open_until if probe else None
                    await crew.wait(lambda: lane.allows(index, crew.now()), wake_at)
                    continue
                if not await crew.fleet_workers.take(lane, index):
                    # Its fleet-wide limit is taken by other runs: hand the claim to workers of
                    # models that are free, and look again shortly.
                    crew.queue.give_back(worker)
                    await crew.wait(lambda: False, crew.now() + LEASE_POLL_S)
                    continue
                if crew.work.held_back():
                    # Pages lag behind: hold new requests so memory stays bounded.
                    await crew.fleet_workers.release(lane, index)
                    await crew.wait(lambda: not crew.work.held_back(), None)
                    continue
                demoted = crew.end.demoted(lane)
                if demoted:
                    lane.tally.superseded = True
                    crew.queue.give_back(worker)
                job = crew.queue.next_job(
                    worker,
                    crew.claim_size,
                    lane.order,
                    urgent_second=lambda job: crew.opinions.likely(job.flags, lane.order),
                    first_work=not demoted,
                )
                if job is None:  # (no hedge while documents are to arrive: not the end yet)
                    if not demoted and not crew.queue.expecting and await self._hedge():
                        continue
                    # Nothing of its own to start: capacity that would otherwise be idle, which
                    # an optional second opinion may use (see opinions.py).
                    job = crew.queue.take_second(lambda job: crew.end.may_give(job, lane))
                    if job is not None:
                        await self._start(job, idle=True)
                        continue
                    judging = crew.judges.take(lane)  # idle still: a page to judge (judges.py)
                    if judging is not None:
                        await crew.judges.judge(judging, lane, crew.end.judge_gives_way(lane))
                        continue
                    crew.end.give_up_late_second_opinions(lane)
                    crew.end_if_answered()
                    if crew.finished:
                        return
                    # Requests still out may fail and put their document back: stay until they
                    # end, without holding a fleet-wide lease another run could use meanwhile.
                    # Any request that ends may also free a document to race (a failed hedge).
                    await crew.fleet_workers.release(lane, index)
                    await crew.wait(
                        self._idle_over(crew.requests.settled),
                        next_idle_change(crew.lanes, lane, crew.now()),
                    )
                    continue
                if not await self._start(job):
                    await self._after_leaving()
        finally:
            await crew.fleet_workers.release(lane, index)

    def _idle_over(self, settled: int) -> Callable[[], bool]:
        """For this worker, with nothing to start: work it may take (a second opinion, a page to
        judge) came back, the run may end (the first answers are in, no second opinion is worth
        waiting for), or a request ended since ``settled`` (a document to race?)."""
        crew, lane = self.crew, self.lane
        end = crew.end
        return lambda: (
            end.work_for(lane, lambda job: end.may_give(job, lane))()
            or any(crew.judges.available(lane, judging) for judging in crew.judges.waiting)
            or (end.first_answers_in() and crew.queue.dry() and not end.waited_for())
            or crew.requests.settled != settled
        )

    async def _after_leaving(self) -> None:
        """This worker left a document to a model that would finish it sooner. It hands its
        claim back, starts any returned document it would finish first, or else waits until the
        outlook changes: a request ends, a document comes back, or a running request reaches
        its expected time or its tail percentile."""
        crew, lane = self.crew, self.lane
        crew.queue.give_back(self.id)
        for _ in range(RESCANS):
            other = crew.queue.take_returned(lambda job: crew.outlook.would_start(lane, job))
            if other is None:
                break
            if await self._start(other):
                return
        await crew.fleet_workers.release(lane, self.index)

        def news() -> tuple[int, int, int]:
            return crew.requests.settled, crew.queue.version, lane.nudged

        seen = news()
        await crew.wait(lambda: news() != seen, crew.outlook.next_change())

    async def _start(self, job: Job, *, idle: bool = False) -> bool:
        """Send one document to this worker's model; False when it was left to a model that
        would finish it sooner (see :mod:`~wiki_assets.engine.dispatch.run_end`). A second
        opinion an ``idle`` worker takes is sent whatever the other models would do: it only
        uses idle capacity."""
        crew, lane = self.crew, self.lane
        with self._holding(job):
            if job.failed or (job.part is not None and job.part.document.failed):
                return True  # its document failed meanwhile: nothing to send
            if job.prepared is None:
                try:
                    job.prepared = await crew.work.prepare(job)
                except DocumentError as error:
                    crew.work.fail(job, str(error))
                    return True
            if job.prepared.split:
                crew.parts.spread(job)
                return True
            if crew.finished:
                crew.queue.put_back(job)
                return True
            start, first = (
                (True, None) if idle else crew.outlook.start(lane, job, job.prepared.prompt_tokens)
            )
            if not start:
                crew.queue.put_back(job, news=False)
                if first is not None:
                    # Tell the model that would finish it first (it may be waiting, having left
                    # another document itself).
                    crew.lanes[first].nudged += 1
                return False
            await crew.requests.send(job, lane, hedge=False)
            return True

    @contextlib.contextmanager
    def _holding(self, job: Job) -> Iterator[None]:
        """While this worker holds ``job`` (preparing it, or waiting for its answer); when it
        lets go, the run may end and every waiting worker looks again."""
        crew = self.crew
        second = job.second_opinion
        crew.end.holding += 1
        crew.end.holding_second += second
        try:
            yield
        finally:
            crew.end.holding -= 1
            crew.end.holding_second -= second
            if not second:
                crew.end_if_answered()  # every worker may be busy with second opinions
            crew.wake()

    async def _hedge(self) -> bool:
        """Race the longest-running late document of another model, if any (nothing is
        unstarted). Each model races a document at most once."""
        crew, lane = self.crew, self.lane
        target = hedge_target(crew.lanes, lane, crew.now())
        if target is None:
            return False
        job = target.job
        job.raced_by.add(lane.order)
        lane.tally.hedges += 1
        crew.tally.hedged += 1
        with self._holding(job):
            await crew.requests.send(job, lane, hedge=True)
        return True
