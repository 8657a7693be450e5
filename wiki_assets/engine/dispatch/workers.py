"""Each model's workers: park, lease, claim, request, retry; the end-of-run rule and hedges.

The dispatcher knows nothing of files, journals or HTTP. The run around it hands it the jobs and a
:class:`Work` (prepare a document, record an answer, record a failure, hold back while pages lag);
each model comes as a :class:`Lane` with a :class:`Client`. Time is the event loop's own clock, so
the same code runs against real servers and, under a virtual-time loop, in simulation.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from wiki_assets.engine.client import Summary
from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.corpus import DocumentError
from wiki_assets.engine.dispatch.limits import Breaker, Concurrency, work_units
from wiki_assets.engine.dispatch.queue import Job, Prepared, WorkQueue
from wiki_assets.engine.dispatch.tail import Pace, Prospect, first, remaining_s, should_start
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.leases import SlotLeases
from wiki_assets.engine.related import Candidate
from wiki_assets.engine.report import IngestReport, ModelStats

MAX_ATTEMPTS = 3  # tries per document across the fleet for timeouts and outages
MAX_GARBAGE = 2  # an unparsable answer is retried once
LEASE_POLL_S = 0.5  # how often a worker waiting for a fleet-wide slot looks again
TAIL_RECHECK_S = 5.0  # a worker that left a document looks again at least this often
RESCANS = 4  # returned documents a worker that left one may try before it waits
HEDGE_WITHOUT_PERCENTILE = 2.0  # no tail known for the slow model: hedge at twice my own time
HEDGE_CLEARLY_SOONER = 0.5  # or hedge when I would finish in half the time it still needs
HEDGE_BLIND_S = 2.0  # neither model has answered yet: race a request once it has run this long


class Client(Protocol):
    """What the dispatcher needs of a model: :class:`~wiki_assets.engine.fleet.ModelClient`, or a
    simulated model."""

    max_tokens: int

    async def summarize(
        self,
        path: str,
        title: str,
        text: str,
        candidates: Sequence[Candidate] = (),
        language: str = "English",
    ) -> Summary: ...

    async def close(self) -> None: ...


class Work(Protocol):
    """What the dispatcher asks of the run around it."""

    async def prepare(self, job: Job) -> Prepared:
        """Read the document and work out its request; DocumentError fails it alone."""
        ...

    async def record(self, job: Job, lane: Lane, summary: Summary) -> None:
        """Keep an answer (durably, before it counts)."""
        ...

    def fail(self, job: Job, reason: str) -> None: ...

    def held_back(self) -> bool:
        """Whether new requests must wait (pages lag behind); the run calls
        :meth:`Dispatcher.wake` when that changes."""
        ...


@dataclass(eq=False)
class Attempt:
    """One request for one document on one model."""

    job: Job
    lane: Lane
    started: float
    expected_s: float  # the model's pace for this document when the request was sent
    give_up_s: float | None  # its 95th-percentile time for it: past that, presumed stuck
    hedge: bool
    task: asyncio.Future[Summary] | None = None

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
    concurrency: Concurrency
    stats: ModelStats
    breaker: Breaker = field(default_factory=Breaker)
    pace: Pace = field(default_factory=Pace)
    attempts: list[Attempt] = field(default_factory=list)  # its requests in flight
    leased: dict[int, int] = field(default_factory=dict)  # worker slot -> fleet-wide slot held
    lease_blocked: bool = False  # its fleet-wide limit is taken by other runs
    nudged: int = 0  # documents other models left to this one

    def allows(self, slot: int, now: float) -> bool:
        return slot < self.concurrency.limit and self.breaker.allows(slot, now)

    def wait_for_worker_s(self, now: float) -> float:
        """Seconds until one of its workers is free to start a request (inf: none will be)."""
        if len(self.attempts) < self.concurrency.limit:
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
        return Prospect(self.order, wait + own, self.pace.docs_per_s(self.concurrency.limit))


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
        self.give_up_after_s = give_up_after_s
        self.expected = expected  # documents the run expects to send (known once planned)
        self.leases = leases
        self.log = log
        self.started = 0  # documents sent to a model at least once
        self.holding = 0  # workers holding a job (preparing it or waiting for its answer)
        self.settled = 0  # requests that ended (answered, failed or cancelled)
        self.finished = False
        self.last_success = 0.0
        self._now: Callable[[], float] = lambda: 0.0
        self._changed: asyncio.Event | None = None

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._now = loop.time
        self._changed = asyncio.Event()
        self.last_success = self._now()
        renewer = asyncio.create_task(self._renew_leases()) if self.leases else None
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
                    await self._unlease(lane, slot)
                    # Only slot 0 probes a tripped model, once its cooldown is over; the rest
                    # wait for a change (the probe's success, a higher limit).
                    probe = lane.breaker.tripped and slot == 0 < lane.concurrency.limit
                    wake_at = lane.breaker.open_until if probe else None
                    await self._wait(lambda: lane.allows(slot, self._now()), wake_at)
                    continue
                if not await self._lease(lane, slot):
                    # Its fleet-wide limit is taken by other runs: hand the claim to workers of
                    # models that are free, and look again shortly.
                    self.queue.give_back(worker)
                    await self._wait(lambda: False, self._now() + LEASE_POLL_S)
                    continue
                if self.work.held_back():
                    # Pages lag behind: hold new requests so memory stays bounded.
                    await self._unlease(lane, slot)
                    await self._wait(lambda: not self.work.held_back(), None)
                    continue
                job = self.queue.next_job(worker, self.claim_size)
                if job is None:
                    if await self._hedge(lane):
                        continue
                    if self.holding == 0:
                        self.stop_done()
                        return
                    # Requests still out may fail and put their document back: stay until they
                    # end, without holding a fleet-wide slot another run could use meanwhile.
                    # Any request that ends may also free a document to race (a failed hedge).
                    await self._unlease(lane, slot)
                    await self._wait(self._idle_over(self.settled), self._next_hedge_at(lane))
                    continue
                if not await self._start(job, lane):
                    await self._after_leaving(lane, worker, slot)
        finally:
            await self._unlease(lane, slot)

    def _idle_over(self, settled: int) -> Callable[[], bool]:
        """For a worker with nothing to start: work came back, nothing is held any more, or a
        request ended since ``settled`` (it may have left a document to race)."""
        return lambda: self.queue.has_work() or self.holding == 0 or self.settled != settled

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
        await self._unlease(lane, slot)

        def news() -> tuple[int, int, int]:
            return self.settled, self.queue.version, lane.nudged

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
            await self._attempt(job, lane, hedge=False)
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
        others = [
            prospect
            for other in self.lanes
            if other is not lane and (prospect := other.prospect(prompt_tokens, now)) is not None
        ]
        unstarted = max(0, self.expected() - self.started - (not job.started))
        if should_start(mine, others, unstarted):
            return True, None
        return False, first(others).order

    # ------------------------------------------------------------------ hedges

    def _hedge_after_s(self, attempt: Attempt, hedger: Lane) -> float | None:
        """How long ``attempt`` may run before ``hedger`` races it."""
        if attempt.give_up_s is not None:
            return attempt.give_up_s
        prepared = attempt.job.prepared
        mine = hedger.pace.expected_s(prepared.prompt_tokens) if prepared else None
        if mine is not None:
            return HEDGE_WITHOUT_PERCENTILE * mine
        # Nothing is known of either model yet (the start of a run with fewer documents than
        # workers): an idle model finds out by racing, once per document.
        return HEDGE_BLIND_S

    def _hedgeable(self, lane: Lane) -> Iterator[Attempt]:
        """For each document running only on other models, and not yet raced by ``lane``, its
        latest request: a race starts only once even that one runs long (so a hedge that hangs
        is raced in turn, and a document has a second request only while the first is late)."""
        seen: set[int] = set()
        for other in self.lanes:
            if other is lane:
                continue
            for attempt in other.attempts:
                job = attempt.job
                if id(job) in seen:
                    continue
                seen.add(id(job))
                if job.done or job.prepared is None or lane.order in job.raced_by:
                    continue
                if any(running.lane is lane for running in job.running):
                    continue
                yield max(job.running, key=lambda running: running.started)

    def _hedge_target(self, lane: Lane) -> Attempt | None:
        if lane.breaker.failures:
            # A model whose last request failed (a dead port, a flaky server) is no one to race
            # with: its hedge would fail too, and it would only have cost the time it took.
            return None
        now = self._now()
        best: tuple[float, Attempt] | None = None
        for attempt in self._hedgeable(lane):
            elapsed = now - attempt.started
            after = self._hedge_after_s(attempt, lane)
            overdue = after is not None and elapsed > after
            assert attempt.job.prepared is not None
            mine = lane.pace.expected_s(attempt.job.prepared.prompt_tokens)
            still = attempt.expected_s - elapsed
            sooner = mine is not None and mine < HEDGE_CLEARLY_SOONER * still
            if (overdue or sooner) and (best is None or elapsed > best[0]):
                best = (elapsed, attempt)
        return best[1] if best else None

    def _next_hedge_at(self, lane: Lane) -> float | None:
        """When the next request of another model becomes one ``lane`` would race."""
        if lane.breaker.failures:
            return None
        now = self._now()
        times = [
            at
            for attempt in self._hedgeable(lane)
            if (after := self._hedge_after_s(attempt, lane)) is not None
            and (at := attempt.started + after + 1e-6) > now
        ]
        return min(times) if times else None

    async def _hedge(self, lane: Lane) -> bool:
        """Race the longest-running late document of another model, if any (nothing is
        unstarted). Each model races a document at most once."""
        target = self._hedge_target(lane)
        if target is None:
            return False
        job = target.job
        job.raced_by.add(lane.order)
        lane.stats.hedges += 1
        self.report.hedged += 1
        self.holding += 1
        try:
            await self._attempt(job, lane, hedge=True)
        finally:
            self.holding -= 1
            self.wake()
        return True

    # ------------------------------------------------------------------ requests

    async def _attempt(self, job: Job, lane: Lane, *, hedge: bool) -> None:
        prepared = job.prepared
        assert prepared is not None
        pace = lane.pace
        attempt = Attempt(
            job,
            lane,
            self._now(),
            pace.expected_s(prepared.prompt_tokens) or 0.0,
            pace.percentile_s(prepared.prompt_tokens),
            hedge,
        )
        if not hedge:
            job.attempts += 1
        if not job.started:
            job.started = True
            self.started += 1
        task = asyncio.ensure_future(
            lane.client.summarize(
                job.doc.path, prepared.title, prepared.text, prepared.candidates, prepared.language
            )
        )
        attempt.task = task
        job.running.append(attempt)
        lane.attempts.append(attempt)
        try:
            await asyncio.wait((task,))
        finally:
            if not task.done():
                task.cancel()  # this worker itself is being cancelled
            job.running.remove(attempt)
            lane.attempts.remove(attempt)
            self.settled += 1
        if task.cancelled():
            if not job.done and not job.running:
                # Cancelled with no answer from anyone (the run is stopping): the document goes
                # back, to be counted as left for the next run.
                self.queue.put_back(job)
            return
        error = task.exception()
        if error is None:
            await self._answered(attempt, task.result())
        elif isinstance(error, ModelError):
            self._failed(attempt, error)
        else:
            raise error

    async def _answered(self, attempt: Attempt, summary: Summary) -> None:
        job, lane, stats = attempt.job, attempt.lane, attempt.lane.stats
        if job.done:
            return  # another model's answer came first, in the same instant
        job.done = True
        for other in job.running:
            if other.task is not None:
                other.task.cancel()  # the race is won: the other request stops
        now = self._now()
        latency = now - attempt.started
        lane.breaker.on_success()
        self.last_success = now
        lane.concurrency.on_success(
            latency, work_units(summary.prompt_tokens, summary.completion_tokens)
        )
        assert job.prepared is not None
        lane.pace.observe(latency, job.prepared.prompt_tokens, summary.completion_tokens)
        stats.docs += 1
        stats.hedges_won += attempt.hedge
        stats.prompt_tokens += summary.prompt_tokens
        stats.completion_tokens += summary.completion_tokens
        stats.hit_max_tokens += summary.finish_reason == "length"
        await self.work.record(job, lane, summary)
        job.prepared = None

    def _failed(self, attempt: Attempt, error: ModelError) -> None:
        """The retry policy: what a failed request means for its model and its document."""
        job, lane, stats = attempt.job, attempt.lane, attempt.lane.stats
        stats.errors += 1
        stats.timeouts += error.kind == "timeout"
        stats.garbage += error.kind == "garbage"
        now = self._now()
        if error.kind in ("timeout", "unavailable"):
            was_tripped = lane.breaker.tripped
            lane.breaker.on_failure(now)
            if lane.breaker.tripped and not was_tripped and self.log is not None:
                self.log.warning(
                    f"model {stats.name} taken out for {lane.breaker.open_until - now:.0f} s "
                    f"after {lane.breaker.failures} failures in a row: {error}"
                )
        if error.kind == "unavailable" and not attempt.hedge:
            job.attempts -= 1  # the model's fault, not the document's: no try is used up
        all_down = self._all_models_down(now)
        if job.done or job.running:
            pass  # another request for this document is still out: its outcome decides
        elif error.kind == "rejected":
            self._fail(job, lane, str(error))
        elif all_down:
            self.queue.put_back(job)  # not this document's fault: leave it for the next run
        elif job.attempts < (MAX_GARBAGE if error.kind == "garbage" else MAX_ATTEMPTS):
            self.queue.put_back(job)
            self.report.requeued += 1
        else:
            self._fail(job, lane, str(error))
        if all_down:
            self.stop(
                "every model is down: "
                + "; ".join(f"{m.stats.name} failed {m.breaker.failures}x" for m in self.lanes),
                cancel=False,
            )

    def _fail(self, job: Job, lane: Lane, reason: str) -> None:
        lane.stats.failed += 1
        job.prepared = None
        self.work.fail(job, reason)

    def _all_models_down(self, now: float) -> bool:
        return all(lane.breaker.tripped for lane in self.lanes) and (
            now - self.last_success >= self.give_up_after_s
        )

    # ------------------------------------------------------------------ fleet-wide slots

    async def _lease(self, lane: Lane, slot: int) -> bool:
        """Whether this worker may send a request: always, unless the model has a fleet-wide
        limit, in which case the worker must hold one of its slots in the state store."""
        limit = lane.endpoint.max_in_flight
        if self.leases is None or limit is None or slot in lane.leased:
            return True
        held = await asyncio.to_thread(self.leases.try_acquire, lane.endpoint.identity, limit)
        lane.lease_blocked = held is None
        if held is None:
            return False
        lane.leased[slot] = held
        return True

    async def _unlease(self, lane: Lane, slot: int) -> None:
        held = lane.leased.pop(slot, None)
        if held is not None and self.leases is not None:
            await asyncio.to_thread(self.leases.release, lane.endpoint.identity, held)

    async def _renew_leases(self) -> None:
        assert self.leases is not None
        while True:
            await asyncio.sleep(self.leases.ttl_s / 3)
            await asyncio.to_thread(self.leases.renew)
