"""Automatic workers: the Vegas-style controller climbs while a model has spare capacity,
settles a few requests above the model's saturation point, and halves on push-back (429/5xx);
end to end against simulated servers that saturate at different concurrencies, each model's limit
settles near its own saturation point with no hand tuning."""

from __future__ import annotations

from pathlib import Path

import pytest

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.dispatch import (
    AdaptiveWorkers,
    FixedWorkers,
    Pace,
    Prospect,
    should_start,
    work_units,
)
from wiki_assets.simulator import SimModel, fleet


def served_latency(in_flight: int, saturation: int, units: float = 100.0) -> float:
    """Processor sharing: alone a request runs at full speed; past saturation they share it."""
    per_request = 1000.0
    rate = min(per_request, per_request * saturation / in_flight)
    return units / rate


def drive(controller: AdaptiveWorkers, saturation: int, rounds: int) -> None:
    for _ in range(rounds):
        for _ in range(max(4, controller.limit)):
            controller.on_success(served_latency(controller.limit, saturation), 100.0)


def test_climbs_then_settles_just_above_saturation() -> None:
    controller = AdaptiveWorkers(ceiling=64, limit=2)
    drive(controller, saturation=16, rounds=40)
    assert 16 + 1 <= controller.limit <= 16 + 5, controller.history
    assert controller.history[:3] == [4, 8, 16], "slow start doubles while nothing queues"

    small = AdaptiveWorkers(ceiling=64, limit=2)
    drive(small, saturation=4, rounds=40)
    assert 4 + 1 <= small.limit <= 4 + 5, small.history


def test_never_exceeds_the_ceiling() -> None:
    controller = AdaptiveWorkers(ceiling=6, limit=2)
    drive(controller, saturation=50, rounds=20)
    assert controller.limit == 6 and controller.peak == 6


def test_push_back_halves_the_limit_and_ends_slow_start() -> None:
    controller = AdaptiveWorkers(ceiling=64, limit=2)
    drive(controller, saturation=40, rounds=4)
    before = controller.limit
    controller.on_overload()
    assert controller.limit == before // 2
    assert not controller.slow_start
    drive(controller, saturation=40, rounds=1)
    assert controller.limit == before // 2 + 1, "additive increase after a decrease"


def test_fixed_workers_back_off_on_push_back_and_recover() -> None:
    fixed = FixedWorkers(4)
    fixed.on_success(10.0, 1.0)
    assert fixed.limit == 4 and fixed.auto is False
    fixed.on_overload()
    assert fixed.limit == 2
    for _ in range(2 + 3):
        fixed.on_success(1.0, 1.0)
    assert fixed.limit == 4, "one back per round of successes, never above the configured 4"
    for _ in range(20):
        fixed.on_success(1.0, 1.0)
    assert fixed.limit == 4


def test_work_units_discount_prompt_tokens() -> None:
    assert work_units(1000, 50) == 150.0
    assert work_units(0, 0) == 1.0


def ingest_collection(synced: Path, wiki: Path, servers: list, dials: Dials):  # type: ignore[no-untyped-def,type-arg]
    """Collection ``c`` of ``synced``, on one endpoint per simulated server."""
    endpoints = [
        Endpoint(name=s.sim.model, base_url=s.base_url, model=s.sim.model) for s in servers
    ]
    return ingest(corpus=Corpus(synced, ["c"]), wiki_root=wiki, fleet=Fleet(endpoints), dials=dials)


def test_auto_finds_each_models_saturation_point(tmp_path: Path) -> None:
    synced = tmp_path / "synced" / "c"
    synced.mkdir(parents=True)
    for i in range(300):
        (synced / f"d{i:03}.md").write_text(f"# Document {i}\n\n" + "word " * 300)
    # Saturation = aggregate / per-request: 16 in flight for "wide", 4 for "narrow".
    # Requests of ~0.25 s, long enough that the client's own overhead is not what is measured.
    wide = SimModel(model="wide", per_request_tps=400, aggregate_tps=6400, max_batch=32)
    narrow = SimModel(model="narrow", per_request_tps=400, aggregate_tps=1600, max_batch=32)
    with fleet(wide, narrow) as servers:
        report = ingest_collection(
            synced.parent,
            tmp_path / "wiki",
            servers,
            # "keep": the simulator's pages are flagged; second opinions would blur the shares.
            Dials(
                workers_per_model="auto",
                claim_size=4,
                flush_seconds=5,
                max_tokens=64,
                flagged_pages="keep",
            ),
        )
        peaks = {s.sim.model: s.snapshot().peak_in_flight for s in servers}
    settled = {m.name: m.workers for m in report.models}
    assert report.count == 300 and not report.failed
    assert all(m.auto for m in report.models)
    # Loose bounds: latency on a shared 2-core machine is noisy; the benchmark measures closely.
    assert 10 <= settled["wide"] <= 32, settled
    assert 3 <= settled["narrow"] <= 16, settled  # saturation 4; a loaded machine overshoots
    assert settled["wide"] > settled["narrow"], settled
    # The in-flight count the servers saw never exceeded what the controller allowed.
    assert peaks["wide"] <= max(m.peak_workers for m in report.models if m.name == "wide")
    docs = {m.name: m.tally.docs for m in report.models}
    assert docs["wide"] > 2 * docs["narrow"], docs


