"""Running one scenario: the real dispatcher over simulated models, in virtual time.

:func:`run` drives the real :class:`~wiki_assets.engine.dispatch.Dispatcher` (queue, workers,
worker limits, the end-of-run rule, hedges, breaker and retry policy) over a
:class:`~wiki_assets.virtual_time.scenarios.Scenario` on a virtual clock, while a monitor watches
for an idle model next to a document it would finish first, and returns what happened as an
:class:`Outcome` for :func:`~wiki_assets.virtual_time.properties.check`.
"""

from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass, field, replace
from typing import Any

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.dispatch import (
    Dispatcher,
    Job,
    Lane,
    PageToJudge,
    Prepared,
    Recorded,
    workers_for,
)
from wiki_assets.engine.documents.corpus import DocumentError, SourceDocument
from wiki_assets.engine.ending_tasks import cancel_and_wait
from wiki_assets.engine.ingestion.model_stats import ModelStats
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.prompting.budget import (
    PROMPT_OVERHEAD_TOKENS,
    estimate_tokens,
    join_notes,
    split_to_budget,
)
from wiki_assets.engine.prompting.results import Summary
from wiki_assets.engine.verification.request import JudgeRequest
from wiki_assets.virtual_time.clock import Stuck, run_virtual
from wiki_assets.virtual_time.models import VirtualModel, simulated_text
from wiki_assets.virtual_time.scenarios import Scenario, hang_free_s, ideal_makespan, part_budget

MONITOR_EVERY_S = 0.1  # how often the idle-model watch looks, in virtual seconds
IDLE_GRACE_S = 0.5  # longer than this next to a document it would finish first is idling
DEADLINE_FACTOR = 50.0  # a run past this many ideal makespans (plus the timeouts) is hung
# The request each page leaves to a judge, where the fleet has one (:meth:`_Work.record`).
ONE_SENTENCE = JudgeRequest(("a sentence",), targets=(0,), truths=(None,))


@dataclass
class Outcome:
    scenario: Scenario
    report: IngestReport
    makespan_s: float = 0.0
    answers: dict[str, list[str]] = field(default_factory=dict)  # document -> models recorded
    failures: dict[str, str] = field(default_factory=dict)  # document -> reason
    unfinished: int = 0
    jobs: int = 0  # documents and long documents' parts
    second_opinions: dict[str, list[str]] = field(default_factory=dict)  # document -> models
    fixed: dict[str, str] = field(default_factory=dict)  # document -> model kept in its place
    first_answers_at: float = 0.0  # when the last first answer was recorded (or document failed)
    idle_violations: list[str] = field(default_factory=list)
    overlapping: dict[str, int] = field(default_factory=dict)  # document -> most races by one model
    stuck: str | None = None  # why the run did not end
    ideal_s: float = 0.0
    blind_s: float = 0.0  # the longest document on the slowest model
    hang_free_s: float | None = None  # the run must end before this, though requests hang
    judged: int = 0  # pages a judge answered on (judges only use idle workers)


