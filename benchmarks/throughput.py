"""The throughput table: the shared queue against solo runs, the ideal, lockstep batches, a
static split and LiteLLM's Router, on a fast and a slow simulated server.

See :mod:`benchmarks.dispatch` for what is compared and why.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.baselines import (
    DesignResult,
    Target,
    import_litellm,
    litellm_router,
    lockstep,
    static_split,
)
from benchmarks.documents import BenchDoc
from benchmarks.harness import Bench, Row, fmt, progress
from benchmarks.recording import RecordingServer, in_document_order
from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.simulator import SimModel, SimServer

FAST = SimModel(model="fast", per_request_tps=600, aggregate_tps=4800, max_batch=16)
SLOW = SimModel(model="slow", per_request_tps=300, aggregate_tps=1200, max_batch=8)
ROUTER_STRATEGIES = ("simple-shuffle", "least-busy", "latency-based-routing")


def _endpoint(server: SimServer) -> Endpoint:
    return Endpoint(name=server.sim.model, base_url=server.base_url, model=server.sim.model)


def _target(server: SimServer) -> Target:
    return Target(model=server.sim.model, base_url=server.base_url)


def throughput_section(
    bench: Bench, docs: Sequence[BenchDoc], synced: Path, workers: int, *, baselines: bool = True
) -> tuple[list[Row], Row, Row]:
    """The rows, the ideal at ``workers`` per model (the sum of the solo rates) and the capacity
    with automatic concurrency (the sum of the solo ``auto`` rates)."""
    n = len(docs)
    w = workers
    # The simulator's default answers repeat the prompt's words, so every page is flagged, no
    # second opinion ranks better, and every sentence is left for a judge: the rows with the
    # defaults ('retry' and the judge) show what asking costs when it gains nothing. The
    # baselines replay one pass, as 'keep' without a judge does.
    dials = Dials(
        workers_per_model=w, claim_size=32, flush_seconds=30, max_tokens=200, force=True,
        flagged_pages="keep", judge_share=0.0,
    )  # fmt: skip
    auto = _with(dials, workers_per_model="auto")
    rows: dict[str, Row] = {}
    bench.indexing_s = bench.build_link_index(synced)
    progress(f"link index built in {bench.indexing_s:.1f} s; every engine row starts from a copy")
    # The fast server records what the engine sends in its solo row; the baselines replay it.
    with RecordingServer(FAST) as fast, SimServer(SLOW) as slow:
        servers = [fast, slow]
        both = [_endpoint(fast), _endpoint(slow)]
        targets = [_target(fast), _target(slow)]

        def engine(name: str, endpoints: list[Endpoint], dials: Dials) -> Row:
            return bench.engine_row(name, synced, "bench", n, servers, endpoints, dials)

        for server in (fast, slow):
            name = f"{server.sim.model} solo ({w})"
            rows[name] = engine(name, [_endpoint(server)], dials)
            fast.recording = False  # the fast solo row is recorded, nothing after it
        requests = in_document_order(fast.recorded)
        replay_note = f"replays the {len(requests)} recorded requests"
        progress(f"recorded {len(requests)} engine requests for the baselines to replay")
        ideal = _sum_row("ideal (sum of solo)", [rows[f"{m} solo ({w})"] for m in MODELS], n)

        shared = f"wiki_assets shared queue ({w})"
        rows[shared] = engine(shared, both, dials)
        rows[f"{shared}, defaults"] = engine(f"{shared}, defaults", both, _with(dials, **RETRY))
        for server in (fast, slow):
            name = f"{server.sim.model} solo (auto)"
            rows[name] = engine(name, [_endpoint(server)], auto)
        capacity = _sum_row(
            "capacity (sum of solo auto)", [rows[f"{m} solo (auto)"] for m in MODELS], n
        )
        rows["wiki_assets auto"] = engine("wiki_assets auto", both, auto)
        rows["wiki_assets auto, defaults"] = engine(
            "wiki_assets auto, defaults", both, _with(auto, **RETRY)
        )

        no_requests = "no engine requests to replay (the fast solo row failed)"
        if baselines:
            name = "lockstep batches of 32 (seed design)"
            rows[name] = (
                bench.baseline_row(name, servers, lambda: lockstep(targets, requests, w))
                if requests
                else Row(name, unavailable=no_requests)
            )
            name = "static split (round-robin)"
            rows[name] = (
                bench.baseline_row(name, servers, lambda: static_split(targets, requests, w))
                if requests
                else Row(name, unavailable=no_requests)
            )
            progress("importing litellm")
            litellm, about = import_litellm()
            for strategy in ROUTER_STRATEGIES:
                name = f"LiteLLM Router {strategy} ({2 * w} in flight)"
                if litellm is None or not requests:
                    rows[name] = Row(name, unavailable=about if litellm is None else no_requests)
                    continue

                def router(strategy: str = strategy) -> Coroutine[Any, Any, DesignResult]:
                    return litellm_router(litellm, targets, requests, 2 * w, strategy)

                rows[name] = bench.baseline_row(name, servers, router)
                rows[name].notes.append(f"litellm {about}")

    for name, row in rows.items():
        if not name.startswith(("fast solo", "slow solo", "wiki_assets")):
            row.notes.append(replay_note)
    fixed = [rows.pop(f"{m} solo ({w})") for m in MODELS]
    autos = [rows.pop(f"{m} solo (auto)") for m in MODELS]
    ordered = [
        *fixed, ideal, rows.pop(shared), rows.pop(f"{shared}, defaults"),
        *autos, capacity, rows.pop("wiki_assets auto"), rows.pop("wiki_assets auto, defaults"),
        *rows.values(),
    ]  # fmt: skip
    return ordered, ideal, capacity


MODELS = ("fast", "slow")
# The defaults: a second opinion on a flagged page, a judge for unchecked sentences.
RETRY = {"flagged_pages": Dials().flagged_pages, "judge_share": Dials().judge_share}


def _with(dials: Dials, **changes: Any) -> Dials:
    return replace(dials, **changes)


def _sum_row(design: str, solo: Sequence[Row], docs: int) -> Row:
    """A row whose rate is the sum of the ``solo`` rows' (what the fleet could do at best)."""
    row = Row(design, docs=docs)
    rates = [r.rate for r in solo]
    if all(rates):
        row.seconds = row.makespan_s = docs / sum(r for r in rates if r)
        row.notes.append(" + ".join(r.design for r in solo) + " docs/s")
    else:
        row.unavailable = "needs both solo rows"
    return row


