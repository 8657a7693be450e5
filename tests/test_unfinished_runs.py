"""What a run leaves unfinished, the next run finishes, asking a model only for documents it has
no answer for: an index step that failed (the pages written, index.md not), index.md,
catalog.jsonl and pages deleted, answers journaled whose pages were never written. `wiki-assets
check` notices a document without a page. A full disk fails a run with "no space left on device:
<the wiki's folder>", whatever error it surfaced as (a task group's, SQLite's "cannot rollback"
over it), and the runs after it make the wiki whole again: with a real full tmpfs where this
machine lets a test mount one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
from conftest import (
    PROJECT,
    Workspace,
    check_cli,
    daily_tick,
    summarizer_for,
    write_project,
)

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.definitions import build_defs
from wiki_assets.defs.sync import PARTITION_RANGE_START
from wiki_assets.defs.sync.observe import CODE_VERSION_TAG
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine.errors import NO_SPACE
from wiki_assets.engine.state.journal import SUMMARIZED, Journal
from wiki_assets.engine.wiki.audit import (
    EVERY_DOCUMENT_PAGED,
    EVERY_PAGE_LISTED,
    NO_DANGLING_LINKS,
    audit_wiki,
)
from wiki_assets.engine.wiki.catalog import CATALOG_FILE
from wiki_assets.engine.wiki.files import INDEX_PAGE
from wiki_assets.engine.wiki.render import LAYOUT_VERSION
from wiki_assets.simulator import SimServer

FAST = IngestConfig(flush_seconds=0.2, workers_per_model=4, claim_size=4)


def whole(workspace: Workspace) -> None:
    """Every document has its page, index.md lists every page, no link dangles."""
    audit = audit_wiki(workspace.wiki, workspace.synced, workspace.corpus.state_store())
    for check in (NO_DANGLING_LINKS, EVERY_PAGE_LISTED, EVERY_DOCUMENT_PAGED):
        assert audit.outcome(check).passed, (check.name, audit.outcome(check).findings)
    assert (workspace.wiki / CATALOG_FILE).is_file()
    assert audit.pages == len(workspace.documents())


def test_an_index_step_that_failed_is_finished_by_the_next_run(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """The index step fails after the pages were written (index.md cannot be replaced: a folder
    stands in its way). With nothing left to summarize, the next run builds the index alone; it
    did not use to ("every collection is up to date", and index.md stayed missing)."""
    summarizer = summarizer_for(sim)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    (workspace.wiki / INDEX_PAGE).unlink()
    (workspace.wiki / INDEX_PAGE).mkdir()
    changed = workspace.synced / "people" / "leave-policy.md"
    changed.write_text(changed.read_text(encoding="utf-8") + "\nCarry-over ends in March.\n")

    failed = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert not failed.success and "Is a directory" in str(failed.error)
    assert failed.report["count"] == 1  # the page was written
    (workspace.wiki / INDEX_PAGE).rmdir()
    answered = sim.snapshot().answered

    healed = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert healed.success, healed.error
    assert healed.plan.pending == [] and healed.run_id is not None
    assert any("not built after the pages' last run" in why for why in healed.plan.repair)
    assert sim.snapshot().answered == answered  # no model was asked
    whole(workspace)
    run = instance.get_run_by_id(healed.run_id)
    assert run is not None and run.asset_selection == {dg.AssetKey("wiki_index")}

    # Then nothing is left: the run after it has nothing to do.
    again = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert again.run_id is None and again.plan.repair == []


def test_the_schedule_finishes_an_index_step_that_failed(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """The daily chain after a run whose index step failed: no collection to ingest, so the
    sensor after the sync run asks for a run of wiki_index alone (not "all collections are up to
    date"), which makes the wiki whole."""
    summarizer = summarizer_for(sim)
    defs = build_defs(workspace.corpus, summarizer)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    assert not daily_tick(defs, instance).run_requests  # up to date
    (workspace.wiki / INDEX_PAGE).unlink()
    (workspace.wiki / INDEX_PAGE).mkdir()
    changed = workspace.synced / "people" / "leave-policy.md"
    changed.write_text(changed.read_text(encoding="utf-8") + "\nCarry-over ends in March.\n")
    failed = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert not failed.success
    (workspace.wiki / INDEX_PAGE).rmdir()

    (request,) = daily_tick(defs, instance).run_requests
    assert request.asset_selection == [dg.AssetKey("wiki_index")]
    assert PARTITION_RANGE_START not in request.tags
    answered = sim.snapshot().answered
    result = defs.resolve_job_def("ingest_job").execute_in_process(
        instance=instance,
        run_config=request.run_config,
        tags=request.tags,
        asset_selection=request.asset_selection,
    )
    assert result.success and sim.snapshot().answered == answered
    whole(workspace)
    assert "up to date" in (daily_tick(defs, instance).skip_message or "")


def test_pages_of_another_layout_are_laid_out_again_without_a_model(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """An upgrade that changes how pages show the same answers (LAYOUT_VERSION, wiki_index's
    code version), with no document changed: the next run builds the index alone, which writes
    every page in this version's layout from its journaled answer, and asks no model."""
    summarizer = summarizer_for(sim)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    page = workspace.wiki / "people" / "leave-policy.md"
    laid_out = page.read_text(encoding="utf-8")
    # The wiki as an older version left it: a page in its layout, the index built by it.
    page.write_text(laid_out.replace("## Key points", "## Key Points"), encoding="utf-8")
    older = dg.AssetMaterialization("wiki_index", tags={CODE_VERSION_TAG: "2026-01-01"})
    instance.report_runless_asset_event(older)
    answered = sim.snapshot().answered

    healed = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert healed.success, healed.error
    assert healed.plan.pending == []
    assert healed.plan.repair == [
        f"the pages have another layout than this version's ({LAYOUT_VERSION})"
    ]
    assert sim.snapshot().answered == answered  # laid out again from the journaled answers
    assert page.read_text(encoding="utf-8") == laid_out
    whole(workspace)
    # The index it built has this version's layout: the run after it has nothing to do.
    again = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert again.run_id is None and again.plan.repair == []


def test_deleted_index_catalog_and_page_are_noticed_and_written_again(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    summarizer = summarizer_for(sim)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    (workspace.wiki / INDEX_PAGE).unlink()
    (workspace.wiki / CATALOG_FILE).unlink()
    lost = "people/onboarding-checklist.md"
    (workspace.wiki / lost).unlink()

    # `wiki-assets check` notices the document without a page, and why it has none.
    noticed = check_cli(workspace, "--json", "--max-flagged-share", "1")
    assert noticed.returncode == 1  # index.md is missing: every_page_listed is an error
    checks = {check["check"]: check for check in json.loads(noticed.stdout)["checks"]}
    paged = checks[EVERY_DOCUMENT_PAGED.name]
    assert not paged["passed"] and paged["severity"] == "warn"
    assert paged["findings"] == [
        f"{lost}: no page ({lost} is missing: the next run writes it again)"
    ]
    assert paged["checked"] == len(workspace.documents())

    answered = sim.snapshot().answered
    healed = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert healed.success, healed.error
    assert healed.plan.repair == [
        f"{INDEX_PAGE} is missing",
        f"{CATALOG_FILE} is missing",
        f"1 of {len(workspace.documents())} written pages are missing",
    ]
    assert sim.snapshot().answered == answered  # written again from the journaled answer
    whole(workspace)
    assert check_cli(workspace, "--max-flagged-share", "1").returncode == 0


def test_answers_journaled_without_their_pages_are_written_without_a_model(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """What a run that died while writing pages leaves: answers journaled, pages not written (the
    journal said "database or disk is full" at 53 of 60). Sync used to see no work ("0 to
    ingest"), and the wiki kept fewer pages than documents; now those collections are pending,
    and their run writes the pages from the answers."""
    summarizer = summarizer_for(sim)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    store = workspace.corpus.state_store()
    with Journal(store) as journal:
        entries = [entry for entry in journal.pages() if entry.collection == "engineering"]
        journal.record_summaries(entries)  # answered, page not yet written
        assert {journal.get(e.path).status for e in entries} == {SUMMARIZED}  # type: ignore[union-attr]
    for entry in entries:
        assert entry.page is not None
        (workspace.wiki / entry.page).unlink()
    unpaged = audit_wiki(workspace.wiki, workspace.synced, store).outcome(EVERY_DOCUMENT_PAGED)
    assert len(unpaged.findings) == len(entries)
    assert all("answered, page not written yet" in finding for finding in unpaged.findings)

    # `wiki-assets plan` says so too.
    project = write_project(workspace.home.parent / "p.yaml", sim, workspace.synced, workspace.wiki)
    planned = subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "plan"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home), "WIKI_ASSETS_CONFIG": str(project)},
    )
    assert planned.returncode == 0, planned.stderr
    assert (
        f"plan engineering: 0 of {len(entries)} to summarize · {len(entries)} pages to write "
        "from answers already given" in planned.stdout
    ), planned.stdout

    answered = sim.snapshot().answered
    healed = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert healed.success, healed.error
    assert healed.plan.pending == ["engineering"]
    assert healed.report["recovered"] == len(entries)
    assert healed.report["count"] == 0 and sim.snapshot().answered == answered
    whole(workspace)


def _can_mount_tmpfs(folder: Path) -> bool:
    if shutil.which("unshare") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    tried = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {folder}"],
        capture_output=True,
        timeout=30,
    )
    return tried.returncode == 0


