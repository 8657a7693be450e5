"""One request's life: sent, tracked while in flight, and settled.

An answer wins the race for its document (the other requests for it are cancelled), teaches its
model's limits, breaker and pace, and is recorded; a failure goes through the retry policy
(:mod:`~wiki_assets.engine.dispatch.retry`); a request cancelled with no answer from anyone puts
its document back. An answer the run flags may go back once for a second opinion from another
model (:meth:`~wiki_assets.engine.dispatch.queue.WorkQueue.ask_another`). Which document a worker
sends, and when, is the workers' business (:mod:`~wiki_assets.engine.dispatch.workers`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from wiki_assets.engine.client import Summary
from wiki_assets.engine.dispatch import retry
from wiki_assets.engine.dispatch.lane import Attempt, Lane
from wiki_assets.engine.dispatch.limits import work_units
from wiki_assets.engine.dispatch.queue import Job, WorkQueue
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.report import IngestReport

if TYPE_CHECKING:
    from wiki_assets.engine.dispatch.workers import Work


class Requests:
    """Sends requests for the workers and settles them; counts what the workers wait on."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        queue: WorkQueue,
        work: Work,
        report: IngestReport,
        *,
        clock: Callable[[], float],
        give_up_after_s: float,
        stop: Callable[[str], None],
        log: Any = None,
    ) -> None:
        self.lanes = lanes
        self.queue = queue
        self.work = work
        self.report = report
        self.clock = clock
        self.give_up_after_s = give_up_after_s
        self.stop = stop  # ends the run, leaving requests in flight to finish
        self.log = log
        self.started = 0  # documents sent to a model at least once
        self.settled = 0  # requests that ended (answered, failed or cancelled)
        self.last_success = 0.0

    async def send(self, job: Job, lane: Lane, *, hedge: bool) -> None:
        """Send ``job`` (prepared) to ``lane`` and settle the request once it ends."""
        prepared = job.prepared
        assert prepared is not None
        pace = lane.pace
        attempt = Attempt(
            job,
            lane,
            self.clock(),
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
            if not job.done and not job.running and not job.second_opinion:
                # Cancelled with no answer from anyone (the run is stopping): the document goes
                # back, to be counted as left for the next run. A second opinion is dropped:
                # the document's first answer is journaled.
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
        now = self.clock()
        latency = now - attempt.started
        lane.breaker.on_success()
        lane.answered = True
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
        job.answered_by.add(lane.order)
        wants_another = await self.work.record(job, lane, summary)
        if wants_another and not job.second_opinion and self._another_model(job):
            self.queue.ask_another(job)  # prepared is kept: the same request, another model
            self.report.second_opinions += 1
            return
        job.prepared = None

    def _another_model(self, job: Job) -> bool:
        """Whether another model of the fleet can give ``job`` a second opinion: one that has
        not answered it (none in a one-model fleet), has answered something in this run and is
        in service. Nobody can race a second opinion (the model that could answered already),
        so one sent to a model that hangs would hold the end of the run for its timeout."""
        return any(
            job.may_take(lane.order) and lane.stats.docs and not lane.breaker.tripped
            for lane in self.lanes
        )

    def _failed(self, attempt: Attempt, error: ModelError) -> None:
        """Apply the retry policy to a failed request: its document is failed, put back, or
        left to the request still out for it; when every model is down, the run stops."""
        job, lane = attempt.job, attempt.lane
        now = self.clock()
        retry.blame(attempt, error, now, self.log)
        all_down = retry.all_models_down(self.lanes, now, self.last_success, self.give_up_after_s)
        step = retry.next_step(job, error, all_down=all_down)
        if step == "drop":
            job.prepared = None
            if self.log is not None:
                self.log.info(f"second opinion on {job.doc.path} failed; its first answer stands")
        elif step == "fail":
            lane.stats.failed += 1
            job.prepared = None
            self.work.fail(job, str(error))
        elif step != "wait":  # put back: to be tried again, or for the next run
            self.queue.put_back(job)
            if step == "retry":
                self.report.requeued += 1
        if all_down:
            self.stop(retry.all_down_reason(self.lanes))