def targets_text(rows: Sequence[Row], ideal: Row, capacity: Row) -> str:
    """What the fleet must show, each line with its figure and whether it holds."""
    by = {row.design: row for row in rows}

    def rate(name: str) -> float | None:
        row = by.get(name)
        return row.rate if row is not None else None

    shared = next(
        name for name in by if name.startswith("wiki_assets shared queue") and "," not in name
    )
    best_solo = max((r.rate or 0.0) for r in rows if r.design.startswith(MODELS))
    best_fixed = max(  # each model alone at the same workers as the fleet row
        (r.rate or 0.0) for r in rows if r.design.startswith(MODELS) and "auto" not in r.design
    )
    auto, auto_defaults = "wiki_assets auto", "wiki_assets auto, defaults"
    defaults = f"{shared}, defaults"
    checks = [
        (f"{shared} ≥ 0.97 × the ideal", rate(shared), ideal.rate, 0.97),
        (f"{auto} ≥ 0.90 × capacity", rate(auto), capacity.rate, 0.90),
        (f"{defaults} ≥ the best model alone", rate(defaults), best_fixed, 1.0),
        (f"{auto_defaults} ≥ the best model alone", rate(auto_defaults), best_solo, 1.0),
        (f"{defaults} ≥ 0.95 × {shared} (keep)", rate(defaults), rate(shared), 0.95),
        (f"{auto_defaults} ≥ 0.95 × {auto} (keep)", rate(auto_defaults), rate(auto), 0.95),
    ]
    lines = ["| target | measured | holds |", "|---|---:|---|"]
    for label, value, against, share in checks:
        if value is None or not against:
            lines.append(f"| {label} | — | not measured |")
            continue
        ratio = value / against
        lines.append(f"| {label} | {ratio:.2f} × | {'yes' if ratio >= share else 'NO'} |")
    return "\n".join(lines)


def _check_prompts(rows: Sequence[Row]) -> str:
    """Every design must have sent the same prompts: the servers' prompt token counts agree."""
    # The rows with the defaults send second opinions and judges' requests on top: more
    # prompts by design.
    counted = [
        r for r in rows if r.prompt_tokens is not None and r.docs and "defaults" not in r.design
    ]
    if not counted:
        return ""
    reference = counted[0].prompt_tokens
    differing = [r for r in counted if r.prompt_tokens != reference]
    for row in differing:
        row.notes.append(f"prompt tokens {row.prompt_tokens} ≠ {reference}")
    if differing:
        return "Prompt tokens counted by the servers DIFFER between designs (see notes)."
    return (
        f"Prompt tokens counted by the servers: {reference:,} for each of the {len(counted)} "
        "measured designs (identical requests)."
    )


def throughput_table(rows: Sequence[Row], ideal: Row) -> str:
    check = _check_prompts(rows)
    ideal_rate = ideal.rate
    lines = [
        "| design | docs | seconds | docs/s | vs ideal | makespan s | vs ideal makespan "
        "| answered fast / slow | peak in flight fast / slow | notes |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for row in rows:
        if row.unavailable:
            lines.append(f"| {row.design} | not available | | | | | | | | {row.unavailable} |")
            continue
        rate = row.rate
        ratio = rate / ideal_rate if rate and ideal_rate else None
        span = (
            row.makespan_s / ideal.makespan_s
            if row.makespan_s and ideal.makespan_s and row is not ideal
            else None
        )
        split = " / ".join(str(row.split.get(m, 0)) for m in ("fast", "slow")) if row.split else ""
        peak = " / ".join(str(row.peak.get(m, 0)) for m in ("fast", "slow")) if row.peak else ""
        lines.append(
            f"| {row.design} | {row.docs} | {fmt(row.seconds, 1)} | {fmt(rate)} "
            f"| {fmt(ratio, 2, '×')} | {fmt(row.makespan_s, 1)} | {fmt(span, 2, '×')} "
            f"| {split} | {peak} | {'; '.join(row.notes)} |"
        )
    if check:
        lines += ["", check]
    return "\n".join(lines)
