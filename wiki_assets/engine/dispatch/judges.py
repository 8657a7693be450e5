"""Judges: another model of the fleet checks a page's unchecked sentences, on idle capacity.

A page whose prose the rules leave partly unchecked may be offered for judging
(:class:`Judging`): one request to a model other than its writer (or to the judge the
``judge`` dial names), holding all its unchecked sentences and a few controls whose answers are
known (:mod:`wiki_assets.engine.quality.judging`). Like an optional second opinion
(:mod:`~.opinions`):

* it uses only capacity that would otherwise be idle: a worker judges only when it has no
  document, part, page or second opinion to start, and only while its model has no other
  request in flight; work that comes back meanwhile, or a request of its model, cancels it (the
  page waits again);
* a budget bounds it: ``judge_share`` of the run's documents;
* it never delays the end of the run: once every first answer is in, the run ends, the
  requests out are cancelled and the pages waiting stay as the rules left them;
* the run learns which judges hold: per judge, Laplace's estimate of getting a control right.
  Its verdicts are applied while that estimate is at least :data:`TRUSTED`; a judge below
  :data:`USELESS` after :data:`EVIDENCE` controls is asked no more.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.opinions import BUDGET, FAILED, RUN_DONE, Tally
from wiki_assets.engine.dispatch.queue import Job
from wiki_assets.engine.ending_tasks import cancel_and_wait
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.prompting.results import Judgement

TRUSTED = 0.75  # a judge's estimated share of controls right, from which its verdicts apply
USELESS = 0.6  # below this after EVIDENCE controls, a judge is asked no more
EVIDENCE = 6  # controls answered before a judge can be found useless
BACKLOG = 256  # pages waiting for a judge at most: the oldest is dropped (memory stays bounded)
NOT_HOLDING = "judge_not_holding"  # every judge that could answer was found useless
BACKLOGGED = "backlog"  # dropped from a full backlog


@dataclass(eq=False, slots=True)
class Judging:
    """One page's sentences waiting for a judge: the document's text, the sentences to send,
    the writer's place in the fleet, and what the run needs to apply the answer."""

    path: str
    text: str
    sentences: tuple[str, ...]
    writer: int
    job: Job  # the document's
    payload: Any


# The run applies a judge's answer, and says why the page is flagged now where it would have
# another model look at it (flagged_pages 'retry'), as for a first answer.
Apply = Callable[[Judging, Lane, Judgement, Callable[[int, int], bool]], Awaitable[tuple[str, ...]]]


