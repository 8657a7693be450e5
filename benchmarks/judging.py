"""The judge path on the simulator: what a judge from the fleet settles, how often it is right,
and what it costs in requests and docs/s.

Run ``python -m benchmarks.judging [--docs 300] [--workers 4]``.

The fleet is the dispatch benchmark's two simulated servers over HTTP ("fast" and "slow",
:mod:`benchmarks.throughput`), on its varied copies of the sample corpus. Both write the
``embellishing`` page: a faithful page (its sentences are the document's) whose summary ends in
one sentence no document says, in words the rules cannot place, so the rules leave it unchecked
and only a judge can say it is not stated. Every other sentence is true. Rows:

* **no judge** (``judge_share: 0``): the rules alone;
* **right judge**: each model judges the other's pages as the simulator's careful checker;
* **coin judge**: the same, but each verdict is another one half of the time (per sentence).

Each row runs ``flagged_pages: keep`` (so a judge's flag does not also cost a second opinion)
on a fresh wiki, and reads the pages' prose back from ``catalog.jsonl``. Columns: docs/s,
requests per document, pages judged (the judge only uses idle workers, so how many pages it
reaches depends on idle capacity, not only on the ``judge_share`` budget), the invented
sentences a judge marked unsupported (caught), true sentences a judge marked contradicted or
unsupported (false alarms), and the controls each judge got right.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.documents import build_documents
from benchmarks.harness import progress
from benchmarks.throughput import FAST, SLOW
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.wiki.catalog import read_catalog
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimServer
from wiki_assets.simulator.pages import UNSTATED

ROWS = (("no judge", None), ("right judge", "right"), ("coin judge", "coin"))


def run_row(
    synced: Path, wiki: Path, docs: int, workers: int, claim: int, judge: str | None
) -> str:
    sims = [
        dataclasses.replace(sim, behaviour="embellishing", judge=judge or "right")
        for sim in (FAST, SLOW)
    ]
    dials = Dials(
        workers_per_model=workers, claim_size=claim, flush_seconds=30, max_tokens=400,
        flagged_pages="keep", judge_share=0.0 if judge is None else Dials().judge_share,
    )  # fmt: skip
    with SimServer(sims[0]) as fast, SimServer(sims[1]) as slow:
        endpoints = [
            Endpoint(name=s.sim.model, base_url=s.base_url, model=s.sim.model) for s in (fast, slow)
        ]
        started = time.perf_counter()
        report = ingest(
            corpus=Corpus(synced, ["bench"]), wiki_root=wiki, fleet=Fleet(endpoints),
            dials=dials,
        )  # fmt: skip
        seconds = time.perf_counter() - started
    index_wiki(wiki)
    invented = set(UNSTATED.values())
    caught = false_alarms = judged_true = 0
    for record in read_catalog(wiki):
        for sentence in record["prose"]:
            if sentence["checked_by"] == "rules":
                continue
            wrong = sentence["status"] in ("contradicted", "unsupported")
            if sentence["text"] in invented:
                caught += sentence["status"] == "unsupported"
            else:
                judged_true += 1
                false_alarms += wrong
    pages = report.judgements
    controls = sum(m.tally.controls for m in report.models)
    right = sum(m.tally.controls_right for m in report.models)
    rate = report.count / seconds if seconds else 0.0
    label = next(name for name, kind in ROWS if kind == judge)
    progress(f"{label}: {report.count} docs in {seconds:.1f} s")
    return (
        f"| {label} | {report.count} | {rate:.2f} | {report.requests_per_doc or 0:.2f} | "
        f"{pages} ({pages / docs:.0%}) | {caught} | {false_alarms} of {judged_true} | "
        f"{right} of {controls} |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--claim", type=int, default=32, help="claim_size")
    args = parser.parse_args(argv)
    lines = [
        "| row | docs | docs/s | requests/doc | pages judged | invented sentences caught "
        "| true sentences a judge flagged | controls right |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="wiki-assets-judging-") as scratch:
        root = Path(scratch)
        build_documents(root / "synced", args.docs)
        for index, (_, judge) in enumerate(ROWS):
            wiki = root / f"wiki-{index}"
            lines.append(run_row(root / "synced", wiki, args.docs, args.workers, args.claim, judge))
    print(
        f"{args.docs} documents, W = {args.workers}, claim {args.claim}; every page has one "
        "invented sentence.\n"
    )
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
