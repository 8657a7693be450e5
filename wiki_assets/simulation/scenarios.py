"""Seeded scenarios for the dispatcher, run in virtual time, and the properties every one must keep.

A scenario is a fleet of simulated models (speed, batch limit, latency noise, faults, outages), a
set of documents from tiny to many-part long ones and bad inputs, and the dials. :func:`run`
drives the real :class:`~wiki_assets.engine.dispatch.Dispatcher` (queue, workers, concurrency
limits, the end-of-run rule, hedges, breaker and retry policy) over it on a virtual clock, while a
monitor watches for an idle model next to a document it would finish first. :func:`check` lists
what went wrong; an empty list is a pass. ``python -m wiki_assets.simulation --seed N`` reproduces
one scenario.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from wiki_assets.engine.client import PROMPT_OVERHEAD_TOKENS, Summary
from wiki_assets.engine.config import AUTO, Dials, Endpoint, Workers
from wiki_assets.engine.corpus import DocumentError, SourceDocument
from wiki_assets.engine.dispatch import (
    Dispatcher,
    Job,
    Lane,
    Prepared,
    concurrency_for,
)
from wiki_assets.engine.dispatch.workers import HEDGE_BLIND_S
from wiki_assets.engine.report import IngestReport, ModelStats
from wiki_assets.simulation.clock import Stuck, run_virtual
from wiki_assets.simulation.models import Outage, VirtualModel
from wiki_assets.simulator import SimModel

MONITOR_EVERY_S = 0.1  # how often the idle-model watch looks, in virtual seconds
IDLE_GRACE_S = 0.5  # longer than this next to a document it would finish first is idling
# Fault-free, the makespan stays within 1.5 x the ideal plus the price of not knowing the models
# at the start: before a model has answered, nothing tells that it is slow, so it may take the
# longest document (the bound allows that document on the slowest model, plus the time an idle
# model waits before racing a request it knows nothing of).
MAKESPAN_BOUND = 1.5
DEADLINE_FACTOR = 50.0  # a run past this many ideal makespans (plus the timeouts) is hung


@dataclass(frozen=True)
class ModelPlan:
    sim: SimModel
    workers: Workers
    timeout_s: float
    max_retries: int
    context_tokens: int
    noise: float
    outages: tuple[Outage, ...] = ()

    @property
    def faulty(self) -> bool:
        sim = self.sim
        rates = (sim.error_rate, sim.rate_limit_rate, sim.hang_rate, sim.garbage_rate)
        return bool(self.outages) or any(rates)


@dataclass(frozen=True)
class Scenario:
    seed: int
    models: tuple[ModelPlan, ...]
    tokens: tuple[int, ...]  # prompt tokens per document; 0 is a bad input
    dials: Dials

    @property
    def faulty(self) -> bool:
        return any(model.faulty for model in self.models)

    @property
    def clean(self) -> bool:
        """No faults, and no request that runs into its model's timeout even alone (then the
        makespan is held to its bound)."""
        return not self.faulty and all(
            _alone(plan, tokens, self.dials.max_tokens)[0] < plan.timeout_s / 2
            for plan in self.models
            for tokens in self.tokens
            if tokens
        )

    def describe(self) -> str:
        kinds = ", ".join(
            f"{m.sim.model}[{m.sim.per_request_tps:.0f}/{m.sim.aggregate_tps:.0f} tps, "
            f"batch {m.sim.max_batch}, W={m.workers}{', faults' if m.faulty else ''}]"
            for m in self.models
        )
        longest = max(self.tokens, default=0)
        return (
            f"seed {self.seed}: {len(self.tokens)} docs (longest {longest} tokens), "
            f"claim {self.dials.claim_size}, {kinds}"
        )


def _model(rng: random.Random, index: int, faults: bool) -> ModelPlan:
    per_request = rng.choice([60.0, 150.0, 400.0, 1000.0, 3000.0]) * rng.uniform(0.7, 1.3)
    batch = rng.choice([1, 2, 4, 8, 16, 32])
    sim = SimModel(
        model=f"m{index}",
        per_request_tps=per_request,
        aggregate_tps=per_request * rng.uniform(1.0, batch),
        max_batch=batch,
        latency_s=rng.choice([0.0, 0.02, 0.2]),
        output_ratio=0.15,
        min_output_tokens=16,
    )
    outages: tuple[Outage, ...] = ()
    if faults:
        sim = replace(
            sim,
            error_rate=rng.choice([0.0, 0.05, 0.2]),
            rate_limit_rate=rng.choice([0.0, 0.05, 0.2]),
            retry_after_s=rng.choice([0.5, 2.0]),
            hang_rate=rng.choice([0.0, 0.02, 0.05]),
            garbage_rate=rng.choice([0.0, 0.05]),
        )
        if rng.random() < 0.4:
            seconds = math.inf if rng.random() < 0.3 else rng.uniform(1.0, 90.0)
            outages = (Outage(rng.uniform(0.0, 30.0), seconds),)
    workers: Workers = AUTO if rng.random() < 0.3 else rng.choice([1, 2, 4, 8])
    return ModelPlan(
        sim=sim,
        workers=workers,
        timeout_s=rng.choice([10.0, 30.0, 120.0]),
        max_retries=rng.choice([0, 1, 2]),
        context_tokens=rng.choice([4096, 8192, 32768]),
        noise=rng.choice([0.0, 0.1, 0.5]),
        outages=outages,
    )


def _tokens(rng: random.Random) -> int:
    kind = rng.random()
    if kind < 0.05:
        return 0  # a bad input (unreadable, binary, too large)
    if kind < 0.15:
        return rng.randint(170, 200)  # a one-line note
    if kind < 0.95:
        return rng.randint(300, 3000)
    return rng.randint(8_000, 120_000)  # a long changelog: summarized in parts


def generate(seed: int, max_docs: int = 80) -> Scenario:
    """The scenario of ``seed``: always the same one."""
    rng = random.Random(seed)
    faults = rng.random() < 0.5
    models = tuple(_model(rng, index, faults) for index in range(rng.randint(1, 4)))
    docs = rng.choice([1, 2, 5, rng.randint(1, max_docs), max_docs])
    dials = Dials(
        workers_per_model=4,
        claim_size=rng.choice([1, 2, 8, 32, 64]),
        max_tokens=rng.choice([64, 200]),
        max_workers=rng.choice([8, 32]),
        give_up_after_s=rng.choice([5.0, 30.0]),
    )
    tokens = tuple(_tokens(rng) for _ in range(docs))
    if faults and len(models) > 1 and rng.random() < 0.5:
        models = _beside_a_healthy_model(rng, models)
    return Scenario(seed, models, tokens, dials)


def _beside_a_healthy_model(
    rng: random.Random, models: tuple[ModelPlan, ...]
) -> tuple[ModelPlan, ...]:
    """The common fleet: one reliable model (the local server) beside faulty ones whose requests
    sometimes hang, one of them perhaps dead from the start."""
    healthy = rng.randrange(len(models))
    changed = []
    for index, plan in enumerate(models):
        sim = plan.sim
        if index == healthy:
            sim = replace(sim, error_rate=0.0, rate_limit_rate=0.0, hang_rate=0.0, garbage_rate=0.0)
            plan = replace(plan, sim=sim, outages=())
        else:
            sim = replace(sim, hang_rate=rng.choice([0.05, 0.2, 1.0]))
            dead = (Outage(0.0, math.inf),) if rng.random() < 0.3 else plan.outages
            plan = replace(plan, sim=sim, outages=dead)
        changed.append(plan)
    return tuple(changed)


# --------------------------------------------------------------------------------------------------
# Running one


@dataclass
class Outcome:
    scenario: Scenario
    report: IngestReport
    makespan_s: float = 0.0
    answers: dict[str, list[str]] = field(default_factory=dict)  # document -> models recorded
    failures: dict[str, str] = field(default_factory=dict)  # document -> reason
    unfinished: int = 0
    idle_violations: list[str] = field(default_factory=list)
    overlapping: dict[str, int] = field(default_factory=dict)  # document -> most races by one model
    stuck: str | None = None  # why the run did not end
    ideal_s: float = 0.0
    blind_s: float = 0.0  # the longest document on the slowest model
    hang_free_s: float | None = None  # the run must end before this, though requests hang


class _Work:
    """The dispatcher's Work for a simulation: bad inputs fail, answers are counted."""

    def __init__(self, tokens: dict[str, int], outcome: Outcome) -> None:
        self.tokens = tokens
        self.outcome = outcome

    async def prepare(self, job: Job) -> Prepared:
        tokens = self.tokens[job.doc.path]
        if tokens == 0:
            raise DocumentError("not a text document (simulated bad input)")
        return Prepared(job.doc.path, "", "English", tokens, [])

    async def record(self, job: Job, lane: Lane, summary: Summary) -> None:
        self.outcome.answers.setdefault(job.doc.path, []).append(lane.stats.name)
        self.outcome.report.count += 1
        await asyncio.sleep(0.0005)  # the journal's group commit

    def fail(self, job: Job, reason: str) -> None:
        self.outcome.failures[job.doc.path] = reason
        self.outcome.report.failed.append({"path": job.doc.path, "reason": reason})

    def held_back(self) -> bool:
        return False


