"""The dispatcher: every model's workers over one shared queue, in one task group, until the jobs
are done or the run stops.

The dispatcher knows nothing of files, journals or HTTP: the run hands it the jobs and a
:class:`~.work.Work`; each model is a :class:`~.lane.Lane` and each of its workers a
:class:`~.worker.Worker`. It wires what the workers share: the end of a run (:mod:`~.run_end`:
whether to start a document or leave it to a faster model, which late request to race, when the
run ends), a long document's parts (:class:`~.parts.Parts`), the requests
(:class:`~.request.Requests`), what idle workers judge (:mod:`~.judges`), and the wake-ups of the
workers that wait. Time is the event loop's clock: the same code runs on real servers and in
simulation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch.departures import Departures
from wiki_assets.engine.dispatch.fleet_workers import FleetWorkers
from wiki_assets.engine.dispatch.judges import JudgeQueue
from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.opinions import SecondOpinions
from wiki_assets.engine.dispatch.parts import Parts
from wiki_assets.engine.dispatch.queue import Job, WorkQueue
from wiki_assets.engine.dispatch.request import RequestHooks, Requests
from wiki_assets.engine.dispatch.run_end.when_done import RunEnd
from wiki_assets.engine.dispatch.run_end.who_starts import Outlook
from wiki_assets.engine.dispatch.tally import DispatchTally
from wiki_assets.engine.dispatch.work import Work
from wiki_assets.engine.dispatch.worker import Worker
from wiki_assets.engine.state.leases import WorkerLeases


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
        leases: WorkerLeases | None = None,
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
        self.fleet_workers = FleetWorkers(leases)
        self.log = log
        self.opinions = SecondOpinions(budget=int(dials.second_opinion_share * expected()))
        self.finished = False
        self._clock: Callable[[], float] = lambda: 0.0  # the event loop's, once it runs
        self._changed: asyncio.Event | None = None
        self.parts = Parts(self.queue, work, self.wake)
        self.departures = Departures(self.lanes, stop=self.stop, wake=self.wake, log=log)
        self.end = RunEnd(self.lanes, self.queue, self.opinions, self.parts, self.now)
        hooks = RequestHooks(
            stop=lambda reason: self.stop(reason, cancel=False),
            retire=self.departures.retire,
            gathered=self.parts.gathered,
            offer_judging=lambda judging: self.judges.offer(judging),
        )
        self.requests = Requests(
            self.lanes,
            self.queue,
            work,
            self.tally,
            self.opinions,
            hooks,
            clock=self.now,
            give_up_after_s=dials.give_up_after_s,
            log=log,
        )
        asked = self.requests.ask_another  # a page a judge flags may get a second opinion
        self.judges = JudgeQueue(
            work.judged, asked, int(dials.judge_share * expected()), dials.judge or None
        )
        self.judges.wait, self.judges.wake = lambda ready: self.wait(ready, None), self.wake
        self.outlook = Outlook(
            self.lanes,
            self.opinions,
            self.end,
            expected=lambda: self.expected() + self.parts.added,
            started=lambda: self.requests.started,
            now=self.now,
        )

    # ------------------------------------------------------------------ lifecycle

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._clock = loop.time
        self._changed = asyncio.Event()
        self.requests.last_success = self.now()
        try:
            # Every task of the run is in this group and ends with it: the workers, and the
            # helpers cancelled once every worker has ended: the renewal of the fleet-wide leases
            # they hold, the watch over the models' server processes, the run's work beside.
            async with asyncio.TaskGroup() as group:
                helpers = []
                if self.fleet_workers.leases:
                    helpers.append(group.create_task(self.fleet_workers.renew(self.log)))
                if self.departures.watched:
                    helpers.append(group.create_task(self.departures.watch()))
                if self.beside is not None:
                    helpers.append(group.create_task(self.beside()))
                workers = [
                    group.create_task(Worker(self, lane, index).run())
                    for lane in self.lanes
                    for index in range(lane.workers.most)
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

    def now(self) -> float:
        return self._clock()

    async def wait(self, ready: Callable[[], bool], wake_at: float | None) -> None:
        """Until ``ready()``, ``wake_at`` or the end."""
        while not self.finished and not ready():
            assert self._changed is not None
            changed = self._changed
            try:
                async with asyncio.timeout_at(wake_at):
                    await changed.wait()
            except TimeoutError:
                return

    def remaining(self) -> int:
        """Documents left unstarted or unfinished (a long document whose parts are out)."""
        return self.queue.remaining() + self.parts.out()

    def end_if_answered(self) -> None:
        """Once every document has its first answer (or failed), the run ends, whoever notices:
        the second opinions not worth waiting for are given up (:mod:`~.run_end.when_done`)."""
        if not self.finished and self.end.answered():
            self.stop_done()

    def stop_done(self) -> None:  # nothing is left: every worker ends (no judge is waited for)
        self.finished = True
        self.judges.end(self.lanes)
        self.wake()
