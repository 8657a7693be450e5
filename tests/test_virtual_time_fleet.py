"""The fleet at its sum in the virtual-clock simulation, with second opinions and long documents'
parts on: the default ``retry`` costs nothing when second opinions do not help, a model whose
pages the others keep replacing stops taking documents, and a long document's parts spread over
every model."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from wiki_assets.engine.config import AUTO, Dials
from wiki_assets.simulator import SimModel
from wiki_assets.virtual_time import check, run
from wiki_assets.virtual_time.runner import Outcome
from wiki_assets.virtual_time.scenarios import ModelPlan, Scenario, part_budget, time_alone

# The fleet of the benchmark: a fast continuous-batching server and a slow one.
FAST = SimModel(model="fast", per_request_tps=500, aggregate_tps=6000, max_batch=24)
SLOW = SimModel(model="slow", per_request_tps=250, aggregate_tps=1000, max_batch=6)


def documents(count: int, seed: int = 0) -> tuple[int, ...]:
    """Prompt tokens of ``count`` documents: mostly a page or two, some long (in parts)."""
    rng = random.Random(seed)
    return tuple(
        rng.randint(8_000, 60_000) if rng.random() < 0.03 else rng.randint(300, 3000)
        for _ in range(count)
    )


def fleet(workers: object, flag_rate: tuple[float, float]) -> tuple[ModelPlan, ...]:
    return tuple(
        ModelPlan(
            sim=sim,
            workers=workers,  # type: ignore[arg-type]
            timeout_s=120.0,
            max_retries=1,
            context_tokens=8192,
            noise=0.1,
            flag_rate=rate,
            flaw="prompt_echo",
        )
        for sim, rate in zip((FAST, SLOW), flag_rate, strict=True)
    )


def simulate(models: tuple[ModelPlan, ...], flagged_pages: str, docs: int = 300) -> Outcome:
    dials = Dials(
        workers_per_model=models[0].workers,  # type: ignore[arg-type]
        max_workers=24,
        claim_size=32,
        flush_seconds=5,
        max_tokens=200,
        flagged_pages=flagged_pages,  # type: ignore[arg-type]
    )
    outcome = run(Scenario(0, models, documents(docs), dials))
    assert check(outcome) == []
    return outcome


@pytest.mark.parametrize("workers", [4, AUTO])
def test_retry_is_no_slower_than_keep_when_every_page_is_flagged(workers: object) -> None:
    # Both models' pages are flagged, and neither's second opinion ranks better: retrying gains
    # nothing, so it must cost (almost) nothing.
    models = fleet(workers, (1.0, 1.0))
    keep = simulate(models, "keep")
    retry = simulate(models, "retry")
    assert retry.report.second_opinions_kept == 0
    assert retry.makespan_s <= 1.05 * keep.makespan_s, (retry.makespan_s, keep.makespan_s)
    # The run learned they do not help and stopped asking.
    skipped = retry.report.tally.second_opinions_skipped
    assert skipped.get("model_not_kept", 0) + skipped.get("reason_not_fixed", 0) > 0, skipped
    # Each model alone, for scale: the fleet with retry beats the faster one alone.
    fast_alone = simulate(fleet(workers, (1.0, 1.0))[:1], "keep")
    assert retry.makespan_s < fast_alone.makespan_s


def test_a_model_whose_pages_the_other_keeps_replacing_stops_taking_documents() -> None:
    # The fast model's pages are all flagged; the slow model's answers are not, and are kept in
    # their place. Once that is known, new documents go to the slow model only (each would cost
    # two requests and the fast model's answer would be thrown away) while the budget lasts.
    models = fleet(4, (1.0, 0.0))
    outcome = simulate(models, "retry", docs=60)
    fast, slow = outcome.report.models
    assert fast.tally.superseded and not slow.tally.superseded
    assert outcome.report.second_opinions_kept == outcome.report.tally.second_opinions > 0
    assert fast.tally.docs == 0 and slow.tally.docs == 60 - len(outcome.failures)
    assert fast.checked < 30, "it stopped taking documents once its pages kept being replaced"


def test_a_fourteen_part_document_is_spread_over_a_fleet_of_two() -> None:
    models = tuple(replace(plan, context_tokens=2048, noise=0.0) for plan in fleet(4, (0.0, 0.0)))
    dials = Dials(workers_per_model=4, claim_size=8, max_tokens=200)
    budget = part_budget(Scenario(0, models, (1,), dials))
    tokens = 14 * budget + 200  # 14 parts
    outcome = run(Scenario(0, models, (tokens,), dials))
    assert check(outcome) == []
    fast, slow = outcome.report.models
    assert fast.tally.parts > 0 and slow.tally.parts > 0, "both models took notes on parts"
    assert fast.tally.parts + slow.tally.parts >= 14
    # About the time of its parts side by side (plus its page), not of 14 requests in a row.
    one_after_another = time_alone(models[0], tokens, dials.max_tokens, budget).total_s
    assert outcome.makespan_s <= 1.1 * outcome.ideal_s
    assert outcome.makespan_s < one_after_another / 3
