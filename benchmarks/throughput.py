"""The throughput table: the shared queue against solo runs, the ideal, lockstep batches, a
static split and LiteLLM's Router, on a fast and a slow simulated server.

See :mod:`benchmarks.dispatch` for what is compared and why.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, cast

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
    bench: Bench, docs: Sequence[BenchDoc], synced: Path, workers: int
) -> tuple[list[Row], Row]:
    n = len(docs)
    w = workers
    # The simulator's default answers repeat the prompt's words, so every page is flagged: second
    # opinions would double the engine's requests against the baselines' single pass.
    dials = Dials(
        workers_per_model=w, claim_size=32, flush_seconds=30, max_tokens=200, force=True,
        flagged_pages="keep",
    )  # fmt: skip
    rows: dict[str, Row] = {}
    bench.indexing_s = bench.build_link_index(synced)
    progress(f"link index built in {bench.indexing_s:.1f} s; every engine row starts from a copy")
    # The fast server records what the engine sends in its solo row; the baselines replay it.
    with RecordingServer(FAST) as fast, SimServer(SLOW) as slow:
        servers = [fast, slow]
        both = [_endpoint(fast), _endpoint(slow)]
        targets = [_target(fast), _target(slow)]
        for server in (fast, slow):
            name = f"{server.sim.model} solo ({w})"
            rows[name] = bench.engine_row(
                name, synced, "bench", n, servers, [_endpoint(server)], dials
            )
            fast.recording = False  # the fast solo row is recorded, nothing after it
        requests = in_document_order(fast.recorded)
        replay_note = "" if len(requests) == n else f"replays {len(requests)} recorded requests"
        progress(f"recorded {len(requests)} engine requests for the baselines to replay")
        solo_rates = [rows[f"{s.sim.model} solo ({w})"].rate for s in (fast, slow)]
        ideal_rate = sum(r for r in solo_rates if r) if all(solo_rates) else None
        ideal = Row("ideal (sum of solo)", docs=n)
        if ideal_rate:
            ideal.seconds = ideal.makespan_s = n / ideal_rate
            ideal.notes.append("fast solo + slow solo docs/s")
        else:
            ideal.unavailable = "needs both solo rows"

        shared = f"wiki_assets shared queue ({w})"
        rows[shared] = bench.engine_row(shared, synced, "bench", n, servers, both, dials)

        no_requests = "no engine requests to replay (the fast solo row failed)"
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

        # Last: it is being built right now and might misbehave; a run that outlives its
        # timeout keeps going in the background and would disturb the rows after it.
        name = "wiki_assets auto"
        try:
            auto = Dials(**{**_dials_kwargs(dials), "workers_per_model": cast(Any, "auto")})
        except Exception as error:
            rows[name] = Row(
                name, unavailable=f"Dials rejects it ({type(error).__name__}: {error})"
            )
            progress(f"{name}: not available ({rows[name].unavailable})")
        else:
            timeout = max(60.0, 5 * n / ideal_rate) if ideal_rate else 300.0
            rows[name] = bench.engine_row(
                name, synced, "bench", n, servers, both, auto, timeout_s=timeout
            )

    if replay_note:
        for name, row in rows.items():
            if not name.startswith(("fast solo", "slow solo", "wiki_assets")):
                row.notes.append(replay_note)
    solo = [rows.pop(f"{s} solo ({w})") for s in ("fast", "slow")]
    rest = [shared, "wiki_assets auto"] + [name for name in rows if name not in (shared,)]
    ordered = [*solo, ideal, *(rows[name] for name in dict.fromkeys(rest))]
    return ordered, ideal


def _dials_kwargs(dials: Dials) -> dict[str, Any]:
    names = (
        "workers_per_model",
        "claim_size",
        "flush_seconds",
        "max_tokens",
        "force",
        "flagged_pages",
    )
    return {name: getattr(dials, name) for name in names}


def _check_prompts(rows: Sequence[Row]) -> str:
    """Every design must have sent the same prompts: the servers' prompt token counts agree."""
    counted = [r for r in rows if r.prompt_tokens is not None and r.docs]
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
