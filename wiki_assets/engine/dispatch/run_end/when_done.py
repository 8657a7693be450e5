"""When the run ends, and which second opinions it waits for (the rule:
:mod:`~wiki_assets.engine.dispatch.run_end`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.opinions import HUNG, RUN_DONE, SecondOpinions
from wiki_assets.engine.dispatch.parts import Parts
from wiki_assets.engine.dispatch.queue import Job, WorkQueue
from wiki_assets.engine.dispatch.run_end.late_requests import late_second_opinions


class RunEnd:
    """What the workers hold, and whether the run may end (see the package docstring)."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        queue: WorkQueue,
        opinions: SecondOpinions,
        parts: Parts,
        now: Callable[[], float],
    ) -> None:
        self.lanes = lanes
        self.queue = queue
        self.opinions = opinions
        self.parts = parts
        self.now = now
        self.holding = 0  # workers holding a job (preparing it or waiting for its answer)
        self.holding_second = 0  # of the workers holding a job, those holding a second opinion

    def demoted(self, lane: Lane) -> bool:
        """Whether ``lane`` takes no new documents: its answers are superseded (opinions.py) and
        a model whose answers are not is in service to take them. Once the run's second
        opinions are spent, its answers would stand: it takes documents again."""
        if self.opinions.spent() or not self.opinions.superseded(lane.order):
            return False
        return any(
            not other.breaker.tripped
            and other.pace.seconds_per_request is not None
            and not self.opinions.superseded(other.order)
            for other in self.lanes
        )

    def work_for(
        self, lane: Lane, second: Callable[[Job], bool] | None = None
    ) -> Callable[[], bool]:
        """Whether work ``lane`` may take came back: a document, part or page (unless it is
        demoted), or a second opinion ``second`` accepts (by default, one taken before new
        documents: opinions.py's likely ones)."""
        accepts = second or (lambda job: self.opinions.likely(job.flags, lane.order))
        return lambda: self.queue.has_work(lane.order, accepts, first_work=not self.demoted(lane))

    def judge_gives_way(self, lane: Lane) -> Callable[[], bool]:
        """When a judge's request on ``lane`` is cancelled: work for it came back, or another
        worker of its model sent a request (the judge would slow it: judges.py)."""
        work = self.work_for(lane)
        return lambda: work() or bool(lane.attempts)

    def may_give(self, job: Job, lane: Lane) -> bool:
        """Whether ``lane`` may give ``job`` (a second opinion) now."""
        return job.may_take(lane.order) and self.opinions.may_give(job.flags, lane.order)

    def give_up_late_second_opinions(self, lane: Lane) -> None:
        """Cancel the hung second opinions idle ``lane`` sees (their first answers stand)."""
        for attempt in late_second_opinions(self.lanes, lane, self.now()):
            if attempt.task is not None:
                attempt.job.given_up = attempt.job.given_up or HUNG
                attempt.task.cancel()

    def answered(self) -> bool:
        """Whether the run may end now: every document has its first answer (or failed) and
        the queue is dry. The second opinions not worth waiting for are given up then; True
        when none is left that is."""
        if not self.first_answers_in() or not self.queue.dry():
            return False
        self._end_second_opinions()
        return not self.waited_for()

    def first_answers_in(self) -> bool:
        """Every document has its first answer or failed: no job but second opinions is held,
        and the queue has none (a worker found nothing to claim)."""
        return self.parts.none_out() and self.holding == self.holding_second

    def waited_for(self) -> bool:
        """Whether a second opinion worth waiting for is out or waits for a model in service;
        the others are dropped."""
        in_service = [lane for lane in self.lanes if not lane.breaker.tripped]

        def worth(job: Job, order: int, sent: bool) -> bool:
            return self.opinions.worth_waiting(job.flags, order, sent=sent)

        waiting = any(
            job.may_take(lane.order) and worth(job, lane.order, False)
            for job in self.queue.waiting_second()
            for lane in in_service
        )
        out = any(
            attempt.job.second_opinion and worth(attempt.job, lane.order, True)
            for lane in self.lanes
            for attempt in lane.attempts
        )
        return waiting or out

    def _end_second_opinions(self) -> None:
        """The first answers are in: the second opinions not worth waiting for are given up,
        those still out cancelled (their first answers stand) and those waiting dropped."""
        for lane in self.lanes:
            for attempt in lane.attempts:
                job = attempt.job
                if not job.second_opinion or attempt.task is None or attempt.task.done():
                    continue
                if not self.opinions.worth_waiting(job.flags, lane.order, sent=True):
                    job.given_up = RUN_DONE
                    attempt.cut_short()
        in_service = [lane.order for lane in self.lanes if not lane.breaker.tripped]
        dropped = self.queue.abandon(
            lambda job: (
                not any(
                    job.may_take(order) and self.opinions.worth_waiting(job.flags, order)
                    for order in in_service
                )
            )
        )
        for _ in dropped:
            self.opinions.skip(RUN_DONE)
