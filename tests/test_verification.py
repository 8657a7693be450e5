"""The verification pass (engine/verification/, the asset wiki_verification): judges from the fleet
settle the sentences the rules left unchecked, within a budget, and only where they get known
controls right; pages, index and catalog then say so. Simulated models over HTTP, no mocks."""

from __future__ import annotations

import contextlib
import shutil
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from tests.conftest import SAMPLE, Workspace, summarizer_for
from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.digest import write_digest
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.quality.sentences import OPENS
from wiki_assets.engine.verification.report import VerificationReport
from wiki_assets.engine.verification.verify import verify
from wiki_assets.engine.wiki.catalog import read_catalog
from wiki_assets.engine.wiki.escaping import escape
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimModel, SimServer
from wiki_assets.simulator.pages import UNSTATED

COLLECTIONS = ["people", "engineering"]
INVENTED = set(UNSTATED.values())


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, Path, Endpoint]:
    """Two collections of the sample written by an embellishing model (every summary ends in a
    sentence no document says, which the rules leave unchecked), indexed; the synced root, the
    wiki and the writer (its server gone: it is never asked to judge its own pages)."""
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    for collection in COLLECTIONS:
        shutil.copytree(SAMPLE / collection, synced / collection)
    writer = SimModel(model="writer", behaviour="embellishing", per_request_tps=20_000)
    with SimServer(writer) as writing:
        fleet = [Endpoint(name="writer", base_url=writing.base_url, model="writer")]
        dials = Dials(flagged_pages="keep", judge_share=0.0, flush_seconds=0.2, max_tokens=1024)
        ingest(corpus=Corpus(synced, COLLECTIONS), wiki_root=wiki, fleet=Fleet(fleet),
               dials=dials)  # fmt: skip
    index_wiki(wiki)
    return synced, wiki, fleet[0]


@contextlib.contextmanager
def judge_server(kind: str) -> Iterator[Endpoint]:
    sim = SimModel(model="judge", behaviour="faithful", judge=kind, per_request_tps=20_000)
    with SimServer(sim) as server:
        yield Endpoint(name="judge", base_url=server.base_url, model="judge")


def run(synced: Path, wiki: Path, fleet: list[Endpoint], budget: int = 100) -> VerificationReport:
    return verify(
        wiki_root=wiki, synced_root=synced, collections=COLLECTIONS, endpoints=fleet,
        connect=ModelClient, budget=budget,
    )  # fmt: skip


def counted(wiki: Path) -> Counter[tuple[str, str]]:
    """Each sentence of the catalog by (status, who checked it); the invented ones by
    ("invented", status)."""
    found: Counter[tuple[str, str]] = Counter()
    for page in read_catalog(wiki):
        for sentence in page["prose"]:
            found[sentence["status"], sentence["checked_by"]] += 1
            if sentence["text"] in INVENTED:
                found["invented", sentence["status"]] += 1
    return found


def test_a_judge_that_holds_settles_every_unchecked_sentence_and_the_pages_say_so(
    written: tuple[Path, Path, Endpoint],
) -> None:
    synced, wiki, writer = written
    before = counted(wiki)
    assert before["invented", "unchecked"] > 0 and not before["invented", "unsupported"]
    with judge_server("right") as right:
        report = run(synced, wiki, [writer, right])
        again = run(synced, wiki, [writer, right])
    after = counted(wiki)
    # Every page waiting was judged (the writer never judges its own pages); each invented
    # sentence is now unsupported, by the judge; nothing is left unchecked.
    assert report.waiting == report.judged > 0
    assert report.settled == before["unchecked", "rules"]
    assert after["invented", "unsupported"] == before["invented", "unchecked"]
    assert report.unchecked == after["unchecked", "rules"] == 0
    (judged_by,) = [j for j in report.judges if j.requests]
    assert judged_by.name == "judge" and judged_by.holding
    assert judged_by.controls_right == judged_by.controls >= 6
    # The supported share reported is the one a reader counts on the pages.
    total = sum(n for (status, _), n in after.items() if status != "invented")
    supported = sum(n for (status, _), n in after.items() if status == "supported")
    assert report.supported_share == pytest.approx(supported / total)
    # A page names its judge, and a page with a sentence found not stated is flagged.
    pages = [p.read_text("utf-8") for p in wiki.rglob("*.md") if ".wiki_assets" not in p.parts]
    judged = [page for page in pages if "checked by judge" in page]
    assert len(judged) == report.judged
    assert all('verdict: "flagged"' in page and "unsupported_prose" in page for page in judged)
    assert report.flagged == report.judged  # none of them was flagged before
    assert f"{report.judged} judged ({report.flagged} flagged by a verdict)" in report.line()
    false_marked = ("unsupported", "contradicted")
    assert not [
        page for page in read_catalog(wiki)
        if page["verdict"] == "ok" and any(s["status"] in false_marked for s in page["prose"])
    ]  # fmt: skip
    # Settled, the pages wait for nothing: a second pass sends no request.
    assert again.waiting == 0 and again.judges[1].requests == 0