@dataclass
class Judges:
    """The run's pages waiting for a judge, its budget and what it learned of each judge."""

    apply: Apply  # the run applies an answer (Work.judged)
    retry: Callable[[Job, tuple[str, ...]], object]  # a second opinion on a page flagged anew
    budget: int  # judge_share of the run's documents
    named: str | None = None  # the judge the ``judge`` dial names (a model's name), if any
    # The dispatcher's wait (until a condition holds, the workers are woken, or the run ends)
    # and its wake-up call: a judge's request gives way to work that comes back meanwhile.
    wait: Callable[[Callable[[], bool]], Awaitable[None]] | None = None
    wake: Callable[[], None] = lambda: None
    asked: int = 0
    waiting: deque[Judging] = field(default_factory=deque)
    out: set[asyncio.Task[Judgement]] = field(default_factory=set)
    controls: dict[int, Tally] = field(default_factory=dict)  # per judge: controls right
    skipped: Counter[str] = field(default_factory=Counter)

    def offer(self, judging: Judging) -> None:
        """A page with unchecked sentences: to be judged when a worker is idle, budget allowing."""
        if self.asked >= self.budget:
            self.skipped[BUDGET] += 1
            return
        self.asked += 1
        if len(self.waiting) >= BACKLOG:
            self.waiting.popleft()
            self.skipped[BACKLOGGED] += 1
        self.waiting.append(judging)

    def may_judge(self, lane: Lane, judging: Judging) -> bool:
        if lane.order == judging.writer or self.useless(lane.order):
            return False
        return self.named is None or self.named in (lane.endpoint.name, lane.endpoint.model)

    def take(self, lane: Lane) -> Judging | None:
        """The oldest waiting page ``lane`` may judge now (:meth:`available`), if any."""
        for judging in self.waiting:
            if self.available(lane, judging):
                self.waiting.remove(judging)
                return judging
        return None

    def available(self, lane: Lane, judging: Judging) -> bool:
        """Whether ``lane`` may judge ``judging`` now: only while none of its model's requests
        is in flight (a judge's request beside them would take a share of the server they are
        using, and slow them)."""
        return not lane.attempts and self.may_judge(lane, judging)

    def _tally(self, order: int) -> Tally:
        return self.controls.setdefault(order, Tally())

    def useless(self, order: int) -> bool:
        tally = self._tally(order)
        return tally.answered >= EVIDENCE and tally.chance() < USELESS

    def learned(self, lane: Lane, answered: int, right: int) -> bool:
        """Count a judge's controls; whether its verdicts hold now (see the module docstring)."""
        lane.tally.controls += answered
        lane.tally.controls_right += right
        tally = self._tally(lane.order)
        tally.answered += answered
        tally.good += right
        return tally.chance() >= TRUSTED

    async def judge(self, judging: Judging, lane: Lane, preempted: Callable[[], bool]) -> None:
        """Send ``judging`` to ``lane``'s model and apply its answer (a page it flags anew may
        get a second opinion). Work for the worker that comes back meanwhile (``preempted``)
        cancels the request, and the page waits again at the front; a failed request leaves the
        page as the rules left it, and one cancelled as the run ends too."""
        if preempted():
            self.waiting.appendleft(judging)
            return
        lane.tally.requests += 1
        task = asyncio.create_task(lane.client.judge(judging.text, judging.sentences))
        task.add_done_callback(lambda _: self.wake())
        # Out until it has ended: one this worker could not wait for (cancelled again while it
        # waited) is waited for as the run ends (wait_out).
        self.out.add(task)
        task.add_done_callback(self.out.discard)
        try:
            if self.wait is not None:
                await self.wait(lambda: task.done() or preempted())
            await asyncio.wait((task,), timeout=None if self.wait is None else 0)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.wait((task,))
        if task.cancelled():
            lane.tally.cut += 1  # (not the judge's failure: the run ended, or work came back)
            if preempted():
                self.waiting.appendleft(judging)  # judged later, if the run goes on that long
            else:
                self.skipped[RUN_DONE] += 1
            return
        error = task.exception()
        if isinstance(error, ModelError):
            self.skipped[FAILED] += 1
            lane.tally.errors += 1
            return
        if error is not None:
            raise error
        judgement = task.result()
        lane.tally.answered += 1
        lane.tally.judgements += 1
        lane.tally.prompt_tokens += judgement.prompt_tokens
        lane.tally.completion_tokens += judgement.completion_tokens
        flags = await self.apply(judging, lane, judgement, lambda n, r: self.learned(lane, n, r))
        if flags and not judging.job.second_opinion:
            self.retry(judging.job, flags)

    async def wait_out(self) -> None:
        """Cancel the judges' requests still out and wait for them to end: none outlives the
        run."""
        await cancel_and_wait(self.out)

    def end(self, lanes: Sequence[Lane]) -> None:
        """The run ends: the requests out are cancelled and the pages waiting dropped; those no
        judge could take because every judge was found useless are counted so."""
        for task in self.out:
            task.cancel()
        for judging in self.waiting:
            able = [lane for lane in lanes if lane.order != judging.writer]
            useless = able and all(self.useless(lane.order) for lane in able)
            self.skipped[NOT_HOLDING if useless else RUN_DONE] += 1
        self.waiting.clear()
