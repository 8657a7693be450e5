"""The wiki's checks, as Dagster asset checks in a real run and as `wiki-assets check` over the
files: each passes on a sound wiki, and each fails, with its severity and its findings, on a wiki
broken the way it guards against."""

from __future__ import annotations

import json
import logging
from typing import Any

import dagster as dg
from conftest import SAMPLE_COLLECTIONS, Workspace, check_cli, summarizer_for
from dagster._core.storage.asset_check_execution_record import (
    AssetCheckExecutionRecord,
    AssetCheckExecutionRecordStatus,
)

from wiki_assets.cli.history import compared_runs, runs_table
from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.names import WIKI_PAGES
from wiki_assets.defs.resources import ModelConfig, SummarizerResource
from wiki_assets.defs.tags import MODELS_OUT_TAG
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.defs.wiki_pages.checks import MODELS_IN_SERVICE, flagged_by_collection
from wiki_assets.engine.llm.child_server import free_port
from wiki_assets.engine.wiki.audit import (
    EVERY_DOCUMENT_PAGED,
    EVERY_PAGE_LISTED,
    FLAGGED_SHARE,
    NO_DANGLING_LINKS,
    NO_FAILED_DOCUMENTS,
    PAGES_CURRENT,
    WikiCheck,
    audit_wiki,
    flagged_pages,
)
from wiki_assets.simulator import SimServer

FAST = IngestConfig(flush_seconds=0.2, workers_per_model=4, claim_size=4)
FIRST_FORCED = IngestConfig(flush_seconds=0.2, workers_per_model=4, claim_size=4, force=True)


def evaluation(instance: dg.DagsterInstance, asset: str, check: WikiCheck):
    record = instance.get_latest_asset_check_evaluation_record(
        dg.AssetCheckKey(dg.AssetKey(asset), check.name)
    )
    assert record is not None and record.event is not None, f"{asset}:{check.name} never ran"
    data = record.event.dagster_event.event_specific_data  # type: ignore[union-attr]
    return data


def run_figures(instance: dg.DagsterInstance, run_id: str) -> dict[str, Any]:
    """The figures a run recorded on ``wiki_pages`` (its observation), as readers take them."""
    (record,) = [
        r
        for r in instance.get_records_for_run(
            run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION
        ).records
        if r.asset_key == WIKI_PAGES
    ]
    assert record.asset_observation is not None
    return md.plain(record.asset_observation.metadata)


def partition_results(
    instance: dg.DagsterInstance, check: WikiCheck, run_id: str
) -> dict[str | None, AssetCheckExecutionRecord]:
    """The results of a ``wiki_pages`` check that the instance stores for one run, by partition:
    a record planned per partition when the run started, and completed by its result."""
    key = dg.AssetCheckKey(dg.AssetKey("wiki_pages"), check.name)
    records = instance.event_log_storage.get_asset_check_execution_history(key, limit=1000)
    ours = [record for record in records if record.run_id == run_id]
    by_partition = {record.partition: record for record in ours}
    assert len(by_partition) == len(ours), "one result per partition"
    return by_partition


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
    # One run over every collection: each partition has its own result, none skipped; only
    # `product` holds the binary file.
    collections = instance.get_dynamic_partitions("collections")
    assert outcome.run_id and len(collections) == len(SAMPLE_COLLECTIONS)
    results = partition_results(instance, NO_FAILED_DOCUMENTS, outcome.run_id)
    assert set(results) == set(collections)
    for partition, record in results.items():
        assert record.event is not None
        data = record.event.dagster_event.event_specific_data  # type: ignore[union-attr]
        if partition == "product":
            assert record.status == AssetCheckExecutionRecordStatus.FAILED
            assert data.severity == dg.AssetCheckSeverity.WARN  # a bad document: the wiki stands
            assert data.metadata["problems"].value == 1
            assert "product/logo.png.txt: binary file" in data.metadata["found"].value
        else:
            assert record.status == AssetCheckExecutionRecordStatus.SUCCEEDED, partition
            assert data.metadata["problems"].value == 0
    # Each check step yields its (empty) output: no "did not yield" note, in the UI's event log
    # either.
    logged = instance.all_logs(outcome.run_id)
    assert [e for e in logged if "did not yield" in e.user_message] == []