def test_pace_learns_seconds_per_unit_and_answer_length() -> None:
    pace = Pace()
    assert pace.expected_s(1000) is None  # nothing observed yet
    for _ in range(30):
        pace.observe(latency_s=2.0, prompt_tokens=1000, completion_tokens=100)
    assert pace.seconds_per_request == pytest.approx(2.0)
    assert pace.expected_s(1000) == pytest.approx(2.0)
    longer = 2.0 * work_units(4000, 100) / work_units(1000, 100)
    assert pace.expected_s(4000) == pytest.approx(longer)


def test_a_slow_model_starts_a_document_only_while_the_others_are_busy_longer() -> None:
    # The other model would finish this document in 0.4 s and does 10 docs/s: with 50 others
    # unstarted it is busy for 5 s, so a 2 s start helps; with 5 it is done in about 1 s, and a
    # 2 s document would delay the end.
    fast = Prospect(order=0, finish_s=0.4, docs_per_s=10.0)
    slow = Prospect(order=1, finish_s=2.0, docs_per_s=0.5)
    assert should_start(slow, [fast], unstarted_elsewhere=50)
    assert not should_start(slow, [fast], unstarted_elsewhere=5)
    # The fast model itself never leaves it, whatever is unstarted.
    assert should_start(fast, [slow], unstarted_elsewhere=0)
    # The last document next to an equally fast model: exactly one of the two takes it.
    twin = Prospect(order=1, finish_s=0.4, docs_per_s=10.0)
    assert should_start(fast, [twin], 0) != should_start(twin, [fast], 0)
    # Nobody else can work (all other models down or not measured yet): always start.
    assert should_start(Prospect(order=1, finish_s=60.0, docs_per_s=0.01), [], 0)


def test_no_document_is_ever_left_by_every_model() -> None:
    """The livelock of the old rule (each model compared its time for a long document with the
    others' *average* request, so both left it to each other forever): for any document and any
    fleet, the model that would finish it first starts it."""
    import random

    rng = random.Random(12)
    for _ in range(20_000):
        fleet_size = rng.randint(1, 5)
        prospects = [
            Prospect(
                order=index,
                finish_s=rng.choice([rng.uniform(0.01, 500.0), 1.0]),  # ties happen
                docs_per_s=rng.uniform(0.0, 50.0),
            )
            for index in range(fleet_size)
        ]
        unstarted = rng.choice([0, 0, 1, 2, rng.randint(0, 1000)])
        starters = [
            p for p in prospects if should_start(p, [o for o in prospects if o is not p], unstarted)
        ]
        best = min(prospects, key=lambda p: (p.finish_s, p.order))
        assert best in starters, (prospects, unstarted)


def test_the_slow_model_leaves_the_last_documents_to_the_fast_one(tmp_path: Path) -> None:
    synced = tmp_path / "synced" / "c"
    synced.mkdir(parents=True)
    for i in range(40):
        (synced / f"d{i:03}.md").write_text(f"# Document {i}\n\nA short note about topic {i}.\n")
    quick = {"per_request_tps": 100_000, "aggregate_tps": 1_000_000}
    fast = SimModel(model="fast", latency_s=0.1, **quick)
    slow = SimModel(model="slow", latency_s=3.0, **quick)
    with fleet(fast, slow) as servers:
        report = ingest_collection(
            synced.parent,
            tmp_path / "wiki",
            servers,
            # "keep": the simulator's pages are flagged; a second opinion would ask again.
            Dials(workers_per_model=1, claim_size=2, flush_seconds=5, flagged_pages="keep"),
        )
        asked = {s.sim.model: s.snapshot().answered for s in servers}
    assert report.count == 40 and not report.failed
    # The slow model's first answer takes 3 s; by then the fast one has done most of the rest and
    # will finish what is left (about 1.5 s) long before a second slow answer would come (3 s):
    # the slow model starts no second document, and the run ends with the fast one's last answer.
    assert asked == {"fast": 39, "slow": 1}, asked
