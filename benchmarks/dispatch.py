"""Dispatch throughput: the wiki_assets shared queue against simpler ways to drive two models.

Run ``python -m benchmarks.dispatch [--docs 400] [--workers 4] [--quick]``.

What is compared, and why
-------------------------
wiki_assets summarizes documents with several OpenAI-compatible endpoints at once. Its claim is
that one shared queue, from which every model's workers pull independently, keeps every model busy,
so the fleet's throughput approaches the *sum* of what each model does alone. This benchmark puts
that claim next to the designs one would otherwise write, on the same fleet and the same documents
in one process run:

* ``fast solo (W)`` / ``slow solo (W)``: the engine with only one endpoint and ``W`` workers. Their
  rates add up to the ``ideal``: what two models with ``W`` requests in flight each can do at best.
* ``wiki_assets shared queue (W)``: the engine with both endpoints (should be close to the ideal).
* ``wiki_assets auto``: the engine choosing its own concurrency per model (``workers_per_model=
  "auto"``); it may beat the ideal at ``W`` because the ideal is defined at a fixed ``W``.
* ``lockstep batches of 32``: the seed design (fast model idles while the slow one finishes).
* ``static split``: documents pre-assigned round-robin (the fast model finishes early, then idles).
* ``LiteLLM Router``: a general-purpose router with the same total requests in flight (``2W``).

The fleet is two simulated continuous-batching servers (``wiki_assets.simulator``) over
real HTTP: "fast" (600 tokens/s per request, 4,800 aggregate, 16 active) and "slow"
(300 / 1,200 / 8).
Documents are varied copies of the sample corpus, 100-2,000 tokens (``benchmarks.documents``).
Every design sends the engine's own requests: the fast server records the request bodies of the
``fast solo`` row and the baselines replay them (``benchmarks.recording``), and the table's footer
checks that the servers counted the same prompt tokens for every design.

A second table measures per-request overhead with an instantly answering server: a bare
``openai.AsyncOpenAI`` loop (also on openai's aiohttp transport, which the engine uses), the full
engine (queue, client, durable journal record, page written) and LiteLLM's Router, each with 64
requests in flight (the loops and the Router replay the engine's recorded requests). The engine
runs twice: a first run on a fresh wiki, which also indexes every document and queries its link
candidates, and a re-run of the same collection (``force``), where the index and its stored
answers are current. Targets: engine >= 0.9x the bare loop and >= 2.5x LiteLLM. By default that
server runs in a child process (``python -m benchmarks.recording``) so that, on a small machine,
the server does not share the client's GIL and the comparison measures the clients;
``--overhead-server thread`` runs it in-process instead.

Everything is written under one temporary directory that is deleted at the end. Progress goes to
stderr, the tables to stdout (markdown).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from benchmarks.documents import build_documents
from benchmarks.harness import Bench, progress
from benchmarks.overhead import overhead_section
from benchmarks.throughput import targets_text, throughput_section, throughput_table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.dispatch",
        description="Compare the wiki_assets shared queue with other dispatch designs.",
    )
    parser.add_argument("--docs", type=int, help="documents (default 400; --quick 120)")
    parser.add_argument("--workers", type=int, default=4, help="requests in flight per model (W)")
    parser.add_argument(
        "--overhead-docs", type=int, help="tiny documents for the overhead table (2000; quick 600)"
    )
    parser.add_argument(
        "--overhead-server",
        choices=("process", "thread"),
        default="process",
        help="run the instant server in a child process (default) or in this process",
    )
    parser.add_argument(
        "--overhead-rounds",
        type=int,
        help=(
            "rounds of (a), (a2), (b) and (b0) in the overhead table; the best counts, and the"
            " designs of each round are compared (default 5)"
        ),
    )
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--quick", action="store_true", help="a small run for smoke testing")
    parser.add_argument("--skip-overhead", action="store_true", help="only the throughput table")
    parser.add_argument("--skip-throughput", action="store_true", help="only the overhead table")
    parser.add_argument(
        "--skip-baselines", action="store_true", help="only the engine's rows in the first table"
    )
    parser.add_argument(
        "--long-share",
        type=float,
        default=0.02,
        help="share of long documents (12,000-40,000 tokens, taken in parts; default 0.02)",
    )
    args = parser.parse_args(argv)
    n = args.docs or (120 if args.quick else 400)
    overhead_n = args.overhead_docs or (600 if args.quick else 2000)
    rounds = args.overhead_rounds or 5
    if min(n, overhead_n, args.workers, rounds) < 1:
        parser.error("--docs, --overhead-docs, --overhead-rounds and --workers must be positive")

    with (
        tempfile.TemporaryDirectory(prefix="wiki-assets-bench-") as tmp_name,
        asyncio.Runner() as runner,
    ):
        tmp = Path(tmp_name)
        bench = Bench(tmp, runner)
        if not args.skip_throughput:
            synced = tmp / "synced"
            progress(f"writing {n} documents to {synced}")
            docs = build_documents(synced, n, seed=args.seed, long_share=args.long_share)
            tokens = [d.tokens for d in docs]
            korean = sum(1 for d in docs if PurePosixPath(d.path).stem.endswith("-ko"))
            rows, ideal, capacity = throughput_section(
                bench, docs, synced, args.workers, baselines=not args.skip_baselines
            )
            long = sum(1 for d in docs if d.tokens > 8192)
            print(
                f"## Dispatch throughput: {n} documents, W = {args.workers}\n\n"
                f"Documents: {len(docs)} ({korean} Korean), text tokens min {min(tokens)} / "
                f"median {statistics.median(tokens):.0f} / mean {statistics.mean(tokens):.0f} / "
                f"max {max(tokens)} ({long} long, taken in parts); max_tokens 200. "
                f"Fleet: fast 600/4800 tok/s, batch 16; "
                f"slow 300/1200 tok/s, batch 8. Python {platform.python_version()}, "
                f"{os.cpu_count()} CPUs. Engine rows start from a current link index (built "
                f"once in {bench.indexing_s:.1f} s; the baselines never index).\n"
            )
            print(throughput_table(rows, ideal))
            print()
            print(targets_text(rows, ideal, capacity))
            print(flush=True)
        if not args.skip_overhead:
            table = overhead_section(bench, overhead_n, args.overhead_server, rounds)
            print("## Per-request overhead\n")
            print(table, flush=True)
    progress("done")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
