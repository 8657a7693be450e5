"""Automatic concurrency: the Vegas-style controller climbs while a model has spare capacity,
settles a few requests above the model's saturation point, and halves on push-back (429/5xx);
end to end against simulated servers that saturate at different concurrencies, each model's limit
settles near its own saturation point with no hand tuning."""

from __future__ import annotations

from pathlib import Path

from wiki_assets.engine import Dials, Endpoint, ingest
from wiki_assets.engine.limits import AdaptiveConcurrency, FixedConcurrency, work_units
from wiki_assets.simulator import SimModel, fleet


def served_latency(in_flight: int, saturation: int, units: float = 100.0) -> float:
    """Processor sharing: alone a request runs at full speed; past saturation they share it."""
    per_request = 1000.0
    rate = min(per_request, per_request * saturation / in_flight)
    return units / rate


def drive(controller: AdaptiveConcurrency, saturation: int, rounds: int) -> None:
    for _ in range(rounds):
        for _ in range(max(4, controller.limit)):
            controller.on_success(served_latency(controller.limit, saturation), 100.0)


def test_climbs_then_settles_just_above_saturation() -> None:
    controller = AdaptiveConcurrency(ceiling=64, limit=2)
    drive(controller, saturation=16, rounds=40)
    assert 16 + 1 <= controller.limit <= 16 + 5, controller.history
    assert controller.history[:3] == [4, 8, 16], "slow start doubles while nothing queues"

    small = AdaptiveConcurrency(ceiling=64, limit=2)
    drive(small, saturation=4, rounds=40)
    assert 4 + 1 <= small.limit <= 4 + 5, small.history


def test_never_exceeds_the_ceiling() -> None:
    controller = AdaptiveConcurrency(ceiling=6, limit=2)
    drive(controller, saturation=50, rounds=20)
    assert controller.limit == 6 and controller.peak == 6


def test_push_back_halves_the_limit_and_ends_slow_start() -> None:
    controller = AdaptiveConcurrency(ceiling=64, limit=2)
    drive(controller, saturation=40, rounds=4)
    before = controller.limit
    controller.on_overload()
    assert controller.limit == before // 2
    assert not controller.slow_start
    drive(controller, saturation=40, rounds=1)
    assert controller.limit == before // 2 + 1, "additive increase after a decrease"


def test_fixed_concurrency_backs_off_on_push_back_and_recovers() -> None:
    fixed = FixedConcurrency(4)
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
        report = ingest(
            synced_root=synced.parent,
            wiki_root=tmp_path / "wiki",
            collections=["c"],
            endpoints=[
                Endpoint(name=s.sim.model, base_url=s.base_url, model=s.sim.model) for s in servers
            ],
            dials=Dials(workers_per_model="auto", claim_size=4, flush_seconds=5, max_tokens=64),
        )
        peaks = {s.sim.model: s.snapshot().peak_in_flight for s in servers}
    settled = {m.name: m.workers for m in report.models}
    assert report.count == 300 and not report.failed
    assert all(m.auto for m in report.models)
    # Loose bounds: latency on a shared 2-core machine is noisy; the benchmark measures closely.
    assert 10 <= settled["wide"] <= 32, settled
    assert 3 <= settled["narrow"] <= 12, settled
    assert settled["wide"] > settled["narrow"], settled
    # The in-flight count the servers saw never exceeded what the controller allowed.
    assert peaks["wide"] <= max(m.peak_workers for m in report.models if m.name == "wide")
    docs = {m.name: m.docs for m in report.models}
    assert docs["wide"] > 2 * docs["narrow"], docs
