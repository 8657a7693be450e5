"""Wiki quality on the sample corpus with the simulated server: every page parses and carries the
promised front matter, every document has a page or a recorded reason, links go only to candidate
documents and never dangle (also after a document is deleted), related documents are chosen across
collections, index.md lists every page, backlinks mirror links, Korean documents are asked for
Korean pages, and a document longer than the context is summarized from all of its parts."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import dagster as dg
from conftest import Workspace, summarizer_for

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.wiki.files import page_for
from wiki_assets.engine.wiki.links import dangling_links
from wiki_assets.simulator import SimModel, SimServer

FAST = IngestConfig(flush_seconds=0.2, claim_size=4)


def front_matter(page: Path) -> dict[str, object]:
    text = page.read_text(encoding="utf-8")
    assert text.startswith("---\n"), page
    header = text.split("\n---\n", 1)[0].splitlines()[1:]
    return {key: json.loads(value) for key, value in (line.split(": ", 1) for line in header)}


def test_pages_links_index_and_backlinks(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST)
    assert outcome.success, outcome.error
    documents = workspace.documents()
    assert workspace.pages() == sorted([*(page_for(d) for d in documents), "index.md"])

    links: dict[str, list[str]] = {}
    for document in documents:
        page = workspace.wiki / page_for(document)
        meta = front_matter(page)
        assert meta["source"] == document and meta["model"] == sim.sim.model
        for key in ("title", "description", "source_hash", "prompt_version", "generated"):
            assert meta[key], (document, key)
        links[page_for(document)] = list(meta["related"])  # type: ignore[arg-type]
    assert dangling_links(workspace.wiki) == []
    linked = [(source, target) for source, targets in links.items() for target in targets]
    assert linked, "the sample corpus has related documents"
    assert any(s.split("/")[0] != t.split("/")[0] for s, t in linked), "links cross collections"
    # Backlinks mirror links: every link shows up on its target's page.
    for source, target in linked:
        body = (workspace.wiki / target).read_text(encoding="utf-8")
        assert "## Backlinks" in body and quote(Path(source).name) in body  # as links quote it

    index = (workspace.wiki / "index.md").read_text(encoding="utf-8")
    assert "## By collection" in index and "## By topic" in index
    for document in documents:
        assert f"({quote(page_for(document))})" in index, document

    # Every document was asked for a page in its own language.
    for text in sim.request_texts():
        language = "Korean" if "-ko." in text.split("\n", 1)[0] else "English"
        assert f"Write every field in {language}." in text, text[:200]

    # Delete a document that others link to: no link may dangle afterwards.
    target = max({t for _, t in linked}, key=lambda t: sum(1 for _, x in linked if x == t))
    source_path = next(d for d in documents if page_for(d) == target)
    (workspace.synced / source_path).unlink()
    again = sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST)
    assert again.success and again.metadata["removed"] == 1
    assert not (workspace.wiki / target).exists()
    assert dangling_links(workspace.wiki) == []
    assert target not in (workspace.wiki / "index.md").read_text(encoding="utf-8")


def test_language_follows_the_document(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    (synced / "c").mkdir(parents=True)
    (synced / "c" / "ko.md").write_text("# 휴가 신청\n\n휴가는 최소 2주 전에 신청해야 합니다. " * 5)
    (synced / "c" / "en.md").write_text("# Leave\n\nRequest leave two weeks ahead. " * 5)
    with SimServer(SimModel(model="sim")) as server:
        ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([Endpoint(name="sim", base_url=server.base_url, model="sim")]),
            dials=Dials(flush_seconds=0.5),
        )
        asked = {
            line.removeprefix("Write every field in ").rstrip("."): text
            for text in server.request_texts()
            for line in text.splitlines()
            if line.startswith("Write every field in ")
        }
    assert front_matter(tmp_path / "wiki" / "c" / "ko.md")["language"] == "Korean"
    assert front_matter(tmp_path / "wiki" / "c" / "en.md")["language"] == "English"
    assert set(asked) == {"Korean", "English"}


def test_long_document_is_summarized_from_all_its_parts(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    (synced / "c").mkdir(parents=True)
    paragraphs = [f"Section {i}: the deploy freeze rule number {i} applies." for i in range(400)]
    (synced / "c" / "long.md").write_text("# Long handbook\n\n" + "\n\n".join(paragraphs))
    with SimServer(SimModel(model="small", context_tokens=2048)) as server:
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet(
                [
                    Endpoint(
                        name="small", base_url=server.base_url, model="small", context_tokens=2048
                    )
                ]
            ),
            dials=Dials(flush_seconds=0.5, max_tokens=256),
        )
        asked = server.request_log()
    meta = front_matter(tmp_path / "wiki" / "c" / "long.md")
    assert report.count == 1 and not report.failed
    parts = int(meta["parts"])  # type: ignore[call-overload]
    assert parts >= 3 and "input_cut" not in meta  # nothing is cut: every part was read
    # One request per part, then the page: every section of the document was read.
    assert len(asked) == parts + 1
    assert f"in {parts} parts" in (tmp_path / "wiki" / "c" / "long.md").read_text()


def test_structured_output_falls_back_when_json_schema_is_refused(tmp_path: Path) -> None:
    """Like llama.cpp's server: `json_schema` answered with HTTP 500, `json_object` accepted."""
    synced = tmp_path / "synced"
    (synced / "c").mkdir(parents=True)
    for i in range(6):
        (synced / "c" / f"d{i}.md").write_text(f"# Note {i}\n\nA note about deploys. " * 5)
    picky = SimModel(model="picky", json_schema_support=False)
    with SimServer(picky) as server:
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet(
                [Endpoint(name="picky", base_url=server.base_url, model="picky", max_retries=0)]
            ),
            dials=Dials(workers_per_model=2, flush_seconds=0.5),
        )
        stats = server.snapshot()
    assert report.count == 6 and not report.failed
    # The first requests learn that json_schema is refused; the client then keeps json_object.
    assert 1 <= stats.rejected <= 2 and stats.answered == 6
    assert all(front_matter(p)["description"] for p in (tmp_path / "wiki" / "c").glob("*.md"))