class _Work:
    """The dispatcher's Work for a simulation: bad inputs fail, long documents come in parts as
    the run's do (split by the fleet's smallest context), answers are counted."""

    def __init__(self, tokens: dict[str, int], outcome: Outcome, part_budget: int) -> None:
        self.tokens = tokens
        self.outcome = outcome
        self.part_budget = part_budget

    async def prepare(self, job: Job) -> Prepared:
        tokens = self.tokens[job.doc.path]
        if tokens == 0:
            raise DocumentError("not a text document (simulated bad input)")
        body = tokens - PROMPT_OVERHEAD_TOKENS
        if body <= self.part_budget:
            return Prepared(job.doc.path, "", "English", tokens, [])
        count = math.ceil(body / self.part_budget)
        part = self._part(min(self.part_budget, body))
        return Prepared(job.doc.path, "", "English", tokens, [], parts=count, split=(part,) * count)

    def gathered(self, job: Job, notes: list[str]) -> Prepared:
        prepared = job.prepared
        assert prepared is not None
        joined = join_notes(notes)
        tokens = estimate_tokens(joined)
        if tokens > self.part_budget and len(notes) > 1:
            parts = split_to_budget(joined, self.part_budget)
            split = tuple(self._part(estimate_tokens(part)) for part in parts)
            return replace(prepared, split=split)
        return replace(
            prepared, notes=joined, split=(), prompt_tokens=tokens + PROMPT_OVERHEAD_TOKENS
        )

    @staticmethod
    def _part(tokens: int) -> Prepared:
        return Prepared("", simulated_text(tokens), "English", tokens + PROMPT_OVERHEAD_TOKENS, [])

    async def record(self, job: Job, lane: Lane, summary: Summary) -> Recorded:
        """Like the run's pages: the model's answer is flagged at its model's rate (the same for
        a document every time); a second opinion is kept when it is not flagged."""
        await asyncio.sleep(0.0005)  # the journal's group commit
        path = job.doc.path
        plan = self.outcome.scenario.models[lane.order]
        flagged = random.Random(f"{path}/{lane.order}").random() < plan.flag_rate
        self.outcome.report.models[lane.order].judged(0, 0, (plan.flaw,) if flagged else ())
        if job.second_opinion:
            self.outcome.second_opinions.setdefault(path, []).append(lane.endpoint.name)
            if flagged:
                return Recorded()
            self.outcome.fixed[path] = lane.endpoint.name
            return Recorded(kept=True, fixed=job.flags)
        self.outcome.answers.setdefault(path, []).append(lane.endpoint.name)
        self.outcome.report.count += 1
        self.outcome.first_answers_at = asyncio.get_running_loop().time()
        retry = self.outcome.scenario.dials.flagged_pages == "retry"
        # Every page leaves a sentence for a judge, where the fleet has one (a judge's request
        # takes a page's time on the judging model, and finds nothing).
        judging = None
        if self.outcome.scenario.dials.judge_share and len(self.outcome.scenario.models) > 1:
            judging = PageToJudge(ONE_SENTENCE, "", lane.order, job, None)
        return Recorded(flags=(plan.flaw,) if flagged and retry else (), judging=judging)

    def fail(self, job: Job, reason: str) -> None:
        self.outcome.first_answers_at = asyncio.get_running_loop().time()
        self.outcome.failures[job.doc.path] = reason
        self.outcome.report.failed.append({"path": job.doc.path, "reason": reason})

    def held_back(self) -> bool:
        return False

    async def judged(self, judging: Any, judge: Lane, judgement: Any, _: Any) -> tuple[str, ...]:
        """A judge's answer: counted (the simulation's judges settle nothing)."""
        self.outcome.judged += 1
        return ()


