"""The per-request overhead table: the engine on an instantly answering server against a bare
``openai`` loop and LiteLLM's Router, all replaying the engine's recorded requests.

See :mod:`benchmarks.dispatch` for what is compared and why. Run on its own,
``python -m benchmarks.overhead --against COMMIT`` compares the engine's re-run with an older
commit's, in paired rounds of one invocation (:mod:`benchmarks.paired`).
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from benchmarks.baselines import Body, Target, bare_loop, import_litellm, litellm_router
from benchmarks.documents import build_tiny_documents
from benchmarks.harness import Bench, Row, cpu_seconds, engine_log, fmt, progress
from benchmarks.recording import RecordingServer, in_document_order, read_recorded
from wiki_assets.engine import Corpus, Fleet, ingest
from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.simulator import SimModel, SimStats

INSTANT = SimModel(model="instant", instant=True)
OVERHEAD_IN_FLIGHT = 64
PROJECT_ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def instant_server(
    mode: str, record: Path, limit: int
) -> Iterator[tuple[str, Callable[[], None], Callable[[], SimStats]]]:
    """An instantly answering server that records its first ``limit`` request bodies as JSON
    lines in ``record``: ``(base_url, reset_stats, stats)``."""
    if mode == "thread":
        with (
            record.open("a", encoding="utf-8") as sink,
            RecordingServer(INSTANT, sink=sink, limit=limit) as server,
        ):
            yield server.base_url, server.reset_stats, server.snapshot
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        sys.executable,
        "-m",
        "benchmarks.recording",
        "--model",
        INSTANT.model,
        "--port",
        str(port),
        "--record",
        str(record),
        "--limit",
        str(limit),
    ]
    child = subprocess.Popen(
        command, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    root = f"http://127.0.0.1:{port}"

    def fetch(path: str, data: bytes | None = None) -> dict[str, Any]:
        with urllib.request.urlopen(f"{root}{path}", data=data, timeout=10) as answer:
            return cast(dict[str, Any], json.loads(answer.read()))

    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                fetch("/v1/models")
                break
            except OSError:
                if child.poll() is not None or time.monotonic() > deadline:
                    error = child.stderr.read().decode() if child.stderr else ""
                    raise RuntimeError(f"simulator process did not start: {error}") from None
                time.sleep(0.1)

        def reset() -> None:
            fetch("/sim/reset", data=b"")

        def stats() -> SimStats:
            return SimStats(**fetch("/sim/stats"))

        yield f"{root}/v1", reset, stats
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def overhead_section(bench: Bench, count: int, mode: str, rounds: int) -> str:
    """The engine's per-request overhead on an instant server, against a bare loop and LiteLLM.

    (b0) runs first, on a fresh wiki: it also indexes the documents and queries every document's
    link candidates. It records its requests, which (a), (a2) and (c) replay. (b) then re-runs
    the same collection on that wiki with ``force`` (a tuning run, a new prompt): the link index
    and its stored answers are current, so what is left is the per-request path. (a), (a2), (b)
    and (b0) (each time on a fresh wiki) run ``rounds`` more times, alternating, and the best
    round counts: on a shared machine the fastest round is the one least disturbed by other
    work. Each ratio is also given round by round, each design against the bare loop of the same
    round (run right before or after it), with the median of those: a machine that is slower for
    a minute then slows both sides of a ratio alike, where the best rounds of two designs may
    come from different minutes."""
    bench.link_index = None  # (b0) is a first run: it indexes its documents itself
    synced = bench.tmp / "tiny-synced"
    progress(f"overhead: writing {count} tiny documents")
    build_tiny_documents(synced, count)
    record = bench.tmp / "tiny-requests.jsonl"
    requests: list[Body] = []
    wiki = bench.fresh_wiki()
    with instant_server(mode, record, count) as (base_url, reset, stats):
        target = Target(model=INSTANT.model, base_url=base_url)

        def measure(row: Row, run: Callable[[], tuple[int, float | None]]) -> None:
            reset()
            progress(f"overhead: {row.design}")
            started, cpu_started = time.perf_counter(), cpu_seconds()
            try:
                done, makespan = run()
            except Exception as error:
                row.unavailable = f"run failed ({type(error).__name__}: {error})"[:160]
                progress(f"overhead: {row.design}: {row.unavailable}")
                return
            seconds = time.perf_counter() - started
            cpu_ms = (cpu_seconds() - cpu_started) * 1000 / max(done, 1)
            answered = stats().answered
            if answered != count or done != count:
                row.notes.append(f"{done} done, server answered {answered}")
            row.trials.append(done / seconds)
            row.cpu_trials.append(cpu_ms)
            if row.rate is None or done / seconds > row.rate:
                row.docs, row.seconds, row.makespan_s = done, seconds, makespan
            if row.cpu_ms is None or cpu_ms < row.cpu_ms:
                row.cpu_ms = cpu_ms
            progress(
                f"overhead: {row.design}: {done / seconds:.0f} docs/s, {cpu_ms:.2f} CPU ms/doc"
            )

        def bare(aiohttp: bool) -> Callable[[], tuple[int, float | None]]:
            def run() -> tuple[int, float | None]:
                loop = bare_loop(target, requests, OVERHEAD_IN_FLIGHT, aiohttp=aiohttp)
                result = bench.runner.run(loop)
                return result.ok, result.makespan_s

            return run

        def engine(wiki_root: Path = wiki) -> tuple[int, float | None]:
            report = ingest(
                corpus=Corpus(synced, ["tiny"]),
                wiki_root=wiki_root,
                fleet=Fleet([Endpoint(name="instant", base_url=base_url, model=INSTANT.model)]),
                dials=Dials(
                    workers_per_model=OVERHEAD_IN_FLIGHT,
                    claim_size=32,
                    flush_seconds=30,
                    force=True,
                ),
                log=engine_log,
            )
            return report.count, report.duration_s

        litellm, about = import_litellm()

        def router() -> tuple[int, float | None]:
            result = bench.runner.run(
                litellm_router(litellm, [target], requests, OVERHEAD_IN_FLIGHT, "simple-shuffle")
            )
            return result.ok, result.makespan_s

        n = OVERHEAD_IN_FLIGHT
        bare_row = Row(f"(a) bare loop: openai.AsyncOpenAI, {n} in flight")
        aiohttp_row = Row(f"(a2) bare loop on openai's aiohttp transport, {n} in flight")
        engine_row = Row(
            f"(b) wiki_assets ingest, {n} workers, re-run (queue → client → journal → page)"
        )
        first_row = Row(f"(b0) wiki_assets ingest, {n} workers, first run (+ index, candidates)")
        router_row = Row(f"(c) LiteLLM Router simple-shuffle, {n} in flight")
        measure(first_row, engine)
        requests = in_document_order(read_recorded(record)) if record.exists() else []
        progress(f"overhead: recorded {len(requests)} engine requests to replay")
        replays = [bare_row, aiohttp_row, router_row]
        if not requests:
            for row in replays:
                row.unavailable = "no engine requests to replay (run (b0) failed)"
        elif len(requests) != count:
            for row in replays:
                row.notes.append(f"replays {len(requests)} recorded requests")
        if litellm is None and requests:
            router_row.unavailable = about
        # Warm up (imports, first connections) so that no design pays it in its timing.
        progress("overhead: warming up")
        if not bare_row.unavailable:
            for aiohttp in (False, True):
                bench.runner.run(bare_loop(target, requests[:n], n, aiohttp=aiohttp))
        if not router_row.unavailable:
            bench.runner.run(litellm_router(litellm, [target], requests[:8], 8, "simple-shuffle"))
            measure(router_row, router)

        def first_run() -> tuple[int, float | None]:
            return engine(bench.fresh_wiki())

        alternating = [
            (bare_row, bare(False)),
            (engine_row, engine),
            (first_row, first_run),
            (aiohttp_row, bare(True)),
        ]
        for extra in range(rounds):
            for row, run in alternating if extra % 2 == 0 else alternating[::-1]:
                if not row.unavailable:
                    measure(row, run)

    lines = [
        f"Instant server ({mode}), {count} tiny documents, {OVERHEAD_IN_FLIGHT} requests in "
        f"flight; best of {rounds} round(s) for (a), (a2) and (b), of {rounds + 1} for (b0) "
        "(each on a fresh wiki), one run of (c). "
        "CPU ms/doc: this process's CPU time per document, with its link candidates helper's and "
        "its page writer's (the client's alone when the server runs in its own process), less "
        "sensitive to other work than docs/s.",
        "",
        "| design | docs | seconds | docs/s | all rounds docs/s | CPU ms/doc | notes |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for row in (bare_row, aiohttp_row, engine_row, first_row, router_row):
        if row.unavailable:
            lines.append(f"| {row.design} | not available | | | | | {row.unavailable} |")
        else:
            trials = ", ".join(f"{t:.0f}" for t in row.trials)
            lines.append(
                f"| {row.design} | {row.docs} | {fmt(row.seconds, 2)} | {fmt(row.rate, 0)} "
                f"| {trials} | {fmt(row.cpu_ms)} | {'; '.join(row.notes)} |"
            )
    lines.append("")
    for label, engine_side, other, target_ratio in (
        ("(b) / (a)", engine_row, bare_row, 1.0),
        ("(b) / (c)", engine_row, router_row, 2.5),
        ("(b) / (a2)", engine_row, aiohttp_row, None),
        ("(b0) / (a)", first_row, bare_row, 0.8),
        ("(b0) / (c)", first_row, router_row, None),
    ):
        if engine_side.rate and other.rate and not (engine_side.unavailable or other.unavailable):
            ratio = engine_side.rate / other.rate
            verdict = ""
            if target_ratio is not None:
                met = "met" if ratio >= target_ratio else "NOT met"
                verdict = f" (target ≥ {target_ratio}: {met})"
            cpu = ""
            if engine_side.cpu_ms and other.cpu_ms:
                cpu = f"; by CPU time per document {other.cpu_ms / engine_side.cpu_ms:.2f}"
            lines.append(f"- {label} = {ratio:.2f}{verdict}{cpu}{_paired(engine_side, other)}")
        else:
            lines.append(f"- {label}: not available")
    return "\n".join(lines)


def _paired(engine_side: Row, other: Row) -> str:
    """The ratio round by round (the alternating rounds; (b0)'s first run, before the warm-up,
    has no partner), their median, and the median of the CPU time per document as a multiple of
    the other design's."""
    rounds = min(len(engine_side.trials), len(other.trials))
    if rounds < 2:
        return ""
    pairs = list(
        zip(
            engine_side.trials[-rounds:],
            other.trials[-rounds:],
            engine_side.cpu_trials[-rounds:],
            other.cpu_trials[-rounds:],
            strict=True,
        )
    )
    rates = [mine / theirs for mine, theirs, _, _ in pairs]
    cpus = [mine / theirs for _, _, mine, theirs in pairs]
    return (
        f"; round by round {', '.join(f'{r:.2f}' for r in rates)}: median "
        f"{statistics.median(rates):.2f}, CPU ms/doc ×{statistics.median(cpus):.2f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.overhead",
        description="The engine's per-request overhead, this tree against an older commit's.",
    )
    parser.add_argument(
        "--against", required=True, metavar="COMMIT", help="the older commit to compare with"
    )
    parser.add_argument("--rounds", type=int, default=5, help="paired rounds (default 5)")
    parser.add_argument("--docs", type=int, default=2000, help="tiny documents (default 2000)")
    args = parser.parse_args(argv)
    from benchmarks.paired import paired_overhead  # (which imports this module)

    print(paired_overhead(args.against, args.rounds, args.docs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
