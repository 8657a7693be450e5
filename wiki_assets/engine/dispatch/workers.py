"""Each model's workers: park, lease, claim, start (or leave to a faster model), race, end.

The dispatcher knows nothing of files, journals or HTTP. The run around it hands it the jobs and a
:class:`Work` (prepare a document, record an answer, record a failure, hold back while pages lag);
each model comes as a :class:`~.lane.Lane` with a :class:`~.lane.Client`. The workers decide what
to send and when; :mod:`~.hedge` chooses which late request to race, :class:`~.request.Requests`
sends and settles each request (:mod:`~.retry`: what a failure means). Time is the event loop's
own clock, so the same code runs against real servers and, under a virtual clock, in simulation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from wiki_assets.engine.client import Summary
from wiki_assets.engine.corpus import DocumentError
from wiki_assets.engine.dispatch.hedge import (
    hedge_target,
    late_second_opinions,
    next_idle_change,
)
from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.queue import Job, Prepared, WorkQueue
from wiki_assets.engine.dispatch.request import Requests
from wiki_assets.engine.dispatch.slots import FleetSlots
from wiki_assets.engine.dispatch.tail import Prospect, first, should_start
from wiki_assets.engine.leases import SlotLeases
from wiki_assets.engine.report import IngestReport

LEASE_POLL_S = 0.5  # how often a worker waiting for a fleet-wide slot looks again
TAIL_RECHECK_S = 5.0  # a worker that left a document looks again at least this often
RESCANS = 4  # returned documents a worker that left one may try before it waits


class Work(Protocol):
    """What the dispatcher asks of the run around it."""

    async def prepare(self, job: Job) -> Prepared:
        """Read the document and work out its request; DocumentError fails it alone."""
        ...

    async def record(self, job: Job, lane: Lane, summary: Summary) -> bool:
        """Keep an answer (durably, before it counts). True: the answer is flagged and the run
        asks for a second opinion, which the dispatcher sends to another model if it has one."""
        ...

    def fail(self, job: Job, reason: str) -> None: ...

    def held_back(self) -> bool:
        """Whether new requests must wait (pages lag behind); the run calls
        :meth:`Dispatcher.wake` when that changes."""
        ...


class Dispatcher:
    """Runs every model's workers over one shared queue until the jobs are done or it stops."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        jobs: Iterator[Job],
        work: Work,
        report: IngestReport,
        *,
        claim_size: int,
        give_up_after_s: float,
        expected: Callable[[], int],
        leases: SlotLeases | None = None,
        log: Any = None,
    ) -> None:
        self.lanes = list(lanes)
        self.queue = WorkQueue(jobs)
        self.work = work
        self.report = report
        self.claim_size = claim_size
        self.expected = expected  # documents the run expects to send (known once planned)
        self.slots = FleetSlots(leases)
        self.holding = 0  # workers holding a job (preparing it or waiting for its answer)
        self.finished = False
        self._now: Callable[[], float] = lambda: 0.0
        self._changed: asyncio.Event | None = None
        self.requests = Requests(
            self.lanes,
            self.queue,
            work,
            report,
            clock=lambda: self._now(),
            give_up_after_s=give_up_after_s,
            stop=lambda reason: self.stop(reason, cancel=False),
            log=log,
        )

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._now = loop.time
        self._changed = asyncio.Event()
        self.requests.last_success = self._now()
        renewer = asyncio.create_task(self.slots.renew()) if self.slots.leases else None
        try:
            async with asyncio.TaskGroup() as group:
                for lane in self.lanes:
                    for slot in range(lane.concurrency.slots):
                        group.create_task(self._work(lane, slot))
        finally:
            if renewer is not None:
                renewer.cancel()

    def stop(self, reason: str, *, cancel: bool = True) -> None:
        """End the run early: no new requests; with ``cancel``, requests in flight are cancelled
        (their documents stay for the next run). Call it on the loop's thread."""
        if self.finished:
            return
        self.finished = True
        self.report.stopped = reason
        if cancel:
            for lane in self.lanes:
                for attempt in lane.attempts:
                    if attempt.task is not None:
                        attempt.task.cancel()
        self.wake()

    def wake(self) -> None:
        """Every waiting worker looks again (something they may wait for changed)."""
        if self._changed is not None:
            self._changed.set()
            self._changed = asyncio.Event()

    async def _wait(self, ready: Callable[[], bool], wake_at: float | None) -> None:
        """Until ``ready()``, ``wake_at`` or the end."""
        while not self.finished and not ready():
            assert self._changed is not None
            changed = self._changed
            try:
                async with asyncio.timeout_at(wake_at):
                    await changed.wait()
            except TimeoutError:
                return

    # ------------------------------------------------------------------ workers

    async def _work(self, lane: Lane, slot: int) -> None:
        worker = lane.order * 100_000 + slot
        try:
            while not self.finished:
                now = self._now()
                if not lane.allows(slot, now):
                    # Parked (above the limit, or the model is out): the others get its claim.
                    self.queue.give_back(worker)
                    await self.slots.release(lane, slot)
                    # Only slot 0 probes a tripped model, once its cooldown is over; the rest
                    # wait for a change (the probe's success, a higher limit).
                    probe = lane.breaker.tripped and slot == 0 < lane.concurrency.limit
                    wake_at = lane.breaker.open_until if probe else None
                    await self._wait(lambda: lane.allows(slot, self._now()), wake_at)
                    continue
                if not await self.slots.take(lane, slot):
                    # Its fleet-wide limit is taken by other runs: hand the claim to workers of
                    # models that are free, and look again shortly.
                    self.queue.give_back(worker)
                    await self._wait(lambda: False, self._now() + LEASE_POLL_S)
                    continue
                if self.work.held_back():
                    # Pages lag behind: hold new requests so memory stays bounded.
                    await self.slots.release(lane, slot)
                    await self._wait(lambda: not self.work.held_back(), None)
                    continue
                job = self.queue.next_job(worker, self.claim_size, lane.order)
                if job is None:
                    if await self._hedge(lane):
                        continue
                    self._give_up_late_second_opinions(lane)
                    if self.holding == 0 and not self._second_opinions_due():
                        self.stop_done()
                        return
                    # Requests still out may fail and put their document back: stay until they
                    # end, without holding a fleet-wide slot another run could use meanwhile.
                    # Any request that ends may also free a document to race (a failed hedge).
                    await self.slots.release(lane, slot)
                    await self._wait(
                        self._idle_over(lane, self.requests.settled),
                        next_idle_change(self.lanes, lane, self._now()),
                    )
                    continue
                if not await self._start(job, lane):
                    await self._after_leaving(lane, worker, slot)
        finally:
            await self.slots.release(lane, slot)

    def _give_up_late_second_opinions(self, lane: Lane) -> None:
        """Cancel the hung second opinions idle ``lane`` sees (their first answers stand)."""
        for attempt in late_second_opinions(self.lanes, lane, self._now()):
            if attempt.task is not None:
                attempt.task.cancel()

    def _second_opinions_due(self) -> bool:
        """Whether second opinions wait that a model in service may give. Those only models out
        of service (breaker open) could give are dropped, their first answers standing: an
        optional second look must not hold the end of the run for a model's cooldowns."""
        in_service = [lane.order for lane in self.lanes if not lane.breaker.tripped]
        self.queue.abandon(lambda job: not any(job.may_take(order) for order in in_service))
        return bool(self.queue.second_opinions())

    def _idle_over(self, lane: Lane, settled: int) -> Callable[[], bool]:
        """For a worker of ``lane`` with nothing to start: work it may take came back, nothing is
        held any more, or a request ended since ``settled`` (it may have left a document to
        race). A second opinion it may not give (its own answer) is no news to it."""
        return lambda: (
            self.queue.has_work(lane.order)
            or (self.holding == 0 and not self.queue.second_opinions())
            or self.requests.settled != settled
        )

    async def _after_leaving(self, lane: Lane, worker: int, slot: int) -> None:
        """This worker left a document to a model that would finish it sooner. It hands its
        claim back, starts any returned document it would finish first, or else waits until the
        outlook changes: a request ends, a document comes back, or a running request reaches
        its expected time or its tail percentile."""
        self.queue.give_back(worker)
        for _ in range(RESCANS):
            other = self.queue.take_returned(lambda job: self._would_start(lane, job))
            if other is None:
                break
            if await self._start(other, lane):
                return
        await self.slots.release(lane, slot)

        def news() -> tuple[int, int, int]:
            return self.requests.settled, self.queue.version, lane.nudged

        seen = news()
        await self._wait(lambda: news() != seen, self._next_outlook_change())

    def _would_start(self, lane: Lane, job: Job) -> bool:
        if job.prepared is None:
            return True  # not read yet: take it and decide then
        return self._outlook(lane, job, job.prepared.prompt_tokens)[0]

    def _next_outlook_change(self) -> float:
        """When a running request reaches its expected time or its tail percentile (the waits
        the end-of-run rule compares change then), at most :data:`TAIL_RECHECK_S` from now."""
        now = self._now()
        times = [now + TAIL_RECHECK_S]
        for lane in self.lanes:
            for attempt in lane.attempts:
                for offset in attempt.outlook():
                    if attempt.started + offset > now:
                        times.append(attempt.started + offset + 1e-6)
        return min(times)

    def stop_done(self) -> None:
        """Nothing is left: every worker ends."""
        self.finished = True
        self.wake()

    async def _start(self, job: Job, lane: Lane) -> bool:
        """Send one document to ``lane``; False when it was left to a model that would finish it
        sooner (see :mod:`~wiki_assets.engine.dispatch.tail`)."""
        self.holding += 1
        try:
            if job.prepared is None:
                try:
                    job.prepared = await self.work.prepare(job)
                except DocumentError as error:
                    self.work.fail(job, str(error))
                    return True
            if self.finished:
                self.queue.put_back(job)
                return True
            start, first = self._outlook(lane, job, job.prepared.prompt_tokens)
            if not start:
                self.queue.put_back(job, news=False)
                if first is not None:
                    # Tell the model that would finish it first (it may be waiting, having left
                    # another document itself).
                    self.lanes[first].nudged += 1
                return False
            await self.requests.send(job, lane, hedge=False)
            return True
        finally:
            self.holding -= 1
            self.wake()

    def _outlook(self, lane: Lane, job: Job, prompt_tokens: int) -> tuple[bool, int | None]:
        """Whether ``lane`` should start ``job`` now, and if not, which model would finish it
        first (its place in the fleet)."""
        now = self._now()
        own = lane.pace.expected_s(prompt_tokens)
        if own is None:
            return True, None  # no pace yet: nothing to compare with
        # This worker is free: its model's finish is its own time for the document.
        mine = Prospect(lane.order, own, lane.pace.docs_per_s(lane.concurrency.limit))
        # Only models that may take it: a second opinion is never left to a model that gave the
        # first answer (it could not take it, and would be waited for forever).
        others = [
            prospect
            for other in self.lanes
            if other is not lane
            and job.may_take(other.order)
            and (prospect := other.prospect(prompt_tokens, now)) is not None
        ]
        unstarted = max(0, self.expected() - self.requests.started - (not job.started))
        if should_start(mine, others, unstarted):
            return True, None
        return False, first(others).order

    # ------------------------------------------------------------------ hedges

    async def _hedge(self, lane: Lane) -> bool:
        """Race the longest-running late document of another model, if any (nothing is
        unstarted). Each model races a document at most once."""
        target = hedge_target(self.lanes, lane, self._now())
        if target is None:
            return False
        job = target.job
        job.raced_by.add(lane.order)
        lane.stats.hedges += 1
        self.report.hedged += 1
        self.holding += 1
        try:
            await self.requests.send(job, lane, hedge=True)
        finally:
            self.holding -= 1
            self.wake()
        return True
