"""``wiki/catalog.jsonl``: one record per page, written with the index, stable and versioned."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, StateStore, ingest
from wiki_assets.engine.digest import write_digest
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.wiki.audit import audit_wiki, front_matter
from wiki_assets.engine.wiki.catalog import (
    CATALOG_FILE,
    CATALOG_VERSION,
    CatalogRecord,
    read_catalog,
)
from wiki_assets.engine.wiki.files import STATE_DIR
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimModel, SimServer


def test_the_catalog_lists_every_page_with_its_front_matter(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    (synced / "eng").mkdir(parents=True)
    (synced / "ops").mkdir()
    (synced / "eng" / "deploy.md").write_text("# Deploy\n\n" + "Deploys run nightly. " * 8)
    (synced / "eng" / "notes.txt").write_text("Release notes for the deploy tool. " * 8)
    (synced / "ops" / "oncall.md").write_text("# On-call\n\n" + "Pages go to on-call. " * 8)
    with SimServer(SimModel(model="sim", behaviour="faithful")) as server:
        report = ingest(
            corpus=Corpus(synced, ["eng", "ops"]),
            wiki_root=wiki,
            fleet=Fleet([Endpoint(name="sim", base_url=server.base_url, model="sim")]),
            dials=Dials(flush_seconds=0.2),
        )
    assert report.count == 3 and not report.failed
    index_wiki(wiki)
    first = (wiki / CATALOG_FILE).read_bytes()
    records = read_catalog(wiki)
    assert [record["page"] for record in records] == [
        "eng/deploy.md",
        "eng/notes.txt.md",
        "ops/oncall.md",
    ]
    assert set(records[0]) == set(CatalogRecord.__annotations__)
    for record in records:
        meta = front_matter((wiki / record["page"]).read_text(encoding="utf-8"))
        assert record["catalog_version"] == CATALOG_VERSION
        assert record["collection"] == record["source"].split("/")[0]
        assert record["source"] == meta["source"] and record["source_hash"] == meta["source_hash"]
        assert record["model"] == meta["model"] == "sim"
        assert record["generated"] == meta["generated"]
        assert record["verdict"] == meta["verdict"] and record["flags"] == meta["flags"]
        assert record["points_verified"] == meta["points_verified"]
        assert record["points_total"] == meta["points_total"]
        assert record["related"] == meta["related"]
        assert record["topics"] and isinstance(record["topics"], list)
        # The page's own title and description, unescaped (the page escapes them as markdown).
        assert record["title"] and record["description"]
    # Built again with nothing changed: the same bytes (stable order, nothing time-dependent).
    index_wiki(wiki)
    assert (wiki / CATALOG_FILE).read_bytes() == first
    # The catalog is not a page: the wiki's checks still pass.
    audit = audit_wiki(wiki, synced)
    assert audit.errors == 0 and audit.pages == 3


def test_the_catalog_follows_removed_pages_and_is_one_json_object_a_line(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    (synced / "c").mkdir(parents=True)
    for name in ("a", "b"):
        (synced / "c" / f"{name}.md").write_text(f"# {name.upper()}\n\n" + f"About {name}. " * 10)
    endpoints_model = SimModel(model="sim")
    with SimServer(endpoints_model) as server:
        endpoints = [Endpoint(name="sim", base_url=server.base_url, model="sim")]
        ingest(corpus=Corpus(synced, ["c"]), wiki_root=wiki, fleet=Fleet(endpoints),
               dials=Dials(flush_seconds=0.2))  # fmt: skip
        index_wiki(wiki)
        assert [r["page"] for r in read_catalog(wiki)] == ["c/a.md", "c/b.md"]
        (synced / "c" / "b.md").unlink()
        ingest(corpus=Corpus(synced, ["c"]), wiki_root=wiki, fleet=Fleet(endpoints),
               dials=Dials(flush_seconds=0.2))  # fmt: skip
    index_wiki(wiki)
    lines = (wiki / CATALOG_FILE).read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["page"] for line in lines] == ["c/a.md"]


def test_each_page_carries_its_language_in_the_catalog_and_the_digest(tmp_path: Path) -> None:
    """A bot that posts to a Korean and an English channel reads each page's language from the
    catalog and the day's digest: the language the page is written in, as a code."""
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    (synced / "c").mkdir(parents=True)
    (synced / "c" / "leave.md").write_text("# Leave\n\n" + "Annual leave is 25 days. " * 8)
    (synced / "c" / "leave-ko.md").write_text("# 휴가\n\n" + "연차 휴가는 25일입니다. " * 8)
    with SimServer(SimModel(model="sim", behaviour="faithful")) as server:
        ingest(corpus=Corpus(synced, ["c"]), wiki_root=wiki,
               fleet=Fleet([Endpoint(name="sim", base_url=server.base_url, model="sim")]),
               dials=Dials(flush_seconds=0.2), clock=lambda: 1_764_500_000.0)  # fmt: skip
    index_wiki(wiki)
    languages = {record["page"]: record["language"] for record in read_catalog(wiki)}
    assert languages == {"c/leave-ko.md": "ko", "c/leave.md": "en"}
    day = datetime.fromtimestamp(1_764_500_000.0, UTC).date()
    files = write_digest(wiki, day)
    added = json.loads((wiki / files.json).read_text(encoding="utf-8"))["added"]
    assert {item["page"]: item["language"] for item in added} == languages


def test_a_history_from_before_gains_the_language_column(tmp_path: Path) -> None:
    """A state store written before pages' events had a language: opening it adds the column,
    and its old events read as ''."""
    state = tmp_path / "wiki" / STATE_DIR
    state.mkdir(parents=True)
    with sqlite3.connect(state / "journal.sqlite") as db:
        db.executescript(
            "CREATE TABLE page_events (seq INTEGER PRIMARY KEY, at REAL NOT NULL, event TEXT NOT"
            " NULL, collection TEXT NOT NULL, path TEXT NOT NULL, page TEXT NOT NULL, content_hash"
            " TEXT NOT NULL, title TEXT NOT NULL, description TEXT NOT NULL, verdict TEXT NOT"
            " NULL, flags TEXT NOT NULL);"
            "INSERT INTO page_events (at, event, collection, path, page, content_hash, title,"
            " description, verdict, flags) VALUES (1.0, 'added', 'c', 'c/a.md', 'c/a.md', 'h',"
            " 'A', 'About a.', 'ok', '[]');"
        )
    with Journal(StateStore(state)) as journal:
        (event,) = journal.history.between(0.0, 2.0)
    assert event.title == "A" and event.language == ""
