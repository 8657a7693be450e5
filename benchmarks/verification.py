"""The verification pass on the simulator's judges: what it settles, within which budget, and
whether the supported share it reports is the one a reader counts on the pages.

The sample corpus is summarized by a simulated ``embellishing`` writer (a faithful page whose
summary ends in a sentence no document says, in words the rules cannot place: unchecked), with
no judge during the run. Then :func:`~wiki_assets.engine.verification.verify` runs with a second
simulated model as the judge, each of the simulator's presets in turn (``right``: a careful
checker; ``coin``: each verdict another one half of the time), and once with a budget of half
the pages waiting. Per row: pages waiting, the budget, pages judged, sentences settled and left,
how the invented sentences ended, the judge's controls, and the supported share the pass reports
beside the one counted from ``catalog.jsonl`` (every sentence of every page, as a reader sees
them).
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.verification.verify import verify
from wiki_assets.engine.wiki.catalog import read_catalog
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimModel, SimServer
from wiki_assets.simulator.pages import UNSTATED

PROJECT = Path(__file__).resolve().parents[1]
COLLECTIONS = ("engineering", "operations", "people", "product")


def _row(root: Path, judge_kind: str, share: float) -> str:
    synced, wiki = root / "synced", root / f"wiki-{judge_kind}-{share}"
    writer = SimModel(model="writer", behaviour="embellishing", per_request_tps=5_000)
    judge = SimModel(model="judge", behaviour="faithful", judge=judge_kind, per_request_tps=5_000)
    dials = Dials(flagged_pages="keep", judge_share=0.0, flush_seconds=0.2, max_tokens=1024)
    with SimServer(writer) as written, SimServer(judge) as judging:
        endpoints = [Endpoint(name="writer", base_url=written.base_url, model="writer")]
        ingest(corpus=Corpus(synced, list(COLLECTIONS)), wiki_root=wiki,
               fleet=Fleet(endpoints), dials=dials)  # fmt: skip
        index_wiki(wiki)  # as ingest_job does before the pass
        endpoints.append(Endpoint(name="judge", base_url=judging.base_url, model="judge"))
        waiting = verify(wiki_root=wiki, synced_root=synced, collections=COLLECTIONS,
                         endpoints=endpoints, connect=ModelClient, budget=0).waiting  # fmt: skip
        budget = max(1, round(waiting * share))
        report = verify(wiki_root=wiki, synced_root=synced, collections=COLLECTIONS,
                        endpoints=endpoints, connect=ModelClient, budget=budget)  # fmt: skip
    invented = set(UNSTATED.values())
    counted: Counter[str] = Counter()
    ended: Counter[str] = Counter()
    for page in read_catalog(wiki):
        for sentence in page["prose"]:
            counted[sentence["status"]] += 1
            if sentence["text"] in invented:
                ended[sentence["status"]] += 1
    read = counted["supported"] / sum(counted.values())
    reported = report.supported_share or 0.0
    (judged_by,) = [j for j in report.judges if j.name == "judge"]
    invented_said = ", ".join(f"{status} {n}" for status, n in sorted(ended.items()))
    return (
        f"| {judge_kind} | {report.waiting} | {budget} | {report.judged} | {report.settled} | "
        f"{report.unchecked} | {invented_said} | {judged_by.controls_right}/{judged_by.controls} "
        f"| {reported:.3f} | {read:.3f} |"
    )


def report() -> list[str]:
    lines = [
        "## The verification pass on the simulator's judges (the sample corpus)",
        "",
        "| judge | pages waiting | budget | pages judged | sentences settled | left unchecked "
        "| invented sentences ended | controls right | supported share reported | counted on "
        "the pages |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="wiki-assets-verification-") as scratch:
        root = Path(scratch)
        for collection in COLLECTIONS:
            shutil.copytree(PROJECT / "synced" / collection, root / "synced" / collection)
        for judge_kind, share in (("right", 1.0), ("right", 0.5), ("coin", 1.0)):
            lines.append(_row(root, judge_kind, share))
    return [*lines, ""]


if __name__ == "__main__":
    print("\n".join(report()))