def _ideal(scenario: Scenario, models: Sequence[ModelPlan] | None = None) -> tuple[float, float]:
    """(lower bound of the makespan, time of the longest document on the slowest model) for a
    fault-free fleet of ``models`` (the scenario's by default) at the configured concurrency. No
    run beats any of: all the work at the fleet's full rate; every document's time alone on its
    fastest model, spread over every worker of the fleet; the longest document alone."""
    dials = scenario.dials
    models = scenario.models if models is None else models
    capacity = 0.0
    workers = 0
    for plan in models:
        sim = plan.sim
        concurrency = dials.max_workers if plan.workers == AUTO else int(plan.workers)
        workers += concurrency
        capacity += min(sim.aggregate_tps, sim.per_request_tps * min(sim.max_batch, concurrency))
    work = busy = longest = blind = 0.0
    for tokens in scenario.tokens:
        if tokens == 0:
            continue
        alone = [_alone(plan, tokens, dials.max_tokens) for plan in models]
        fastest = min(seconds for seconds, _ in alone)
        longest = max(longest, fastest)
        blind = max(blind, max(seconds for seconds, _ in alone))
        busy += fastest
        work += min(units for _, units in alone)
    spread = busy / workers if workers else 0.0
    return max(work / capacity if capacity else 0.0, spread, longest), blind


