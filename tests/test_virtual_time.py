"""Deterministic simulation of the dispatcher: the real queue, workers, worker limits,
end-of-run rule, hedges, breaker and retry policy, over thousands of seeded scenarios (simulated
models with batching, noise, errors, 429s, hangs, garbage and outages; documents from one line to
many parts; claim sizes; fixed and automatic workers) on a virtual clock. Every scenario
ends; every document is done once, failed with a reason, or left only when every model is down;
no model idles next to a document it would finish first; a clean scenario's makespan stays
within its bound. A failing seed names the one line that reproduces it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence

import pytest

from wiki_assets.engine.dispatch import Attempt, Lane, Prospect
from wiki_assets.engine.dispatch.run_end import late_requests, who_starts
from wiki_assets.virtual_time import Stuck, check, generate, reproduce, run, run_virtual

SEEDS = range(3000)
DOCS = 40


def test_thousands_of_seeded_scenarios_keep_every_property() -> None:
    began = time.perf_counter()
    failures = []
    clean = hedged = only_cut = 0
    for seed in SEEDS:
        outcome = run(generate(seed, DOCS))
        clean += outcome.scenario.clean
        hedged += outcome.report.tally.hedged
        # A model whose only requests were cut as the run ended (second opinions, judgements
        # still out): check() holds it to "in service", as any model with no failed request.
        only_cut += sum(m.tally.requests == m.tally.cut > 0 for m in outcome.report.models)
        problems = check(outcome)
        if problems:
            failures.append(f"{problems[0]} · reproduce: {reproduce(seed)} --docs {DOCS}")
    print(
        f"{len(SEEDS)} scenarios ({clean} clean) in {time.perf_counter() - began:.1f} s, "
        f"{hedged} hedges, {only_cut} models whose only requests were cut at the end"
    )
    assert not failures, "\n".join(failures[:10])
    assert clean > len(SEEDS) // 5, "the sweep must hold many scenarios to the makespan bound"
    assert hedged > 0, "the sweep must exercise hedged requests"
    assert only_cut > 0, "the sweep must hold healthy models whose requests were all cut"


def test_a_scenario_is_the_same_every_time() -> None:
    first, second = run(generate(1234, DOCS)), run(generate(1234, DOCS))
    assert first.makespan_s == second.makespan_s
    assert first.answers == second.answers and first.failures == second.failures


def test_the_simulation_catches_the_old_livelock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule before: a model left a document when the others' *average* request time (not
    their time for this document) plus their backlog beat its own time. Both models then leave
    a long document to each other forever; the simulation must say so."""

    def old_rule(mine: Prospect, others: list[Prospect], unstarted_elsewhere: int) -> bool:
        rate = sum(p.docs_per_s for p in others)
        if not others or rate <= 0:
            return True
        average_request = min(1.0 / p.docs_per_s for p in others if p.docs_per_s > 0)
        return mine.finish_s <= (unstarted_elsewhere + 1) / rate + average_request

    monkeypatch.setattr(who_starts, "should_start", old_rule)
    stuck = next(
        (
            seed
            for seed in range(300)
            if any("did not end" in problem for problem in check(run(generate(seed, DOCS))))
        ),
        None,
    )
    assert stuck is not None, "no scenario showed the livelock of the old rule"


def test_the_virtual_clock_reports_a_deadlock_instead_of_hanging() -> None:
    async def waits_forever() -> None:
        await asyncio.Event().wait()

    with pytest.raises(Stuck, match="waits forever"):
        run_virtual(waits_forever())


def test_the_virtual_clock_reports_tasks_that_wake_each_other_forever() -> None:
    ended: list[float] = []

    async def ping_pong() -> None:
        try:
            while True:
                await asyncio.sleep(0)
        finally:
            ended.append(asyncio.get_running_loop().time())

    with pytest.raises(Stuck, match="livelock"):
        run_virtual(ping_pong())
    # Cancelled and ended while its loop still ran: not left pending, to be closed by the
    # garbage collector on a closed loop (an error nobody can see).
    assert ended == [0.0]


def test_an_hour_of_waiting_takes_no_time() -> None:
    async def an_hour() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(3600)
        return loop.time() - start

    assert run_virtual(an_hour()) == 3600


def test_the_simulation_catches_a_hung_request_waited_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hedge rule before: one race per document, by whichever idle model came first. When
    that race went to a model whose requests hang too, the healthy model could not race it any
    more and the run waited for the timeout; the simulation must say so."""

    def one_race_per_document(lanes: Sequence[Lane], lane: Lane) -> Iterator[Attempt]:
        for other in lanes:
            if other is lane:
                continue
            for attempt in other.attempts:
                job = attempt.job
                if not (job.raced_by or job.done or attempt.hedge or job.prepared is None):
                    yield attempt

    monkeypatch.setattr(late_requests, "hedgeable", one_race_per_document)
    waited = next(
        (
            seed
            for seed in SEEDS
            if any("waited out" in problem for problem in check(run(generate(seed, DOCS))))
        ),
        None,
    )
    assert waited is not None, "no scenario showed a hung request waited out"
