"""What a flagged page becomes (the ``flagged_pages`` dial), with real simulated models over HTTP:
``retry`` asks another model of the fleet once and keeps the better answer, ``keep`` publishes it
flagged, ``extract`` replaces it by the document's own title, headings and opening sentences."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
from conftest import SAMPLE, Workspace, summarizer_for

from wiki_assets.defs.assets import IngestConfig
from wiki_assets.defs.runner import sync_then_ingest
from wiki_assets.engine import Dials, Endpoint, ingest
from wiki_assets.engine.corpus import title_of
from wiki_assets.engine.quality.extract import extract
from wiki_assets.engine.report import IngestReport
from wiki_assets.engine.wiki.audit import front_matter, pages_of
from wiki_assets.simulator import SimModel, SimServer

COLLECTIONS = ["people", "product"]  # 12 documents of real text, about 300 tokens each
# Their pages are real text of about 300 tokens: room for a whole page (1024: the faithful model
# quotes at length, and at 768 two Korean documents of the whole sample reach the cap).
DIALS = {"flush_seconds": 0.2, "workers_per_model": 2, "claim_size": 2, "max_tokens": 1024}


def fabricating() -> SimModel:
    return SimModel(model="fabricating", behaviour="fabricating", per_request_tps=5_000)


def faithful(**faults: object) -> SimModel:
    return SimModel(model="faithful", behaviour="faithful", per_request_tps=5_000, **faults)  # type: ignore[arg-type]


def sample(tmp_path: Path, documents: int | None) -> Path:
    """The sample's :data:`COLLECTIONS`, or only its first ``documents`` of them."""
    synced = tmp_path / "synced"
    for collection in COLLECTIONS:
        shutil.copytree(SAMPLE / collection, synced / collection)
    if documents is not None:
        for extra in sorted(p for p in synced.rglob("*") if p.is_file())[documents:]:
            extra.unlink()
    return synced


def run(
    tmp_path: Path,
    servers: list[SimServer],
    flagged_pages: str,
    documents: int | None = None,
    **endpoint: object,
) -> tuple[IngestReport, dict[str, dict[str, object]]]:
    """Ingest the sample's collections; the report and each page's front matter by page."""
    report = ingest(
        synced_root=sample(tmp_path, documents),
        wiki_root=tmp_path / "wiki",
        collections=COLLECTIONS,
        endpoints=[
            Endpoint(name=s.sim.model, base_url=s.base_url, model=s.sim.model, **endpoint)  # type: ignore[arg-type]
            for s in servers
        ],
        dials=Dials(flagged_pages=flagged_pages, **DIALS),  # type: ignore[arg-type]
    )
    pages = {
        page.relative_to(tmp_path / "wiki").as_posix(): front_matter(page.read_text("utf-8"))
        for page in pages_of(tmp_path / "wiki")
    }
    return report, pages


def stats(report: IngestReport) -> dict[str, object]:
    return {m.name: m for m in report.models}


def test_retry_has_the_faithful_model_answer_what_the_fabricating_one_got_wrong(
    workspace: Workspace, instance: dg.DagsterInstance
) -> None:
    # The default dial, through Dagster: the fabricating model's pages are asked again, of the
    # faithful model, whose answers are kept; nothing is left for review.
    assert IngestConfig().flagged_pages == "retry"
    dials = IngestConfig(**DIALS)  # type: ignore[arg-type]
    with SimServer(faithful()) as one, SimServer(fabricating()) as other:
        outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(one, other), dials)
        answered = one.snapshot().answered, other.snapshot().answered
    assert outcome.success, outcome.error
    metadata = outcome.metadata
    fabricated = metadata["model/sim1/docs"]
    assert fabricated > 0
    # The fabricating model's quality still shows in its figures; no page stays flagged.
    assert metadata["model/sim1/flagged"] == fabricated
    assert metadata["flagged"] == 0
    # Every document was answered by the faithful model in the end: its own and the others'.
    documents = len(workspace.documents())
    assert metadata["model/sim0/docs"] == documents
    assert answered[0] >= documents and answered[1] >= fabricated
    for page in pages_of(workspace.wiki):
        meta = front_matter(page.read_text(encoding="utf-8"))
        assert meta["model"] == "faithful" and meta["verdict"] == "ok", page
        assert meta["summarized"] is True
    index = (workspace.wiki / "index.md").read_text(encoding="utf-8")
    assert "## Needs review" not in index