def test_a_judge_that_fails_its_controls_settles_nothing(
    written: tuple[Path, Path, Endpoint],
) -> None:
    synced, wiki, writer = written
    pages = {p: p.read_bytes() for p in wiki.rglob("*.md")}
    with judge_server("coin") as coin:
        report = run(synced, wiki, [writer, coin])
    (judged_by,) = [j for j in report.judges if j.requests]
    assert judged_by.controls >= 6 and not judged_by.holding
    assert report.settled == report.judged == 0
    assert report.skipped["judge_not_holding"] > 0
    assert {p: p.read_bytes() for p in wiki.rglob("*.md")} == pages  # not a byte changed


def test_the_budget_bounds_the_pages_judged_and_the_rest_wait(
    written: tuple[Path, Path, Endpoint],
) -> None:
    synced, wiki, writer = written
    with judge_server("right") as right:
        report = run(synced, wiki, [writer, right], budget=2)
        rest = run(synced, wiki, [writer, right])  # the next pass takes the pages left
    assert report.judged == 2 and report.skipped["budget"] == report.waiting - 2
    assert report.unchecked > 0
    assert rest.waiting == report.waiting - 2 and rest.unchecked == 0


def test_a_model_never_judges_its_own_pages(
    written: tuple[Path, Path, Endpoint],
) -> None:
    synced, wiki, writer = written
    report = run(synced, wiki, [writer])  # the writer alone
    assert report.judged == 0 and report.skipped["no_judge"] == report.waiting > 0
    assert report.judges[0].requests == 0


def test_ingest_job_runs_the_pass_after_the_pages_and_records_it(
    workspace: Workspace, instance: dg.DagsterInstance
) -> None:
    """Through Dagster, as the daily job and the CLI run it: each model's pages are judged by
    the other; the asset's figures and checks are recorded."""
    for extra in [p for p in workspace.synced.iterdir() if p.name not in COLLECTIONS]:
        shutil.rmtree(extra) if extra.is_dir() else extra.unlink()
    dials = IngestConfig(flush_seconds=0.2, max_tokens=1024, judge_share=0.0,
                         flagged_pages="keep")  # fmt: skip
    one = SimModel(model="one", behaviour="embellishing", per_request_tps=20_000, judge="right")
    two = SimModel(model="two", behaviour="embellishing", per_request_tps=20_000, judge="right")
    with SimServer(one) as first, SimServer(two) as second:
        outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(first, second), dials)
    assert outcome.success, outcome.error
    event = instance.get_latest_materialization_event(dg.AssetKey("wiki_verification"))
    assert event is not None and event.asset_materialization is not None
    metadata = {k: v.value for k, v in event.asset_materialization.metadata.items()}
    assert metadata["pages_judged"] == metadata["pages_waiting"] > 0
    assert metadata["sentences_settled"] > 0 and metadata["sentences_unchecked"] == 0
    assert metadata["pages_flagged"] > 0 and metadata["pages_skipped"] == "none"
    checks = {
        key.name: instance.event_log_storage.get_latest_asset_check_execution_by_key([key])
        for key in (dg.AssetCheckKey(dg.AssetKey("wiki_verification"), name)
                    for name in ("judges_hold", "prose_settled"))
    }  # fmt: skip
    assert set(checks) == {"judges_hold", "prose_settled"}
    assert counted(workspace.wiki)["invented", "unsupported"] > 0


def test_the_digest_and_the_index_quote_only_verified_sentences_or_the_documents_opening(
    written: tuple[Path, Path, Endpoint],
) -> None:
    """Each page's line in the day's digest and in index.md is what a judge verified of its
    description or the document's own words; else the document's opening, saying so."""
    synced, wiki, writer = written
    with judge_server("right") as right:
        run(synced, wiki, [writer, right])
    day = datetime.now(UTC).date()
    files = write_digest(wiki, day)
    changes = [*files.digest.added, *files.digest.changed]
    assert changes
    index = (wiki / "index.md").read_text("utf-8")
    pages = {page["page"]: page for page in read_catalog(wiki)}
    for change in changes:
        page = pages[change.page]
        quotable = [
            s["text"] for s in page["prose"]
            if s["part"] == "description" and s["status"] == "supported"
            and (s["quoted"] or s["checked_by"] != "rules")
        ]  # fmt: skip
        if quotable:
            assert change.description == " ".join(quotable)
            # The simulator's careful judge supports only a sentence found in a line, and a
            # quote is one: every sentence quoted is the document's own.
            source = (synced / change.source).read_text("utf-8")
            assert all(text.rstrip(".") in source for text in quotable), change
        else:
            assert change.description.startswith(OPENS), change
        # index.md lists the page by the same line (its By collection section).
        listed = index.split("## By collection", 1)[1]
        assert f"]({change.page}) — {escape(change.description)}\n" in listed
