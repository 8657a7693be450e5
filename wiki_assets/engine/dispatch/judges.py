"""When the run's judges work: another model of the fleet checks a page's unchecked sentences,
on idle capacity. What a judge is asked, how its verdicts apply and when they hold are the
judge's room's (:mod:`wiki_assets.engine.verification`); this schedules its requests on the lanes.

A page whose prose the rules leave partly unchecked may be offered to a judge
(:class:`PageToJudge`): one request to a model other than its writer (or to the judge the
``judge`` dial names), holding all its unchecked sentences and a few controls whose answers are
known (:mod:`wiki_assets.engine.verification.request`). Like an optional second opinion
(:mod:`~.opinions`):

* it uses only capacity that would otherwise be idle: a worker judges only when it has no
  document, part, page or second opinion to start, and only while its model has no other
  request in flight; work that comes back meanwhile, or a request of its model, cancels it (the
  page waits again);
* a budget bounds it: ``judge_share`` of the run's documents;
* it never delays the end of the run: once every first answer is in, the run ends, the
  requests out are cancelled and the pages waiting stay as the rules left them;
* the run learns which judges hold, as they answer
  (:class:`~wiki_assets.engine.verification.standing.Standing`): a judge's verdicts are applied
  while it is trusted, and a judge found useless is asked no more.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.opinions import BUDGET, FAILED, RUN_DONE
from wiki_assets.engine.dispatch.queue import Job
from wiki_assets.engine.ending_tasks import cancel_and_wait
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.state.journal import Entry
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.engine.verification.request import JudgeRequest, page_request
from wiki_assets.engine.verification.standing import NOT_HOLDING, Holds, Standing

BACKLOG = 256  # pages waiting for a judge at most: the oldest is dropped (memory stays bounded)
BACKLOGGED = "backlog"  # dropped from a full backlog


@dataclass(eq=False, slots=True)
class PageToJudge:
    """One page waiting for a judge: the judge's request on its sentences, its document's text,
    its writer's place in the fleet, and what the run needs to apply the answer."""

    request: JudgeRequest
    text: str
    writer: int
    job: Job  # the document's
    entry: Entry | None  # the page's, as journaled (None: the simulation's, that applies nothing)
    offered: int = 0  # the run's count of pages offered when this one was: a later one supersedes

    @property
    def path(self) -> str:
        return self.job.doc.path

    @classmethod
    def offer(
        cls, entry: Entry, text: str, writer: int, job: Job, offered: int
    ) -> PageToJudge | None:
        """The page of ``entry`` (its document's ``text``) for a judge, when the rules left any
        of its sentences unchecked."""
        request = page_request(entry, text)
        return None if request is None else cls(request, text, writer, job, entry, offered)


# The run applies a judge's answer, and says why the page is flagged now where it would have
# another model look at it (flagged_pages 'retry'), as for a first answer.
Apply = Callable[[PageToJudge, Lane, Judgement, Holds], Awaitable[tuple[str, ...]]]


@dataclass
class JudgeQueue:
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
    waiting: deque[PageToJudge] = field(default_factory=deque)
    out: set[asyncio.Task[Judgement]] = field(default_factory=set)
    standings: dict[int, Standing] = field(default_factory=dict)  # per judge: its controls
    skipped: Counter[str] = field(default_factory=Counter)

    def offer(self, judging: PageToJudge) -> None:
        """A page with unchecked sentences: to be judged when a worker is idle, budget allowing."""
        if self.asked >= self.budget:
            self.skipped[BUDGET] += 1
            return
        self.asked += 1
        if len(self.waiting) >= BACKLOG:
            self.waiting.popleft()
            self.skipped[BACKLOGGED] += 1
        self.waiting.append(judging)

    def may_judge(self, lane: Lane, judging: PageToJudge) -> bool:
        if lane.order == judging.writer or self.useless(lane.order):
            return False
        return self.named is None or self.named in (lane.endpoint.name, lane.endpoint.model)

    def take(self, lane: Lane) -> PageToJudge | None:
        """The oldest waiting page ``lane`` may judge now (:meth:`available`), if any."""
        for judging in self.waiting:
            if self.available(lane, judging):
                self.waiting.remove(judging)
                return judging
        return None

    def available(self, lane: Lane, judging: PageToJudge) -> bool:
        """Whether ``lane`` may judge ``judging`` now: only while none of its model's requests
        is in flight (a judge's request beside them would take a share of the server they are
        using, and slow them)."""
        return not lane.attempts and self.may_judge(lane, judging)

    def _standing(self, order: int) -> Standing:
        return self.standings.setdefault(order, Standing())

    def useless(self, order: int) -> bool:
        return self._standing(order).useless()

    def learned(self, lane: Lane, answered: int, right: int) -> bool:
        """Count a judge's controls; whether its verdicts hold now (see the module docstring)."""
        lane.tally.controls += answered
        lane.tally.controls_right += right
        standing = self._standing(lane.order)
        standing.count(answered, right)
        return standing.trusted()

    async def judge(self, judging: PageToJudge, lane: Lane, preempted: Callable[[], bool]) -> None:
        """Send ``judging`` to ``lane``'s model and apply its answer (a page it flags anew may
        get a second opinion). Work for the worker that comes back meanwhile (``preempted``)
        cancels the request, and the page waits again at the front; a failed request leaves the
        page as the rules left it, and one cancelled as the run ends too."""
        if preempted():
            self.waiting.appendleft(judging)
            return
        lane.tally.requests += 1
        task = asyncio.create_task(lane.client.judge(judging.text, judging.request.sentences))
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