def _hang_free_s(scenario: Scenario) -> float | None:
    """How soon the run must end although some requests hang: when fault-free models alone
    would finish every document well before the shortest timeout of a model that hangs, the
    run ends before that timeout (a hung request is raced at the tail, never waited out).
    None when the scenario gives no such promise."""
    hanging = [plan.timeout_s for plan in scenario.models if plan.sim.hang_rate > 0]
    healthy = [plan for plan in scenario.models if not plan.faulty]
    if not hanging or not healthy or not any(scenario.tokens):
        return None
    ideal, blind = _ideal(scenario, healthy)
    _, slowest = _ideal(scenario)  # an unknown model may hold the longest document at first
    # Faster than the healthy models alone, plus the wait before a race (the hanging model's
    # own tail time for its longest document at most), must leave a wide margin to the timeout.
    promised = MAKESPAN_BOUND * ideal + blind + 2 * slowest + HEDGE_BLIND_S
    return min(hanging) if promised < min(hanging) / 2 else None


def _alone(plan: ModelPlan, tokens: int, max_tokens: int) -> tuple[float, float]:
    """(seconds, work units) of a document on a model with nothing else running: its parts'
    requests and then the page's, as :class:`VirtualModel` sends them."""
    sim = plan.sim
    budget = max(64, plan.context_tokens - max_tokens - PROMPT_OVERHEAD_TOKENS)
    body = tokens - PROMPT_OVERHEAD_TOKENS
    parts = max(1, math.ceil(body / budget))
    prompts = [min(budget, body) + PROMPT_OVERHEAD_TOKENS] * parts if parts > 1 else []
    page = min(budget, parts * max_tokens) if parts > 1 else body
    prompts.append(page + PROMPT_OVERHEAD_TOKENS)
    seconds = units = 0.0
    for prompt in prompts:
        out, _ = sim.output_tokens(prompt, max_tokens)
        seconds += sim.latency_s + sim.work(prompt, out) / sim.per_request_tps
        units += sim.work(prompt, out)
    return seconds, units