def test_retry_counts_second_opinions_per_model(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad, SimServer(faithful()) as good:
        report, pages = run(tmp_path, [bad, good], "retry")
    by = stats(report)
    fabricated = by["fabricating"].docs  # type: ignore[attr-defined]
    assert fabricated > 0 and report.count == len(pages) == 12
    assert report.second_opinions == fabricated
    assert by["faithful"].second_opinions == by["faithful"].second_opinions_kept == fabricated  # type: ignore[attr-defined]
    assert by["fabricating"].second_opinions == 0  # type: ignore[attr-defined]
    assert report.flagged == 0 and report.failed == [] and report.unfinished == 0
    assert report.to_dict()["second_opinions"] == fabricated
    assert report.to_dict()["models"]["faithful"]["second_opinions_kept"] == fabricated
    assert {meta["model"] for meta in pages.values()} == {"faithful"}


def test_keep_leaves_the_fabricating_models_pages_flagged(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad, SimServer(faithful()) as good:
        report, pages = run(tmp_path, [bad, good], "keep")
    fabricated = stats(report)["fabricating"].docs  # type: ignore[attr-defined]
    flagged = [name for name, meta in pages.items() if meta["verdict"] == "flagged"]
    assert fabricated > 0 and len(flagged) == fabricated == report.flagged
    assert all(pages[name]["model"] == "fabricating" for name in flagged)
    assert report.second_opinions == 0 and report.count == 12


def test_extract_replaces_flagged_pages_by_the_documents_own_words(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad, SimServer(faithful()) as good:
        report, pages = run(tmp_path, [bad, good], "extract")
    fabricated = stats(report)["fabricating"].docs  # type: ignore[attr-defined]
    extractive = {name: meta for name, meta in pages.items() if meta["summarized"] is False}
    assert fabricated > 0 and len(extractive) == fabricated == report.flagged
    assert report.second_opinions == 0
    for name, meta in pages.items():
        if name not in extractive:
            assert meta["verdict"] == "ok" and meta["model"] == "faithful", name
    for name, meta in extractive.items():
        # The verdict and its reasons stay (Needs review lists why); nothing a model wrote shows.
        assert meta["verdict"] == "flagged" and "unverified_points" in meta["flags"], name
        assert meta["points_total"] == 0 and meta["tags"] == [] and meta["related"] == []
        text = (tmp_path / "wiki" / name).read_text(encoding="utf-8")
        assert "[!warning] Not summarized: the model's answer was flagged" in text
        document = (tmp_path / "synced" / str(meta["source"])).read_text(encoding="utf-8")
        taken = extract(document, title_of(document, str(meta["source"])))
        assert taken.opening and taken.opening.split()[0] in text
        assert all(f"- {heading}" in text for heading in taken.headings)


def test_a_one_model_fleet_keeps_its_flagged_pages(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad:
        report, pages = run(tmp_path, [bad], "retry")
        answered = bad.snapshot().answered
    assert report.count == len(pages) == 12 == answered  # asked once per document, no more
    assert report.second_opinions == 0 and report.flagged == 12
    assert all(meta["verdict"] == "flagged" for meta in pages.values())


def test_a_second_opinion_that_fails_leaves_the_first_answer(tmp_path: Path) -> None:
    # The faithful model fails every request (an outage: the document is put back, and the
    # fabricating model answers it); each second opinion it is asked fails too. The fabricating
    # model's answers were journaled first: their pages stand, flagged, and nothing failed.
    with SimServer(fabricating()) as bad, SimServer(faithful(error_rate=1.0)) as broken:
        report, pages = run(tmp_path, [bad, broken], "retry", documents=2, max_retries=0)
    assert report.count == len(pages) == 2 and report.failed == [] and report.unfinished == 0
    assert report.second_opinions == 2 and report.second_opinions_answered == 0
    assert report.flagged == 2
    assert all(meta["model"] == "fabricating" for meta in pages.values())
