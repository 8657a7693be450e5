"""The wiki's checks, as Dagster asset checks in a real run and as `wiki-assets check` over the
files: each passes on a sound wiki, and each fails, with its severity and its findings, on a wiki
broken the way it guards against."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dagster as dg
from conftest import Workspace, summarizer_for

from wiki_assets.defs.assets import IngestConfig
from wiki_assets.defs.runner import sync_then_ingest
from wiki_assets.engine.wiki.audit import (
    EVERY_DOCUMENT_PAGED,
    EVERY_PAGE_LISTED,
    FLAGGED_SHARE,
    NO_DANGLING_LINKS,
    NO_FAILED_DOCUMENTS,
    PAGES_CURRENT,
    WikiCheck,
    audit_wiki,
)
from wiki_assets.simulator import SimServer

FAST = IngestConfig(flush_seconds=0.2, workers_per_model=4, claim_size=4)


def evaluation(instance: dg.DagsterInstance, asset: str, check: WikiCheck):
    record = instance.get_latest_asset_check_evaluation_record(
        dg.AssetCheckKey(dg.AssetKey(asset), check.name)
    )
    assert record is not None and record.event is not None, f"{asset}:{check.name} never ran"
    data = record.event.dagster_event.event_specific_data  # type: ignore[union-attr]
    return data


def check_cli(workspace: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "check", "--synced", str(workspace.synced),
         "--wiki", str(workspace.wiki), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home)},
    )  # fmt: skip


def test_asset_checks_run_with_the_ingest_job_and_record_failures(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    (workspace.synced / "product" / "logo.png.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST)
    assert outcome.success, outcome.error

    pages = len(workspace.pages()) - 1  # index.md aside
    for check, checked in ((NO_DANGLING_LINKS, pages + 1), (EVERY_PAGE_LISTED, pages),
                           (PAGES_CURRENT, pages)):  # fmt: skip
        result = evaluation(instance, "wiki_index", check)
        assert result.passed, (check.name, result.metadata)
        assert result.metadata["checked"].value == checked
        assert result.metadata["problems"].value == 0
    # The document that failed has no page: the wiki's own check says so too, as a warning.
    unpaged = evaluation(instance, "wiki_index", EVERY_DOCUMENT_PAGED)
    assert not unpaged.passed and unpaged.severity == dg.AssetCheckSeverity.WARN
    assert unpaged.metadata["checked"].value == len(workspace.documents())
    assert "product/logo.png.txt: no page" in unpaged.metadata["found"].value
    failed = evaluation(instance, "wiki_pages", NO_FAILED_DOCUMENTS)
    assert not failed.passed
    assert failed.severity == dg.AssetCheckSeverity.WARN  # a bad document does not break the wiki
    assert failed.metadata["problems"].value == 1
    assert "product/logo.png.txt: binary file" in failed.metadata["found"].value


def test_check_command_exit_codes_follow_severity(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    assert sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST).success
    # (The default simulated model's pages repeat the prompt's words, so all are flagged:
    # flagged_share has its own test, with models that write better pages.)
    sound = check_cli(workspace, "--json", "--max-flagged-share", "1")
    assert sound.returncode == 0, sound.stdout + sound.stderr
    report = json.loads(sound.stdout)
    assert report["success"] and report["pages"] == len(workspace.pages()) - 1
    assert {check["check"] for check in report["checks"]} == {
        NO_DANGLING_LINKS.name, EVERY_PAGE_LISTED.name, PAGES_CURRENT.name,
        EVERY_DOCUMENT_PAGED.name, NO_FAILED_DOCUMENTS.name, FLAGGED_SHARE.name,
    }  # fmt: skip
    assert all(check["passed"] for check in report["checks"])

    # A source edited since its page was written: the page is stale, a warning (exit 0).
    source = workspace.synced / "people" / "onboarding-checklist.md"
    source.write_text(source.read_text(encoding="utf-8") + "\nA new paragraph.\n")
    stale = check_cli(workspace)
    assert stale.returncode == 0, stale.stdout
    assert "pages_current (warn):" in stale.stdout
    page = "people/onboarding-checklist.md"
    assert f"{page}: older than its source {page}" in stale.stdout

    # A page that others link to is deleted by hand: links dangle and the index lists a
    # missing page, an error (exit 1) naming each.
    linked = _a_linked_page(workspace)
    (workspace.wiki / linked).unlink()
    broken = check_cli(workspace, "--json")
    assert broken.returncode == 1
    checks = {check["check"]: check for check in json.loads(broken.stdout)["checks"]}
    assert not checks[NO_DANGLING_LINKS.name]["passed"]
    dangling = checks[NO_DANGLING_LINKS.name]["findings"]
    assert dangling and all(linked.split("/")[-1] in finding for finding in dangling)
    assert checks[EVERY_PAGE_LISTED.name]["passed"]  # the index still lists only what it knew


def test_a_page_missing_from_the_index_fails_every_page_listed(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    assert sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST).success
    index = workspace.wiki / "index.md"
    lines = index.read_text(encoding="utf-8").splitlines()
    dropped = next(line for line in lines if "onboarding-checklist.md)" in line)
    index.write_text("\n".join(line for line in lines if "onboarding-checklist.md)" not in line))

    audit = audit_wiki(workspace.wiki, workspace.synced)
    listed = audit.outcome(EVERY_PAGE_LISTED)
    assert listed.findings == ("people/onboarding-checklist.md",), dropped
    assert audit.outcome(NO_DANGLING_LINKS).passed and audit.errors == 1


def _a_linked_page(workspace: Workspace) -> str:
    """A page (not index.md) that some other page links to."""
    pages = [page for page in workspace.pages() if page != "index.md"]
    for page in pages:
        text = (workspace.wiki / page).read_text(encoding="utf-8")
        for other in pages:
            if other != page and f"{other.split('/')[-1]})" in text:
                return other
    raise AssertionError("no page links to another")
