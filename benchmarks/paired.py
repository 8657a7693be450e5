"""The overhead benchmark's re-run, old commit against new, in paired rounds of one invocation.

``python -m benchmarks.overhead --against ec46a50 [--rounds 5] [--docs 2000]``

The old commit's tree is exported (``git archive``) into a temporary directory; the new side is
this working tree. Both run the overhead table's (b) row: ``ingest`` with one endpoint on an
instantly answering server, ``Dials(workers_per_model=64, claim_size=32, flush_seconds=30,
force=True)``, re-running a collection of tiny documents on a wiki that already has their pages.
Each run is a fresh Python process with ``PYTHONPATH`` (and its working directory) at its tree,
so that it imports that tree's engine; it uses nothing but ``wiki_assets.engine.ingest`` and
``wiki_assets.engine.config``'s ``Dials`` and ``Endpoint``, which both trees have. Both sides
share the same documents and the same instant server (this tree's simulator, in its own process);
each has a wiki of its own (their state may differ), made by one unmeasured first run.

The rounds alternate their order (old then new, new then old, ...), so that a machine that slows
down over the invocation slows both sides alike; each round's ratio new/old compares two runs a
few seconds apart. The table gives every round, the median of each side, the median of the
rounds' ratios, and each column's min-max spread, so that the noise is there to see.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.documents import build_tiny_documents
from benchmarks.harness import progress
from benchmarks.overhead import INSTANT, OVERHEAD_IN_FLIGHT, PROJECT_ROOT, instant_server

# One run, in a fresh process of one tree: ``ingest`` as that tree takes it (a tree older than
# the Corpus and Fleet values takes their fields as keyword arguments), and nothing newer.
RUN_ONE = """
import json, logging, resource, sys, time
from pathlib import Path
import wiki_assets
from wiki_assets.engine import ingest
from wiki_assets.engine.config import Dials, Endpoint
try:
    from wiki_assets.engine import Corpus, Fleet
except ImportError:
    Corpus = Fleet = None

tree, synced, wiki, base_url, model, workers = sys.argv[1:7]
here = Path(wiki_assets.__file__).resolve()
assert here.is_relative_to(Path(tree).resolve()), f"imported {here}, not from {tree}"
log = logging.getLogger("paired")
log.setLevel(logging.WARNING)
started, cpu = time.perf_counter(), time.process_time()
endpoints = [Endpoint(name="instant", base_url=base_url, model=model)]
dials = Dials(workers_per_model=int(workers), claim_size=32, flush_seconds=30, force=True)
if Corpus is None:
    report = ingest(
        synced_root=Path(synced), wiki_root=Path(wiki), collections=["tiny"],
        endpoints=endpoints, dials=dials, log=log,
    )
else:
    report = ingest(Corpus(Path(synced), ["tiny"]), Path(wiki), Fleet(endpoints), dials, log=log)
seconds = time.perf_counter() - started
children = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = time.process_time() - cpu + children.ru_utime + children.ru_stime
print(json.dumps({"count": report.count, "seconds": seconds, "cpu_s": cpu}))
"""


@dataclass
class Side:
    """One tree's runs: ``label``, where its tree is, its wiki, and each round's figures."""

    label: str
    tree: Path
    wiki: Path
    rates: list[float] = field(default_factory=list)  # docs/s
    cpu_ms: list[float] = field(default_factory=list)  # CPU ms per document


def paired_overhead(against: str, rounds: int, count: int) -> str:
    """Export ``against``, run both sides ``rounds`` times, alternating, and return the table."""
    with tempfile.TemporaryDirectory(prefix="wiki-assets-paired-") as scratch:
        tmp = Path(scratch)
        old_tree = tmp / "old"
        _export(against, old_tree)
        synced = tmp / "synced"
        progress(f"paired: writing {count} tiny documents")
        build_tiny_documents(synced, count)
        old = Side(f"old {_describe(against)}", old_tree, tmp / "wiki-old")
        new = Side(f"new {_describe('HEAD')}{_dirty()}", PROJECT_ROOT, tmp / "wiki-new")
        record = tmp / "requests.jsonl"  # (the server records nothing: its limit is 0)
        with instant_server("process", record, 0) as (base_url, reset, _stats):

            def run(side: Side) -> tuple[int, float, float]:
                reset()
                return _run_one(side, synced, base_url)

            for side in (old, new):
                progress(f"paired: {side.label}: first run (unmeasured: its wiki, its index)")
                run(side)
            for index in range(rounds):
                for side in (old, new) if index % 2 == 0 else (new, old):
                    done, seconds, cpu_s = run(side)
                    if done != count:
                        raise RuntimeError(f"{side.label}: {done} of {count} documents done")
                    side.rates.append(done / seconds)
                    side.cpu_ms.append(cpu_s * 1000 / done)
                    progress(
                        f"paired: round {index + 1} {side.label}: {done / seconds:.0f} docs/s, "
                        f"{cpu_s * 1000 / done:.2f} CPU ms/doc"
                    )
    return _table(old, new, count)


def _export(rev: str, into: Path) -> None:
    """The commit's tree, as ``git archive`` has it (no checkout: the repository is untouched)."""
    progress(f"paired: exporting {rev} into {into}")
    into.mkdir()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=PROJECT_ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _describe(rev: str) -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", rev],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _dirty() -> str:
    changes = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return " (with uncommitted changes)" if changes else ""