def run(scenario: Scenario) -> Outcome:
    """Drive the real dispatcher over ``scenario`` in virtual time."""
    dials = scenario.dials
    report = IngestReport(collections=["sim"], dials=dials, models=[])
    outcome = Outcome(scenario, report)
    outcome.ideal_s, outcome.blind_s = _ideal(scenario)
    outcome.hang_free_s = _hang_free_s(scenario)
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
        concurrency = concurrency_for(endpoint, dials)
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
        client.on_overload = concurrency.on_overload
        stats = ModelStats(endpoint.name, endpoint.model, concurrency.limit, concurrency.auto)
        report.models.append(stats)
        lanes.append(Lane(order, endpoint, client, concurrency, stats))
        clients.append(client)
    jobs = (Job(SourceDocument(path, "sim", t, "h"), path) for path, t in tokens.items())
    dispatcher = Dispatcher(
        lanes,
        jobs,
        _Work(tokens, outcome),
        report,
        claim_size=dials.claim_size,
        give_up_after_s=dials.give_up_after_s,
        expected=lambda: len(tokens),
    )
    slowest_timeout = max(p.timeout_s * (p.max_retries + 1) for p in scenario.models)
    deadline = DEADLINE_FACTOR * outcome.ideal_s + 20 * slowest_timeout + 600.0

    async def main() -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        watch = asyncio.create_task(_watch_idle(dispatcher, outcome))
        try:
            async with asyncio.timeout(deadline):
                await dispatcher.run()
        except TimeoutError:
            outcome.stuck = f"still running after {deadline:.0f} virtual seconds"
        finally:
            watch.cancel()
            outcome.makespan_s = loop.time() - start

    try:
        run_virtual(main())
    except Stuck as error:
        outcome.stuck = str(error)
    outcome.unfinished = dispatcher.queue.remaining()
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
            for job in list(dispatcher.queue._returned)[:50]:
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
                if len(lane.attempts) >= lane.concurrency.limit:
                    continue  # its model has no free worker: nobody idles
                key = (id(job), lane.order)
                seen.add(key)
                since = idle_since.setdefault(key, now)
                if now - since > IDLE_GRACE_S:
                    outcome.idle_violations.append(
                        f"t={now:.2f}: {lane.stats.name} idle for {now - since:.2f} s next to "
                        f"{job.doc.path}, which it would finish first"
                    )
                    idle_since[key] = now
        for key in list(idle_since):
            if key not in seen:
                del idle_since[key]


# --------------------------------------------------------------------------------------------------
# What must hold


def check(outcome: Outcome) -> list[str]:
    """Every property the scenario broke (empty: it passed)."""
    scenario, report = outcome.scenario, outcome.report
    problems: list[str] = []
    if outcome.stuck:
        problems.append(f"the run did not end: {outcome.stuck}")
    paths = [f"d{index:04}.md" for index in range(len(scenario.tokens))]
    every_model_down = (report.stopped or "").startswith("every model is down")
    accounted = 0
    for path in paths:
        answers = outcome.answers.get(path, [])
        if len(answers) > 1:
            problems.append(f"{path} recorded {len(answers)} times ({', '.join(answers)})")
        if answers and path in outcome.failures:
            problems.append(f"{path} both done and failed")
        if path in outcome.failures and not outcome.failures[path]:
            problems.append(f"{path} failed without a reason")
        accounted += bool(answers) or path in outcome.failures
    left = len(paths) - accounted
    if left and not every_model_down and not outcome.stuck:
        problems.append(f"{left} documents neither done nor failed, yet not every model is down")
    if left != outcome.unfinished and not outcome.stuck:
        problems.append(f"{left} documents unaccounted, but {outcome.unfinished} reported left")
    if report.stopped and not every_model_down:
        problems.append(f"stopped: {report.stopped}")
    problems.extend(outcome.idle_violations[:3])
    for path, raced in outcome.overlapping.items():
        if raced > 1:
            problems.append(f"{path} raced {raced} times by one model (each races it at most once)")
    if report.hedged > len(paths) * len(scenario.models):
        problems.append(f"{report.hedged} hedges for {len(paths)} documents")
    if outcome.hang_free_s is not None and not outcome.stuck:
        if outcome.makespan_s >= outcome.hang_free_s:
            problems.append(
                f"makespan {outcome.makespan_s:.2f} s reached a hanging model's timeout "
                f"({outcome.hang_free_s:.0f} s) although fault-free models alone would finish "
                f"well before it: a hung request was waited out"
            )
    if scenario.clean and not outcome.stuck:
        bound = MAKESPAN_BOUND * outcome.ideal_s + outcome.blind_s + HEDGE_BLIND_S
        if outcome.makespan_s > bound + 1e-6:
            problems.append(
                f"makespan {outcome.makespan_s:.2f} s is over the bound {bound:.2f} s "
                f"(ideal {outcome.ideal_s:.2f} s, longest document on the slowest model "
                f"{outcome.blind_s:.2f} s)"
            )
    return problems


def reproduce(seed: int) -> str:
    """The one line that runs a seed again."""
    return f"python -m wiki_assets.simulation --seed {seed}"