def test_a_run_over_several_partitions_records_a_result_for_each_and_none_skipped(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """What the UI shows per check of a run over several collections: passed or warning for every
    partition (Dagster's check state), never "Skipped", and no result without a partition."""
    from dagster._core.definitions.partitions.context import partition_loading_context
    from dagster._core.storage.asset_check_execution_record import (
        AssetCheckExecutionResolvedStatus as Resolved,
    )

    from wiki_assets.defs.names import collections_partitions

    outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST)
    assert outcome.success and outcome.run_id, outcome.error
    collections = set(instance.get_dynamic_partitions("collections"))
    # one run over all of them
    assert len(outcome.plan.pending) == len(collections) == len(SAMPLE_COLLECTIONS)
    for check in (NO_FAILED_DOCUMENTS, FLAGGED_SHARE):
        results = partition_results(instance, check, outcome.run_id)
        assert set(results) == collections, check.name
        statuses = {record.status for record in results.values()}
        assert statuses <= {
            AssetCheckExecutionRecordStatus.SUCCEEDED,
            AssetCheckExecutionRecordStatus.FAILED,
        }, (check.name, statuses)  # a record still PLANNED after its run is a skipped one
        key = dg.AssetCheckKey(dg.AssetKey("wiki_pages"), check.name)
        with partition_loading_context(dynamic_partitions_store=instance):
            (state,) = instance.event_log_storage.get_asset_check_state(
                [(key, collections_partitions)]
            ).values()
            shown = {
                status: set(subset.subset_value.get_partition_keys())
                for status, subset in state.subsets.items()
            }
        assert shown[Resolved.SKIPPED] == set() and shown[Resolved.IN_PROGRESS] == set()
        assert shown[Resolved.SUCCEEDED] | shown[Resolved.FAILED] == collections, check.name
    # The default simulated model's pages repeat the prompt's words: all flagged, a warning.
    flagged = partition_results(instance, FLAGGED_SHARE, outcome.run_id)
    assert {record.status for record in flagged.values()} == {
        AssetCheckExecutionRecordStatus.FAILED
    }
    event = flagged["people"].event
    assert event is not None
    data = event.dagster_event.event_specific_data  # type: ignore[union-attr]
    assert data.severity == dg.AssetCheckSeverity.WARN and data.metadata["share"].value == 1.0


def test_flagged_share_per_collection_is_the_engines_check_of_each_collection(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    assert sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST).success
    store = workspace.corpus.state_store()
    collections = [*instance.get_dynamic_partitions("collections"), "nowhere"]
    for share in (0.0, 0.5, 1.0):
        ours = flagged_by_collection(store, collections, share)
        for name in collections:
            assert ours[name] == flagged_pages(store, [name], max_flagged_share=share), name


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


def test_a_dead_model_shows_in_the_log_the_tag_the_models_table_and_the_check(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """One of two models cannot be reached: the other writes every page and the run succeeds,
    and where an operator looks the dead model shows: a WARNING line in the run's log, the run's
    tag ``wiki_assets/models_out``, the models table (its service, no share of the fleet's busy
    time) and models_in_service, one problem for the one model, as a warning on each partition
    of the run. (Its requests are raced by the healthy model while its client's retries back
    off: they neither fail nor are answered, and the probe at the run's end finds it gone.)"""
    fleet = summarizer_for(sim)
    nobody = ModelConfig(name="gone", base_url=f"http://127.0.0.1:{free_port()}/v1", model="m")
    fleet = SummarizerResource(models=[*fleet.models, nobody])
    outcome = sync_then_ingest(instance, workspace.corpus, fleet, FAST)
    assert outcome.success and outcome.run_id, outcome.error

    warnings = [
        entry.user_message
        for entry in instance.all_logs(outcome.run_id)
        if entry.level == logging.WARNING and entry.user_message.startswith("model gone: ")
    ]
    assert any(", 0 answered" in line and "connection failed" in line for line in warnings)
    run = instance.get_run_by_id(outcome.run_id)
    service = run_figures(instance, outcome.run_id)["model/gone/service"]
    assert service in ("no answer", "taken out")  # (taken out should its requests fail first)
    assert run is not None and run.tags[MODELS_OUT_TAG] == f"gone ({service})"
    # `wiki-assets runs` and `runs --compare` say so too.
    (row,) = [r for r in runs_table(instance).to_dicts() if r["run_id"] == outcome.run_id]
    assert row["models_out"] == f"gone {service}" and row["status"] == "success"
    assert compared_runs(instance, limit=1)[0].notes == (f"gone {service}",)
    figures = run_figures(instance, outcome.run_id)
    assert figures["model/gone/busy_share"] in (0.0, None)  # its failed requests are no work
    assert figures["model/sim0/busy_share"] == 1.0 and figures["model/sim0/service"] == "ok"
    results = partition_results(instance, MODELS_IN_SERVICE, outcome.run_id)
    assert set(results) == set(instance.get_dynamic_partitions("collections"))
    for record in results.values():
        assert record.status == AssetCheckExecutionRecordStatus.FAILED
        data = record.event.dagster_event.event_specific_data  # type: ignore[union-attr]
        assert data.severity == dg.AssetCheckSeverity.WARN
        found = data.metadata["found"].value
        assert "gone: " in found and ", 0 answered" in found, found
        # One model, one problem: its line holds "; …" (the last error, or the probe's answer),
        # which is no second.
        assert "; " in found
        assert data.metadata["problems"].value == 1 and data.metadata["checked"].value == 2
    # A run whose fleet served to the end passes it.
    assert sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FIRST_FORCED).success
    latest = evaluation(instance, "wiki_pages", MODELS_IN_SERVICE)
    assert latest.passed and latest.metadata["checked"].value == 1
