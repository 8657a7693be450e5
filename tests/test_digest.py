"""The pages' history and the daily digest built from it, on real ingests against the simulator;
each run's events are put on a day by the clock the engine is given."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from conftest import StoreFor

from wiki_assets.cli import main
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, StateStore, ingest
from wiki_assets.engine.digest import DayWindow, write_digest
from wiki_assets.engine.digest.render import NOTHING_CHANGED
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.wiki.audit import audit_wiki, front_matter
from wiki_assets.engine.wiki.escaping import escape
from wiki_assets.engine.wiki.files import STATE_DIR
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimModel, SimServer

DAY1, DAY2, DAY3 = date(2026, 11, 29), date(2026, 11, 30), date(2026, 12, 1)


def at(day: date, hour: int = 10, minute: int = 0) -> Callable[[], float]:
    moment = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC).timestamp()
    return lambda: moment


class Wiki:
    def __init__(self, root: Path, base_url: str, store_for: StoreFor) -> None:
        self.synced, self.wiki = root / "synced", root / "wiki"
        (self.synced / "c").mkdir(parents=True)
        self.endpoints = [Endpoint(name="sim", base_url=base_url, model="sim")]
        self.store = store_for(self.wiki)

    def put(self, name: str, text: str) -> None:
        (self.synced / "c" / name).write_text(text, encoding="utf-8")

    def ingest(self, clock: Callable[[], float], **dials: object) -> None:
        report = ingest(
            corpus=Corpus(self.synced, ["c"]), wiki_root=self.wiki,
            fleet=Fleet(self.endpoints), dials=Dials(flush_seconds=0.2, **dials),  # type: ignore[arg-type]
            clock=clock, store=self.store,
        )  # fmt: skip
        assert not report.failed and report.tally.stopped is None
        index_wiki(self.wiki, self.store)

    def description(self, page: str) -> str:
        meta = front_matter((self.wiki / page).read_text(encoding="utf-8"))
        return str(meta["description"])

    def digest(self, day: date, timezone: str = "UTC") -> tuple[str, dict[str, object]]:
        files = write_digest(self.wiki, day, timezone, self.store)
        markdown = (self.wiki / files.markdown).read_text(encoding="utf-8")
        return markdown, json.loads((self.wiki / files.json).read_text(encoding="utf-8"))


@pytest.fixture
def wiki(tmp_path: Path, store_for: StoreFor) -> Iterator[Wiki]:
    """A wiki of one collection ``c``, its state on SQLite or PostgreSQL."""
    with SimServer(SimModel(model="sim", behaviour="faithful")) as server:
        yield Wiki(tmp_path, server.base_url, store_for)


def pages(listed: object) -> list[str]:
    assert isinstance(listed, list)
    return [item["page"] for item in listed]


def test_a_day_of_additions_changes_and_removals_and_a_backfill_of_the_day_before(
    wiki: Wiki,
) -> None:
    wiki.put("alpha.md", "# Alpha\n\n" + "Alpha covers the deploy tool and its rollbacks. " * 6)
    wiki.put("beta.md", "# Beta\n\n" + "Beta is the billing service and its invoices. " * 6)
    wiki.put("gamma.md", "# Gamma\n\n" + "Gamma lists the office printers and their queues. " * 6)
    wiki.ingest(at(DAY1))
    beta_before = wiki.description("c/beta.md")
    # Day 2: beta rewritten, gamma deleted, delta new; alpha untouched (only its links may move).
    wiki.put("beta.md", "# Beta v2\n\n" + "Beta now bills by usage and mails receipts weekly. " * 6)
    (wiki.synced / "c" / "gamma.md").unlink()
    wiki.put("delta.md", "# Delta\n\n" + "Delta explains the on-call rota and paging rules. " * 6)
    wiki.ingest(at(DAY2, 9))
    beta_after = wiki.description("c/beta.md")
    assert beta_before != beta_after

    markdown, data = wiki.digest(DAY2)
    assert data["day"] == "2026-11-30" and data["timezone"] == "UTC"
    assert pages(data["added"]) == ["c/delta.md"]
    assert pages(data["changed"]) == ["c/beta.md"]
    assert pages(data["removed"]) == ["c/gamma.md"]
    changed = data["changed"][0]  # type: ignore[index]
    # The faithful model's prose is its documents' own sentences: every checked one supported.
    prose = data["prose_by_model"]["sim"]  # type: ignore[index]
    assert prose["checked"] > 0 and prose["supported"] == prose["checked"]
    assert "## Prose by model" in markdown and "- sim: " in markdown
    assert changed["old_description"] == beta_before and changed["description"] == beta_after
    assert changed["old_title"] == "Beta" and changed["title"] == "Beta v2"
    # Flagged: the day's written pages whose verdict is flagged, as their front matter says.
    flagged = [
        page for page in ("c/beta.md", "c/delta.md")
        if front_matter((wiki.wiki / page).read_text(encoding="utf-8"))["verdict"] == "flagged"
    ]  # fmt: skip
    assert pages(data["flagged"]) == flagged
    assert data["counts"] == {"added": 1, "changed": 1, "removed": 1, "flagged": len(flagged)}
    # The markdown links the pages that exist (relative to digest/), names the removed one.
    assert "## Added (1)\n\n- [Delta](../c/delta.md)" in markdown
    assert "- [Beta v2](../c/beta.md)\n  - was titled: Beta\n" in markdown
    assert f"  - before: {escape(beta_before)}\n  - now: {escape(beta_after)}\n" in markdown
    assert "## Removed (1)\n\n- Gamma (`c/gamma.md`)" in markdown
    assert "](../c/gamma.md)" not in markdown

    # A backfill of the day before, written after day 2: that day's digest, as it was.
    markdown, data = wiki.digest(DAY1)
    assert pages(data["added"]) == ["c/alpha.md", "c/beta.md", "c/gamma.md"]
    assert data["changed"] == [] and data["removed"] == []
    beta = next(item for item in data["added"] if item["page"] == "c/beta.md")  # type: ignore[union-attr]
    assert beta["description"] == beta_before and beta["title"] == "Beta"
    assert "- [Gamma](../c/gamma.md)" in markdown  # it existed that day

    # The digests are dated records, not pages: the wiki's checks pass although the day-1
    # digest links a page removed since.
    audit = audit_wiki(wiki.wiki, wiki.synced)
    assert audit.errors == 0, audit.outcomes
    assert audit.pages == 3


def test_a_day_without_changes_says_so_and_a_rerun_without_changes_is_no_event(
    wiki: Wiki,
) -> None:
    wiki.put("alpha.md", "# Alpha\n\n" + "Alpha covers the deploy tool and its rollbacks. " * 6)
    wiki.ingest(at(DAY1))
    # Day 3: every page summarized again (force) with the same answers, and relinked: no change.
    wiki.ingest(at(DAY3), force=True)
    markdown, data = wiki.digest(DAY3)
    assert data["counts"] == {"added": 0, "changed": 0, "removed": 0, "flagged": 0}
    assert NOTHING_CHANGED in markdown
    # A day before anything was ingested, on a wiki with no state at all: files still written.
    empty = wiki.wiki.parent / "empty-wiki"
    files = write_digest(empty, DAY2)
    assert NOTHING_CHANGED in (empty / files.markdown).read_text(encoding="utf-8")
    assert not (empty / STATE_DIR / "journal.sqlite").exists()


def test_a_page_the_model_did_not_summarize_is_listed_with_its_documents_first_sentence(
    tmp_path: Path, store_for: StoreFor
) -> None:
    # The fabricating model's answer is flagged and, with the extract dial, replaced by the
    # document's own words: no description, so the digest and the index quote its opening.
    with SimServer(SimModel(model="sim", behaviour="fabricating")) as server:
        wiki = Wiki(tmp_path, server.base_url, store_for)
        wiki.put(
            "alpha.md", "# Alpha\n\nAlpha covers the deploy tool and its rollbacks. It runs.\n"
        )
        wiki.ingest(at(DAY1), flagged_pages="extract")
    assert wiki.description("c/alpha.md") == ""
    markdown, data = wiki.digest(DAY1)
    (added,) = data["added"]  # type: ignore[misc]
    first = "Alpha covers the deploy tool and its rollbacks."
    assert added["description"] == first and f"— {first}\n" in markdown
    index = (wiki.wiki / "index.md").read_text(encoding="utf-8")
    assert f"(c/alpha.md) — {first}\n" in index


def test_the_day_is_a_calendar_day_in_the_timezone(wiki: Wiki) -> None:
    wiki.put("alpha.md", "# Alpha\n\n" + "Alpha covers the deploy tool and its rollbacks. " * 6)
    wiki.ingest(at(DAY2, 23, 30))  # 00:30 on day 3 in Berlin (UTC+1 in winter)
    assert pages(wiki.digest(DAY2)[1]["added"]) == ["c/alpha.md"]
    assert pages(wiki.digest(DAY3, "Europe/Berlin")[1]["added"]) == ["c/alpha.md"]
    assert pages(wiki.digest(DAY2, "Europe/Berlin")[1]["added"]) == []
    # A day with a clock change is 23 hours long.
    spring = DayWindow.of(date(2026, 3, 29), "Europe/Berlin")
    assert spring.end - spring.start == 23 * 3600


def test_a_store_from_before_the_history_starts_from_its_pages(wiki: Wiki) -> None:
    wiki.put("alpha.md", "# Alpha\n\n" + "Alpha covers the deploy tool and its rollbacks. " * 6)
    wiki.ingest(at(DAY1))
    before = wiki.description("c/alpha.md")
    store = wiki.store
    db = store.connect()
    db.execute("DROP TABLE page_events")  # as a store created before the table existed
    db.close()
    with Journal(store) as journal:  # opening it creates the table, with each page as it is
        assert [e.event for e in journal.history.between(0, 2**40)] == ["existing"]
    wiki.put("alpha.md", "# Alpha\n\n" + "Alpha now also covers canary deploys and alerts. " * 6)
    wiki.ingest(at(DAY2))
    _, data = wiki.digest(DAY2)
    assert pages(data["changed"]) == ["c/alpha.md"] and data["added"] == []
    assert data["changed"][0]["old_description"] == before  # type: ignore[index]


def test_a_page_added_and_removed_the_same_day_is_not_listed(wiki: Wiki) -> None:
    wiki.put("alpha.md", "# Alpha\n\n" + "Alpha covers the deploy tool and its rollbacks. " * 6)
    wiki.put("brief.md", "# Brief\n\n" + "Brief notes that lived for an hour only. " * 6)
    wiki.ingest(at(DAY2, 8))
    (wiki.synced / "c" / "brief.md").unlink()
    wiki.ingest(at(DAY2, 9))
    _, data = wiki.digest(DAY2)
    assert pages(data["added"]) == ["c/alpha.md"] and data["removed"] == []


def test_the_cli_writes_a_day_and_prints_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite: the CLI's default store.
    with SimServer(SimModel(model="sim", behaviour="faithful")) as server:
        wiki = Wiki(tmp_path, server.base_url, lambda root: StateStore(root / STATE_DIR))
        wiki.put("alpha.md", "# Alpha\n\n" + "Alpha covers the deploy tool. " * 6)
        wiki.ingest(at(DAY2, 23, 30))
    monkeypatch.setenv("WIKI_ASSETS_DIGEST_TIMEZONE", "Europe/Berlin")  # the day is Berlin's
    argv = ["digest", "--day", "2026-12-01", "--wiki", str(wiki.wiki), "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["timezone"] == "Europe/Berlin" and pages(printed["added"]) == ["c/alpha.md"]
    assert (wiki.wiki / "digest" / "2026-12-01.md").is_file()
    assert main([*argv[:3], "--timezone", "UTC", "--wiki", str(wiki.wiki), "--json"]) == 0
    assert pages(json.loads(capsys.readouterr().out)["added"]) == []
    assert main(["digest", "--day", "yesterday", "--wiki", str(wiki.wiki)]) == 1


def test_no_document_page_may_take_the_digest_folder(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    (synced / "digest").mkdir(parents=True)
    (synced / "digest" / "2026-11-30.md").write_text("# Not a digest\n\n" + "A team note. " * 8)
    with SimServer(SimModel(model="sim", behaviour="faithful")) as server:
        report = ingest(
            corpus=Corpus(synced, ["digest"]), wiki_root=tmp_path / "wiki",
            fleet=Fleet([Endpoint(name="sim", base_url=server.base_url, model="sim")]),
            dials=Dials(flush_seconds=0.2),
        )  # fmt: skip
    assert report.count == 0 and len(report.failed) == 1
    assert "reserved for the daily digests" in report.failed[0]["reason"]
    assert not (tmp_path / "wiki" / "digest" / "2026-11-30.md").exists()