def _run_one(side: Side, synced: Path, base_url: str) -> tuple[int, float, float]:
    """One run of ``side``'s engine in a fresh process: (documents, seconds, CPU seconds)."""
    environment = {**os.environ, "PYTHONPATH": str(side.tree)}
    command = [
        sys.executable,
        "-c",
        RUN_ONE,
        str(side.tree),
        str(synced),
        str(side.wiki),
        base_url,
        INSTANT.model,
        str(OVERHEAD_IN_FLIGHT),
    ]
    finished = subprocess.run(
        command, cwd=side.tree, env=environment, capture_output=True, text=True
    )
    if finished.returncode != 0:
        raise RuntimeError(f"{side.label}: run failed:\n{finished.stderr[-3000:]}")
    figures = json.loads(finished.stdout.strip().splitlines()[-1])
    return int(figures["count"]), float(figures["seconds"]), float(figures["cpu_s"])


def _table(old: Side, new: Side, count: int) -> str:
    ratios = [n / o for n, o in zip(new.rates, old.rates, strict=True)]
    cpu_ratios = [n / o for n, o in zip(new.cpu_ms, old.cpu_ms, strict=True)]
    lines = [
        f"Paired rounds, {old.label} against {new.label}: instant server (process), {count} tiny "
        f"documents, {OVERHEAD_IN_FLIGHT} requests in flight, the re-run (b) of each side on a "
        "wiki of its own, each run a fresh process; rounds alternate which side runs first.",
        "",
        "| round | first | old docs/s | new docs/s | new / old | old CPU ms/doc | new CPU ms/doc |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for index, ratio in enumerate(ratios):
        lines.append(
            f"| {index + 1} | {'old' if index % 2 == 0 else 'new'} | {old.rates[index]:.0f} "
            f"| {new.rates[index]:.0f} | {ratio:.2f} | {old.cpu_ms[index]:.2f} "
            f"| {new.cpu_ms[index]:.2f} |"
        )
    lines += [
        f"| median | | {statistics.median(old.rates):.0f} | {statistics.median(new.rates):.0f} "
        f"| {statistics.median(ratios):.2f} | {statistics.median(old.cpu_ms):.2f} "
        f"| {statistics.median(new.cpu_ms):.2f} |",
        f"| min–max | | {_spread(old.rates, 0)} | {_spread(new.rates, 0)} "
        f"| {_spread(ratios, 2)} | {_spread(old.cpu_ms, 2)} | {_spread(new.cpu_ms, 2)} |",
        "",
        f"- median of the paired ratios new / old: {statistics.median(ratios):.2f} by docs/s "
        f"(rounds {_spread(ratios, 2)}), {statistics.median(cpu_ratios):.2f} by CPU ms per "
        f"document (rounds {_spread(cpu_ratios, 2)}; below 1: the new side spends less)",
    ]
    return "\n".join(lines)


def _spread(values: list[float], digits: int) -> str:
    return f"{min(values):.{digits}f}–{max(values):.{digits}f}"
