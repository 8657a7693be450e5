"""Each model's workers: park, lease, claim, start (or leave to a faster model), race, end.

The dispatcher knows nothing of files, journals or HTTP: the run hands it the jobs and a
:class:`~.work.Work`; each model is a :class:`~.lane.Lane`. The end of a run is :mod:`~.run_end`'s
(whether to start a document or leave it to a faster model, which late request to race, when the
run ends). :class:`~.parts.Parts` holds a long document's parts, :class:`~.request.Requests`
sends and settles each request, :mod:`~.judges` says what idle workers judge. Time is the event
loop's clock: the same code runs on real servers and in simulation.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch.departures import Departures
from wiki_assets.engine.dispatch.judges import JudgeQueue
from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.opinions import SecondOpinions
from wiki_assets.engine.dispatch.parts import Parts
from wiki_assets.engine.dispatch.queue import Job, WorkQueue
from wiki_assets.engine.dispatch.request import Requests
from wiki_assets.engine.dispatch.run_end.late_requests import hedge_target, next_idle_change
from wiki_assets.engine.dispatch.run_end.when_done import RunEnd
from wiki_assets.engine.dispatch.run_end.who_starts import Outlook
from wiki_assets.engine.dispatch.slots import FleetSlots
from wiki_assets.engine.dispatch.tally import DispatchTally
from wiki_assets.engine.dispatch.work import Work
from wiki_assets.engine.documents.corpus import DocumentError
from wiki_assets.engine.state.leases import SlotLeases

LEASE_POLL_S = 0.5  # how often a worker waiting for a fleet-wide slot looks again
RESCANS = 4  # returned documents a worker that left one may try before it waits


class Dispatcher:
    """Runs every model's workers over one shared queue until the jobs are done or it stops."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        jobs: Iterator[Job],
        work: Work,
        dials: Dials,
        *,
        expected: Callable[[], int],
        leases: SlotLeases | None = None,
        tally: DispatchTally | None = None,
        log: Any = None,
        beside: Callable[[], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self.lanes = list(lanes)
        self.beside = beside  # the run's work beside the workers (documents still arriving)
        self.queue = WorkQueue(jobs)
        self.work = work
        self.tally = DispatchTally() if tally is None else tally  # the run report's, if given
        # The dials the dispatch reads: claim_size, give_up_after_s, second_opinion_share,
        # judge_share and judge.
        self.claim_size = dials.claim_size
        self.expected = expected  # documents the run expects to send (known once planned)
        self.slots = FleetSlots(leases)
        self.log = log
        self.opinions = SecondOpinions(budget=int(dials.second_opinion_share * expected()))
        self.finished = False
        self._now: Callable[[], float] = lambda: 0.0
        self._changed: asyncio.Event | None = None
        self.parts = Parts(self.queue, work, self.wake)
        self.departures = Departures(self.lanes, stop=self.stop, wake=self.wake, log=log)
        self.end = RunEnd(self.lanes, self.queue, self.opinions, self.parts, lambda: self._now())
        self.requests = Requests(
            self.lanes,
            self.queue,
            work,
            self.tally,
            clock=lambda: self._now(),
            give_up_after_s=dials.give_up_after_s,
            stop=lambda reason: self.stop(reason, cancel=False),
            retire=self.departures.retire,
            gathered=self.parts.gathered,
            opinions=self.opinions,
            offer_judging=lambda judging: self.judges.offer(judging),
            log=log,
        )
        asked = self.requests.ask_another  # a page a judge flags may get a second opinion
        self.judges = JudgeQueue(
            work.judged, asked, int(dials.judge_share * expected()), dials.judge or None
        )
        self.judges.wait, self.judges.wake = lambda ready: self._wait(ready, None), self.wake
        self.outlook = Outlook(
            self.lanes,
            self.opinions,
            self.end,
            expected=lambda: self.expected() + self.parts.added,
            started=lambda: self.requests.started,
            now=lambda: self._now(),
        )

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._now = loop.time
        self._changed = asyncio.Event()
        self.requests.last_success = self._now()
        try:
            # Every task of the run is in this group and ends with it: the workers, and the
            # helpers cancelled once every worker has ended: the renewal of the fleet-wide slots
            # they hold, the watch over the models' server processes, the run's work beside.
            async with asyncio.TaskGroup() as group:
                helpers = []
                if self.slots.leases:
                    helpers.append(group.create_task(self.slots.renew(self.log)))
                if self.departures.watched:
                    helpers.append(group.create_task(self.departures.watch()))
                if self.beside is not None:
                    helpers.append(group.create_task(self.beside()))
                workers = [
                    group.create_task(self._work(lane, slot))
                    for lane in self.lanes
                    for slot in range(lane.concurrency.slots)
                ]
                if helpers:
                    if workers:
                        await asyncio.wait(workers)
                    for helper in helpers:
                        helper.cancel()
        finally:
            self.judges.end(self.lanes)
            self.tally.second_opinions_skipped = dict(self.opinions.skipped)
            self.tally.judgements_skipped = dict(self.judges.skipped)
            await self.requests.end()  # (one its worker could not wait for)
            await self.judges.wait_out()

    def stop(self, reason: str, *, cancel: bool = True) -> None:
        """End the run early: no new requests; with ``cancel``, requests in flight are cancelled
        (their documents stay for the next run). Call it on the loop's thread."""
        if self.finished:
            return
        self.finished = True
        self.tally.stopped = reason
        self.judges.end(self.lanes)
        if cancel:
            for lane in self.lanes:
                for attempt in lane.attempts:
                    attempt.cut_short()
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
                    probe = (
                        lane.breaker.tripped
                        and not lane.breaker.retired
                        and slot == 0 < lane.concurrency.limit
                    )
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
                demoted = self.end.demoted(lane)
                if demoted:
                    lane.tally.superseded = True
                    self.queue.give_back(worker)
                job = self.queue.next_job(
                    worker,
                    self.claim_size,
                    lane.order,
                    urgent_second=lambda job: self.opinions.likely(job.flags, lane.order),
                    first_work=not demoted,
                )
                if job is None:  # (no hedge while documents are to arrive: not the end yet)
                    if not demoted and not self.queue.expecting and await self._hedge(lane):
                        continue
                    # Nothing of its own to start: capacity that would otherwise be idle, which
                    # an optional second opinion may use (see opinions.py).
                    job = self.queue.take_second(lambda job: self.end.may_give(job, lane))
                    if job is not None:
                        await self._start(job, lane, idle=True)
                        continue
                    judging = self.judges.take(lane)  # idle still: a page to judge (judges.py)
                    if judging is not None:
                        await self.judges.judge(judging, lane, self.end.judge_gives_way(lane))
                        continue
                    self.end.give_up_late_second_opinions(lane)
                    self._end_if_answered()
                    if self.finished:
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

    def _end_if_answered(self) -> None:
        """Once every document has its first answer (or failed), the run ends, whoever notices:
        the second opinions not worth waiting for are given up (:mod:`~.run_end.when_done`)."""
        if not self.finished and self.end.answered():
            self.stop_done()

    def _idle_over(self, lane: Lane, settled: int) -> Callable[[], bool]:
        """For a worker of ``lane`` with nothing to start: work it may take (a second opinion, a
        page to judge) came back, the run may end (the first answers are in, no second opinion
        is worth waiting for), or a request ended since ``settled`` (a document to race?)."""
        return lambda: (
            self.end.work_for(lane, lambda job: self.end.may_give(job, lane))()
            or any(self.judges.available(lane, judging) for judging in self.judges.waiting)
            or (self.end.first_answers_in() and self.queue.dry() and not self.end.waited_for())
            or self.requests.settled != settled
        )

    async def _after_leaving(self, lane: Lane, worker: int, slot: int) -> None:
        """This worker left a document to a model that would finish it sooner. It hands its
        claim back, starts any returned document it would finish first, or else waits until the
        outlook changes: a request ends, a document comes back, or a running request reaches
        its expected time or its tail percentile."""
        self.queue.give_back(worker)
        for _ in range(RESCANS):
            other = self.queue.take_returned(lambda job: self.outlook.would_start(lane, job))
            if other is None:
                break
            if await self._start(other, lane):
                return
        await self.slots.release(lane, slot)

        def news() -> tuple[int, int, int]:
            return self.requests.settled, self.queue.version, lane.nudged

        seen = news()
        await self._wait(lambda: news() != seen, self.outlook.next_change())

    def remaining(self) -> int:
        """Documents left unstarted or unfinished (a long document whose parts are out)."""
        return self.queue.remaining() + self.parts.out()

    def stop_done(self) -> None:  # nothing is left: every worker ends (no judge is waited for)
        self.finished = True
        self.judges.end(self.lanes)
        self.wake()

    async def _start(self, job: Job, lane: Lane, *, idle: bool = False) -> bool:
        """Send one document to ``lane``; False when it was left to a model that would finish it
        sooner (see :mod:`~wiki_assets.engine.dispatch.run_end`). A second opinion an ``idle``
        worker takes is sent whatever the other models would do: it only uses idle capacity."""
        with self._holding(job):
            if job.failed or (job.part is not None and job.part.document.failed):
                return True  # its document failed meanwhile: nothing to send
            if job.prepared is None:
                try:
                    job.prepared = await self.work.prepare(job)
                except DocumentError as error:
                    self.work.fail(job, str(error))
                    return True
            if job.prepared.split:
                self.parts.spread(job)
                return True
            if self.finished:
                self.queue.put_back(job)
                return True
            start, first = (
                (True, None) if idle else self.outlook.start(lane, job, job.prepared.prompt_tokens)
            )
            if not start:
                self.queue.put_back(job, news=False)
                if first is not None:
                    # Tell the model that would finish it first (it may be waiting, having left
                    # another document itself).
                    self.lanes[first].nudged += 1
                return False
            await self.requests.send(job, lane, hedge=False)
            return True

    @contextlib.contextmanager
    def _holding(self, job: Job) -> Iterator[None]:
        """While a worker holds ``job`` (preparing it, or waiting for its answer); when it lets
        go, the run may end and every waiting worker looks again."""
        second = job.second_opinion
        self.end.holding += 1
        self.end.holding_second += second
        try:
            yield
        finally:
            self.end.holding -= 1
            self.end.holding_second -= second
            if not second:
                self._end_if_answered()  # every worker may be busy with second opinions
            self.wake()

    # ------------------------------------------------------------------ hedges

    async def _hedge(self, lane: Lane) -> bool:
        """Race the longest-running late document of another model, if any (nothing is
        unstarted). Each model races a document at most once."""
        target = hedge_target(self.lanes, lane, self._now())
        if target is None:
            return False
        job = target.job
        job.raced_by.add(lane.order)
        lane.tally.hedges += 1
        self.tally.hedged += 1
        with self._holding(job):
            await self.requests.send(job, lane, hedge=True)
        return True