def run(scenario: Scenario) -> Outcome:
    """Drive the real dispatcher over ``scenario`` in virtual time."""
    dials = scenario.dials
    report = IngestReport(collections=["sim"], dials=dials, models=[])
    outcome = Outcome(scenario, report)
    outcome.ideal_s, outcome.blind_s = ideal_makespan(scenario)
    outcome.hang_free_s = hang_free_s(scenario)
    tokens = {f"d{index:04}.md": t for index, t in enumerate(scenario.tokens)}
    shared: dict[str, int] = {}
    lanes, clients = [], []
    for order, plan in enumerate(scenario.models):
        endpoint = Endpoint(
            name=plan.sim.model,
            # Never contacted (the model is virtual); .invalid is a name that can never resolve.
            base_url=f"http://{plan.sim.model}.invalid/v1",
            model=plan.sim.model,
            workers=plan.workers,
            timeout_s=plan.timeout_s,
            max_retries=plan.max_retries,
            context_tokens=plan.context_tokens,
        )
        workers = workers_for(endpoint, dials)
        client = VirtualModel(
            plan.sim,
            endpoint,
            dials.max_tokens,
            tokens.__getitem__,
            noise=plan.noise,
            outages=plan.outages,
            seed=scenario.seed * 31 + order,
            shared=shared,
        )
        client.on_overload = workers.on_overload
        lane = Lane(order, endpoint, client, workers)
        lanes.append(lane)
        report.models.append(
            ModelStats(endpoint.name, endpoint.model, workers.limit, workers.auto, lane.tally)
        )
        clients.append(client)
    jobs = (Job(SourceDocument(path, "sim", t, "h"), path) for path, t in tokens.items())
    dispatcher = Dispatcher(
        lanes,
        jobs,
        _Work(tokens, outcome, part_budget(scenario)),
        dials,
        expected=lambda: len(tokens),
        tally=report.tally,
    )
    slowest_timeout = max(p.timeout_s * (p.max_retries + 1) for p in scenario.models)
    deadline = DEADLINE_FACTOR * outcome.ideal_s + 20 * slowest_timeout + 600.0

    async def main() -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        outcome.first_answers_at = start
        watch = asyncio.create_task(_watch_idle(dispatcher, outcome))
        try:
            async with asyncio.timeout(deadline):
                await dispatcher.run()
        except TimeoutError:
            outcome.stuck = f"still running after {deadline:.0f} virtual seconds"
        finally:
            outcome.makespan_s = loop.time() - start
            outcome.first_answers_at -= start
            await cancel_and_wait([watch])  # the watch ends with the run, whichever way it ends

    try:
        run_virtual(main())
    except Stuck as error:
        outcome.stuck = str(error)
    outcome.unfinished = dispatcher.remaining()
    for lane, stats in zip(lanes, report.models, strict=True):
        stats.breaker_trips = lane.breaker.trips  # as the run takes it when it winds down
    superseded = {stats.name for stats in report.models if stats.tally.superseded}
    standing = [plan for plan in scenario.models if plan.sim.model not in superseded]
    if superseded and standing:
        # A model whose pages the others' second opinions kept replacing writes none: the fleet
        # that writes the pages is the one the makespan is bound by.
        outcome.ideal_s = ideal_makespan(scenario, standing)[0]
    outcome.jobs = len(tokens) + dispatcher.parts.added
    for client in clients:
        for path, count in client.traffic.overlapping.items():
            outcome.overlapping[path] = max(outcome.overlapping.get(path, 0), count)
    return outcome


async def _watch_idle(dispatcher: Dispatcher, outcome: Outcome) -> None:
    """Flags a model with a free worker next to a returned, unstarted document that it would
    finish first, for longer than a worker takes to look again."""
    loop = asyncio.get_running_loop()
    idle_since: dict[tuple[int, int], float] = {}
    while True:
        await asyncio.sleep(MONITOR_EVERY_S)
        now = loop.time()
        seen = set()
        if not dispatcher.finished:
            for job in [*dispatcher.queue._urgent, *dispatcher.queue._returned][:50]:
                if job.started or job.prepared is None:
                    continue
                tokens = job.prepared.prompt_tokens
                prospects = [
                    (p, lane)
                    for lane in dispatcher.lanes
                    if (p := lane.prospect(tokens, now)) is not None
                ]
                if not prospects:
                    continue
                best, lane = min(prospects, key=lambda item: (item[0].finish_s, item[0].order))
                if len(lane.attempts) >= lane.workers.limit or dispatcher.end.demoted(lane):
                    continue  # its model has no free worker, or takes no documents: no idling
                key = (id(job), lane.order)
                seen.add(key)
                since = idle_since.setdefault(key, now)
                if now - since > IDLE_GRACE_S:
                    outcome.idle_violations.append(
                        f"t={now:.2f}: {lane.endpoint.name} idle for {now - since:.2f} s next to "
                        f"{job.doc.path}, which it would finish first"
                    )
                    idle_since[key] = now
        for key in list(idle_since):
            if key not in seen:
                del idle_since[key]