def test_a_wiki_on_a_full_tmpfs_says_so_and_the_next_runs_make_it_whole(
    workspace: Workspace, sim: SimServer
) -> None:
    """The wiki on a small tmpfs (root and a mount namespace of its own, else skipped): a run
    that finds it full fails naming the folder; once space is freed, the next run finishes the
    pages, the index and the catalog, and `wiki-assets check` passes."""
    if not _can_mount_tmpfs(workspace.wiki):
        pytest.skip("cannot mount a tmpfs here (needs root and unshare)")
    config = workspace.home.parent / "run.yaml"
    config.write_text(
        json.dumps(
            {
                "resources": {"summarizer": {"config": {"models": [
                    {"name": "sim", "base_url": sim.base_url, "model": sim.sim.model}
                ]}}},
                "ops": {"wiki_pages": {"config": {"flush_seconds": 0.2}}},
            }
        )
    )  # fmt: skip
    cli = f"{sys.executable} -m wiki_assets.cli"
    flags = f"--synced {workspace.synced} --wiki {workspace.wiki} --config {config}"
    filler = workspace.wiki / "filler"
    script = f"""
set -u
mount -t tmpfs -o size=8m tmpfs {workspace.wiki}
{cli} ingest {flags} >/dev/null 2>&1 || exit 90
for f in $(find {workspace.synced} -type f); do echo "One more line." >> "$f"; done
# Fill the disk but for 160 KB: the run's journal, related index and pages do not fit.
free=$(df -k --output=avail {workspace.wiki} | tail -1)
dd if=/dev/zero of={filler} bs=1k count=$(( free - 160 )) 2>/dev/null
{cli} ingest {flags} --json
echo "::exit $?"
rm {filler}
{cli} ingest {flags} --json
echo "::exit $?"
{cli} check --synced {workspace.synced} --wiki {workspace.wiki} --json --max-flagged-share 1
echo "::exit $?"
find {workspace.wiki} -name '*.md' -not -path '*/.wiki_assets/*' | wc -l
"""
    done = subprocess.run(
        ["unshare", "-m", "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=PROJECT,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Each command's output, then its exit status.
    outputs, codes = [], []
    rest = done.stdout
    while "::exit " in rest:
        output, rest = rest.split("::exit ", 1)
        code, rest = rest.split("\n", 1)
        outputs.append(output)
        codes.append(int(code))
    full, healed, checked = (json.loads(output) for output in outputs)
    assert codes[0] == 1 and full["success"] is False, done.stdout + done.stderr
    assert full["error"].startswith(f"{NO_SPACE}: {workspace.wiki} "), full["error"]
    assert f"{NO_SPACE}: {workspace.wiki}" in done.stderr
    assert "cannot rollback" not in done.stderr and "ExceptionGroup" not in done.stderr
    assert codes[1] == 0 and healed["success"] and healed["failed"] == [], done.stderr
    assert codes[2] == 0 and checked["success"], checked
    assert all(check["passed"] for check in checked["checks"]), checked["checks"]
    assert int(rest.strip()) == len(workspace.documents()) + 1  # every page, and index.md
