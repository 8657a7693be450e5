"""Seeded scenarios for the dispatcher, and what each one promises.

A scenario is a fleet of simulated models (speed, batch limit, latency noise, faults, outages), a
set of documents from tiny to many-part long ones and bad inputs, and the dials; :func:`generate`
makes the one of a seed, always the same. What it promises follows from the scenario alone: a
lower bound of its makespan (:func:`ideal_makespan`) and, for a fleet whose faulty models hang
beside healthy ones, how soon it must end all the same (:func:`hang_free_s`). The runner is
:mod:`~wiki_assets.virtual_time.runner`, the properties :mod:`~wiki_assets.virtual_time.properties`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from wiki_assets.engine.config import AUTO, Dials, Workers
from wiki_assets.engine.dispatch.run_end.hedge_thresholds import HEDGE_BLIND_S
from wiki_assets.engine.prompting.budget import PROMPT_OVERHEAD_TOKENS
from wiki_assets.simulator import SimModel
from wiki_assets.virtual_time.models import Outage

# Fault-free, the makespan stays within 1.5 x the ideal plus the price of not knowing the models
# at the start: before a model has answered, nothing tells that it is slow, so it may take the
# longest document (the bound allows that document on the slowest model, plus the time an idle
# model waits before racing a request it knows nothing of).
MAKESPAN_BOUND = 1.5


@dataclass(frozen=True)
class ModelPlan:
    sim: SimModel
    workers: Workers
    timeout_s: float
    max_retries: int
    context_tokens: int
    noise: float
    outages: tuple[Outage, ...] = ()
    # The share of its answers the page checks flag, and the reason they give: with
    # flagged_pages 'retry', another model's unflagged answer is kept in their place.
    flag_rate: float = 0.0
    flaw: str = "unverified_points"

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
    def second_opinions(self) -> bool:
        """Whether flagged pages may be sent to another model."""
        return self.dials.flagged_pages == "retry" and len(self.models) > 1

    @property
    def clean(self) -> bool:
        """No faults, and no request that runs into its model's timeout even alone (then the
        makespan is held to its bound)."""
        budget = part_budget(self)
        return not self.faulty and all(
            time_alone(plan, tokens, self.dials.max_tokens, budget).longest_request_s
            < plan.timeout_s / 2
            for plan in self.models
            for tokens in self.tokens
            if tokens
        )

    def describe(self) -> str:
        kinds = ", ".join(
            f"{m.sim.model}[{m.sim.per_request_tps:.0f}/{m.sim.aggregate_tps:.0f} tps, "
            f"batch {m.sim.max_batch}, W={m.workers}{', faults' if m.faulty else ''}"
            f"{f', flags {m.flag_rate:.0%}' if self.second_opinions else ''}]"
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
    # Page checks and second opinions, from a generator of their own (the scenarios above stay
    # what they were): half the scenarios retry flagged pages, of models that flag none, some,
    # or all of their pages.
    quality = random.Random(seed * 7919 + 1)
    if quality.random() < 0.5:
        dials = replace(dials, flagged_pages="retry", second_opinion_share=quality.choice(
            [0.25, 1.0]))  # fmt: skip
        models = tuple(
            replace(
                plan,
                flag_rate=quality.choice([0.0, 0.3, 1.0]),
                flaw=quality.choice(["unverified_points", "prompt_echo"]),
            )
            for plan in models
        )
    else:
        dials = replace(dials, flagged_pages="keep")
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


def ideal_makespan(
    scenario: Scenario, models: Sequence[ModelPlan] | None = None
) -> tuple[float, float]:
    """(lower bound of the makespan, longest document's time on the slowest model) for a
    fault-free fleet of ``models`` (the scenario's by default) at the configured workers. No
    run beats any of: all the work at the fleet's full rate; every request's time alone on its
    fastest model, spread over every worker of the fleet; the longest document alone (its parts
    side by side, then its page)."""
    dials = scenario.dials
    models = scenario.models if models is None else models
    budget = part_budget(scenario)
    capacity = 0.0
    workers = 0
    for plan in models:
        sim = plan.sim
        most = dials.max_workers if plan.workers == AUTO else int(plan.workers)
        workers += most
        capacity += min(sim.aggregate_tps, sim.per_request_tps * min(sim.max_batch, most))
    work = busy = longest = blind = 0.0
    for tokens in scenario.tokens:
        if tokens == 0:
            continue
        alone = [time_alone(plan, tokens, dials.max_tokens, budget) for plan in models]
        longest = max(longest, min(each.critical_s for each in alone))
        blind = max(blind, max(each.critical_s for each in alone))
        busy += min(each.total_s for each in alone)
        work += min(each.units for each in alone)
    if scenario.second_opinions:
        # Second opinions the run waits for (those it learned are kept) are work too: at most
        # second_opinion_share of the documents, a page's request each.
        extra = 1.0 + dials.second_opinion_share
        work, busy = work * extra, busy * extra
    spread = busy / workers if workers else 0.0
    return max(work / capacity if capacity else 0.0, spread, longest), blind


def part_budget(scenario: Scenario) -> int:
    """Tokens of text in one part of a long document: one request of the fleet's smallest
    context, as the run splits them."""
    smallest = min(plan.context_tokens for plan in scenario.models)
    return max(64, smallest - scenario.dials.max_tokens - PROMPT_OVERHEAD_TOKENS)


def hang_free_s(scenario: Scenario) -> float | None:
    """How soon the run must end although some requests hang: when fault-free models alone
    would finish every document well before the shortest timeout of a model that hangs, the
    run ends before that timeout (a hung request is raced at the tail, never waited out).
    None when the scenario gives no such promise."""
    hanging = [plan.timeout_s for plan in scenario.models if plan.sim.hang_rate > 0]
    healthy = [plan for plan in scenario.models if not plan.faulty]
    if not hanging or not healthy or not any(scenario.tokens):
        return None
    ideal, blind = ideal_makespan(scenario, healthy)
    _, slowest = ideal_makespan(scenario)  # an unknown model may hold the longest document at first
    # Faster than the healthy models alone, plus the wait before a race (the hanging model's
    # own tail time for its longest document at most), must leave a wide margin to the timeout.
    promised = MAKESPAN_BOUND * ideal + blind + 2 * slowest + HEDGE_BLIND_S
    return min(hanging) if promised < min(hanging) / 2 else None


@dataclass(frozen=True)
class Alone:
    """A document's requests on one model with nothing else running."""

    critical_s: float  # its rounds one after another, each round's requests side by side
    total_s: float  # every request's time added up
    longest_request_s: float
    units: float  # work units of all its requests


def time_alone(plan: ModelPlan, tokens: int, max_tokens: int, budget: int) -> Alone:
    """A document on one model alone: a long one's parts (rounds of notes, ``budget`` tokens
    each, side by side), then its page, as the run asks for them."""
    sim = plan.sim
    rounds = []
    body = tokens - PROMPT_OVERHEAD_TOKENS
    while body > budget:
        count = math.ceil(body / budget)
        rounds.append([min(budget, body) + PROMPT_OVERHEAD_TOKENS] * count)
        out, _ = sim.output_tokens(rounds[-1][0], max_tokens)
        body = count * (out + 4)  # each part's notes, as "Part i: ..."
        if count == 1:
            break
    rounds.append([min(budget, body) + PROMPT_OVERHEAD_TOKENS])
    critical = total = longest = units = 0.0
    for prompts in rounds:
        slowest = 0.0
        for prompt in prompts:
            out, _ = sim.output_tokens(prompt, max_tokens)
            seconds = sim.latency_s + sim.work(prompt, out) / sim.per_request_tps
            slowest = max(slowest, seconds)
            total += seconds
            units += sim.work(prompt, out)
        critical += slowest
        longest = max(longest, slowest)
    return Alone(critical, total, longest, units)
