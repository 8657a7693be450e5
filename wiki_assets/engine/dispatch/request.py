"""One request's life: sent, tracked while in flight, and settled.

An answer wins the race for its document (the other requests for it are cancelled), teaches its
model's limits, breaker and pace, and is recorded; a failure goes through the retry policy
(:mod:`~wiki_assets.engine.dispatch.retry`); a request cancelled with no answer from anyone puts
its document back. An answer the run flags may go back once for a second opinion from another
model (:meth:`~wiki_assets.engine.dispatch.queue.WorkQueue.ask_another`). Which document a worker
sends, and when, is the workers' business (:mod:`~wiki_assets.engine.dispatch.worker`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from wiki_assets.engine.dispatch import retry
from wiki_assets.engine.dispatch.judges import PageToJudge
from wiki_assets.engine.dispatch.lane import Attempt, Lane
from wiki_assets.engine.dispatch.limits import work_units
from wiki_assets.engine.dispatch.opinions import FAILED, OUT_OF_SERVICE, SecondOpinions
from wiki_assets.engine.dispatch.queue import Job, WorkQueue
from wiki_assets.engine.dispatch.tally import DispatchTally
from wiki_assets.engine.dispatch.work import Recorded, Work
from wiki_assets.engine.ending_tasks import cancel_and_wait
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.prompting.candidate import PageRequest
from wiki_assets.engine.prompting.results import Notes, Summary


@dataclass(frozen=True, slots=True)
class RequestHooks:
    """What a settled request may tell the dispatcher, one call each."""

    stop: Callable[[str], None]  # ends the run (why), leaving requests in flight to finish
    retire: Callable[[Lane, str], None]  # a model whose server died leaves the run (why)
    gathered: Callable[[Job], None]  # a long document's notes are all in: its page is next
    offer_judging: Callable[[PageToJudge], None]  # a page's unchecked sentences, for a judge


class Requests:
    """Sends requests for the workers and settles them; counts what the workers wait on."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        queue: WorkQueue,
        work: Work,
        tally: DispatchTally,
        opinions: SecondOpinions,
        hooks: RequestHooks,
        *,
        clock: Callable[[], float],
        give_up_after_s: float,
        log: Any = None,
    ) -> None:
        self.lanes = lanes
        self.queue = queue
        self.work = work
        self.tally = tally
        self.opinions = opinions  # what second opinions are worth (learned as they answer)
        self.hooks = hooks  # what a settled request tells the dispatcher
        self.clock = clock
        self.give_up_after_s = give_up_after_s
        self.log = log
        self.started = 0  # documents sent to a model at least once
        self.settled = 0  # requests that ended (answered, failed or cancelled)
        self.last_success = 0.0
        # Every request until it ends: its worker waits for it, and one the worker could not
        # wait for (cancelled again meanwhile) is ended by end() as the run ends.
        self.out: set[asyncio.Future[Summary | Notes]] = set()

    async def end(self) -> None:
        """Cancel any request still out and wait for it to end: none outlives the run."""
        await cancel_and_wait(self.out)

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
        lane.tally.requests += 1
        second = job.second_opinion  # (a first answer's job may become one when it is recorded)
        if second:
            self.opinions.sent(job.flags, lane.order)
        request: Awaitable[Summary | Notes]
        if job.part is not None:
            request = lane.client.notes(
                job.doc.path, prepared.text, job.part.index + 1, job.part.count, prepared.language
            )
        else:
            request = lane.client.summarize(
                PageRequest(
                    job.doc.path, prepared.title, prepared.text, tuple(prepared.candidates),
                    prepared.language, notes=prepared.notes, parts=prepared.parts,
                )
            )  # fmt: skip
        task: asyncio.Future[Summary | Notes] = asyncio.ensure_future(request)
        self.out.add(task)
        task.add_done_callback(self.out.discard)
        attempt.task = task
        job.running.append(attempt)
        lane.attempts.append(attempt)
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:
            # This worker itself is being cancelled: so is its request, which ends before the
            # worker does (no request outlives the run: if the worker is cancelled again while
            # it waits, end() waits for the request as the run ends).
            attempt.cut = True
            task.cancel()
            await asyncio.wait((task,))
            raise
        except BaseException:
            task.cancel()  # (a coroutine closed with its event loop gone: nothing to wait on)
            raise
        finally:
            job.running.remove(attempt)
            lane.attempts.remove(attempt)
            self.settled += 1
            if task.done() and not task.cancelled() and task.exception() is None:
                lane.tally.busy_s += self.clock() - attempt.started  # (answered)
            lane.tally.cut += task.cancelled() and attempt.cut
        recorded = False
        try:
            recorded = await self._settle(attempt, task)
        finally:
            if second and not recorded:
                self._second_opinion_lost(attempt)

    async def _settle(self, attempt: Attempt, task: asyncio.Future[Summary | Notes]) -> bool:
        """What a request's end means; True when it gave a second opinion that was recorded."""
        job = attempt.job
        if task.cancelled():
            dropped = job.part is not None and job.part.document.failed
            if not job.done and not job.running and not job.second_opinion and not dropped:
                # Cancelled with no answer from anyone (the run is stopping): the document goes
                # back, to be counted as left for the next run. A second opinion is dropped:
                # the document's first answer is journaled.
                self.queue.put_back(job)
            return False
        error = task.exception()
        if error is None:
            return await self._answered(attempt, task.result())
        if isinstance(error, ModelError):
            self._failed(attempt, error)
            return False
        raise error

    def _second_opinion_lost(self, attempt: Attempt) -> None:
        """A second opinion's request ended with no answer recorded (failed, cancelled, or beaten
        by a hedge's): the first answer stands."""
        job = attempt.job
        self.opinions.settled(job.flags, attempt.lane.order, kept=None)
        if job.given_up is not None and not job.running:
            self.opinions.skip(job.given_up)

    async def _answered(self, attempt: Attempt, answer: Summary | Notes) -> bool:
        job, lane, tally = attempt.job, attempt.lane, attempt.lane.tally
        if job.done:
            return False  # another model's answer came first, in the same instant
        job.done = True
        for other in job.running:
            if other.task is not None:
                other.task.cancel()  # the race is won: the other request stops
        now = self.clock()
        latency = now - attempt.started
        lane.breaker.on_success()
        lane.answered = True
        tally.answered += 1
        self.last_success = now
        lane.workers.on_success(latency, work_units(answer.prompt_tokens, answer.completion_tokens))
        assert job.prepared is not None
        lane.pace.observe(latency, job.prepared.prompt_tokens, answer.completion_tokens)
        tally.hedges_won += attempt.hedge
        tally.prompt_tokens += answer.prompt_tokens
        tally.completion_tokens += answer.completion_tokens
        if isinstance(answer, Notes):
            tally.parts += 1
            self._noted(job, answer)
            return False
        summary = answer
        tally.hit_max_tokens += summary.finish_reason == "length"
        gathering = job.gathering
        if gathering is not None:
            # The page's figures count the whole document: its parts' requests too.
            summary = replace(
                summary,
                prompt_tokens=summary.prompt_tokens + gathering.prompt_tokens,
                completion_tokens=summary.completion_tokens + gathering.completion_tokens,
                requests=summary.requests + gathering.requests,
            )
        job.answered_by.add(lane.order)
        recorded = await self.work.record(job, lane, summary)
        if recorded.judging is not None:
            self.hooks.offer_judging(recorded.judging)
        if job.second_opinion:
            self._second_opinion_answered(job, lane, recorded)
            return True
        tally.docs += 1
        job.writer = lane
        self.opinions.first_answer(lane.order, flagged=bool(recorded.flags))
        if recorded.flags and self.ask_another(job, recorded.flags):
            return False  # prepared is kept: the same request, another model
        job.prepared = None
        return False

    def _second_opinion_answered(self, job: Job, lane: Lane, recorded: Recorded) -> None:
        """Count and learn from a second opinion; a kept one's model wrote the page now."""
        job.prepared = None
        writer = job.writer.order if job.writer is not None else None
        self.opinions.settled(
            job.flags, lane.order, kept=recorded.kept, fixed=recorded.fixed, writer=writer
        )
        lane.tally.second_opinions += 1
        if recorded.kept:
            lane.tally.second_opinions_kept += 1
            if job.writer is not None:
                job.writer.tally.docs -= 1
            lane.tally.docs += 1
            job.writer = lane

    def ask_another(self, job: Job, flags: tuple[str, ...]) -> bool:
        """Send a flagged answer's document back for a second opinion, unless no model may give
        one or the run has learned it would not help (counted as skipped, with why)."""
        others = [lane.order for lane in self.lanes if self._could_give(job, lane)]
        if not others:
            if len(self.lanes) > 1:
                self.opinions.skip(OUT_OF_SERVICE)  # (a one-model fleet has nobody to ask)
            return False
        why = self.opinions.refusal(flags, others)
        if why is not None:
            self.opinions.skip(why)
            return False
        job.flags = flags
        self.opinions.ask()
        self.queue.ask_another(job)
        self.tally.second_opinions += 1
        return True

    def _noted(self, job: Job, notes: Notes) -> None:
        """A part's notes: kept on its document, whose page is next once every part has them."""
        job.prepared = None
        assert job.part is not None
        document = job.part.document
        gathering = document.gathering
        if document.failed or gathering is None:
            return
        gathering.notes[job.part.index] = notes.text
        gathering.prompt_tokens += notes.prompt_tokens
        gathering.completion_tokens += notes.completion_tokens
        gathering.requests += notes.requests
        if gathering.complete():
            self.hooks.gathered(document)

    @staticmethod
    def _could_give(job: Job, lane: Lane) -> bool:
        """Whether ``lane`` could give ``job`` a second opinion: it has not answered it and is in
        service. (One sent to a model that then hangs or never answers holds nothing up: until
        its model has had a second opinion kept, the end of the run does not wait for it.)"""
        return job.may_take(lane.order) and not lane.breaker.tripped

    def _failed(self, attempt: Attempt, error: ModelError) -> None:
        """Apply the retry policy to a failed request: its document is failed, put back, or
        left to the request still out for it; when every model is down, the run stops."""
        job, lane = attempt.job, attempt.lane
        now = self.clock()
        gone = lane.gone() if lane.gone is not None and not lane.breaker.retired else None
        if gone is not None:
            # Its server died (the request failed because of it): the model leaves the run
            # now, named, instead of being probed as if it might come back.
            self.hooks.retire(lane, gone)
        retry.blame(attempt, error, now, self.log)
        if job.part is not None and job.part.document.failed:
            return  # its document failed already (another part's failure)
        all_down = retry.all_models_down(self.lanes, now, self.last_success, self.give_up_after_s)
        step = retry.next_step(job, error, all_down=all_down)
        if step == "drop":
            job.prepared = None
            self.opinions.skip(FAILED)
            if self.log is not None:
                self.log.info(f"second opinion on {job.doc.path} failed; its first answer stands")
        elif step == "fail":
            lane.tally.failed += 1
            job.prepared = None
            if job.part is not None:
                self._fail_document(job.part.document, str(error))
            else:
                self.work.fail(job, str(error))
        elif step != "wait":  # put back: to be tried again, or for the next run
            self.queue.put_back(job)
            if step == "retry":
                self.tally.requeued += 1
        if all_down:
            self.hooks.stop(retry.all_down_reason(self.lanes))

    def _fail_document(self, document: Job, reason: str) -> None:
        """A part failed for good: so does its document; its other parts still out stop."""
        if document.failed:
            return
        document.failed = True
        document.prepared = None
        self.work.fail(document, reason)
        for lane in self.lanes:
            for attempt in lane.attempts:
                part = attempt.job.part
                if part is not None and part.document is document and attempt.task is not None:
                    attempt.task.cancel()
