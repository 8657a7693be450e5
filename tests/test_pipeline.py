"""The pipeline end to end through Dagster against a simulated OpenAI-compatible server over HTTP:
sync registers collections and observes them, one run over the stale partitions writes one page per
document with the promised metadata, unchanged documents are skipped, changed ones redone, deleted
ones lose their page, and the daily schedule asks for exactly the collections that need work."""

from __future__ import annotations

import hashlib

import dagster as dg
import pytest
from conftest import SAMPLE_COLLECTIONS, Workspace, daily_tick, summarizer_for
from dagster._core.definitions.data_version import StaleStatus

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.definitions import build_defs
from wiki_assets.defs.sync import PARTITION_RANGE_END, PARTITION_RANGE_START
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine.wiki.files import page_for
from wiki_assets.simulator import SimServer

FAST = IngestConfig(flush_seconds=0.2, workers_per_model=4, claim_size=4)


def test_first_run_writes_one_page_per_document(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    documents = workspace.documents()
    outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST)

    assert outcome.success, outcome.error
    assert sorted(outcome.plan.added) == SAMPLE_COLLECTIONS
    assert workspace.pages() == sorted([*(page_for(doc) for doc in documents), "index.md"])
    metadata = outcome.metadata
    assert metadata["count"] == len(documents)
    assert metadata["skipped"] == 0 and metadata["failed"] == 0
    assert metadata["duration_s"] > 0
    assert metadata["docs_per_sec"] == pytest.approx(
        metadata["count"] / metadata["duration_s"], rel=0.01
    )
    assert metadata["model/sim0/docs"] == len(documents)
    assert metadata["prompt_tokens"] > 0 and metadata["completion_tokens"] > 0
    assert metadata["workers_per_model"] == 4 and metadata["claim_size"] == 4
    assert sim.snapshot().answered == len(documents)

    # Every partition got its own materialization with its own counts, as Ints the UI can plot;
    # the run's figures are not repeated on them.
    summarized = 0
    for key in outcome.plan.added:
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("wiki_pages"), asset_partitions=[key]),
            limit=1,
        ).records
        assert records, key
        values = records[0].asset_materialization.metadata  # type: ignore[union-attr]
        assert isinstance(values["summarized"], dg.IntMetadataValue)
        state = next(state for state in outcome.plan.states if state.name == key)
        assert values["documents"].value == values["summarized"].value == state.documents
        assert "docs_per_sec" not in values
        summarized += values["summarized"].value
    assert summarized == metadata["count"]

    page = (workspace.wiki / page_for("engineering/runbooks/on-call-runbook.md")).read_text()
    assert page.startswith("---\n")
    assert 'source: "engineering/runbooks/on-call-runbook.md"' in page
    assert 'model: "sim-fast"' in page


def test_second_run_skips_changes_and_deletions(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    summarizer = summarizer_for(sim)
    total = len(workspace.documents())
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    answered = sim.snapshot().answered

    again = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    assert again.run_id is None, "nothing changed, so no run is launched"
    assert again.summary()["skipped"] == total
    assert sim.snapshot().answered == answered

    changed = workspace.synced / "people" / "leave-policy.md"
    changed.write_text(changed.read_text() + "\nUpdated: carry-over is now 7 days.\n")
    deleted = workspace.synced / "product" / "pricing-page-draft.md"
    deleted.unlink()
    third = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)

    assert third.success
    assert third.plan.pending == ["people", "product"]
    assert third.metadata["count"] == 1
    assert third.metadata["removed"] == 1
    assert sim.snapshot().answered == answered + 1
    assert not (workspace.wiki / page_for("product/pricing-page-draft.md")).exists()
    page = (workspace.wiki / page_for("people/leave-policy.md")).read_text()
    assert f'source_hash: "{hashlib.sha256(changed.read_bytes()).hexdigest()}"' in page
    summary = third.summary()
    assert summary["skipped"] == total - 2  # everything but the changed and the deleted document


def test_force_redoes_every_document_of_the_partition(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    summarizer = summarizer_for(sim)
    sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    before = sim.snapshot().answered
    people = len([d for d in workspace.documents() if d.startswith("people/")])

    job = build_defs(workspace.corpus, summarizer).resolve_job_def("ingest_job")
    result = job.execute_in_process(
        run_config={"ops": {"wiki_pages": {"config": {"force": True, "flush_seconds": 0.2}}}},
        instance=instance,
        partition_key="people",
    )
    assert result.success
    metadata = result.asset_materializations_for_node("wiki_pages")[0].metadata
    assert metadata["summarized"].value == people and metadata["skipped"].value == 0
    assert result.asset_observations_for_node("wiki_pages")[0].metadata["count"].value == people
    assert sim.snapshot().answered == before + people


def test_a_run_launched_as_the_asset_job_carries_a_tag_per_dial(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """A materialization from the asset's page runs as Dagster's __ASSET_JOB with only Dagster's
    tags; the run tags itself with where it came from, a tag per dial, with the dials it ran
    with (the project file's defaults under the launchpad's changes), and the wiki it wrote."""
    from wiki_assets.defs.sync import sync

    summarizer = summarizer_for(sim)
    sync(instance, workspace.corpus, summarizer)  # registers the collections
    defs = build_defs(workspace.corpus, summarizer, IngestConfig(claim_size=8))
    job = defs.resolve_implicit_global_asset_job_def()
    changed = {"flush_seconds": 0.2, "redo_models": ["sim0"], "judge": "sim0"}
    result = job.execute_in_process(
        instance=instance,
        asset_selection=[dg.AssetKey("wiki_pages")],
        partition_key="people",
        run_config={"ops": {"wiki_pages": {"config": changed}}},
    )
    assert result.success
    run = instance.get_run_by_id(result.run_id)
    assert run is not None and run.job_name == "__ASSET_JOB"
    dials = {name: value for name, value in run.tags.items() if name.startswith("wiki_assets/")}
    assert dials == {
        "wiki_assets/source": "ui",
        "wiki_assets/workers_per_model": "4",
        "wiki_assets/max_workers": "64",
        "wiki_assets/claim_size": "8",  # the project file's
        "wiki_assets/flush_seconds": "0.2",  # the launchpad's
        "wiki_assets/max_tokens": "200",
        "wiki_assets/force": "false",
        "wiki_assets/language": "auto",
        "wiki_assets/redo_models": "sim0",
        "wiki_assets/flagged_pages": "retry",
        "wiki_assets/second_opinion_share": "0.5",
        "wiki_assets/judge_share": "0.5",
        "wiki_assets/judge": "sim0",
        "wiki_assets/wiki": str(workspace.wiki.resolve()),
    }
    assert {f"wiki_assets/{name}" for name in IngestConfig.model_fields} <= set(dials)
    # Runs filter on a dial as the Runs list does.
    tagged = instance.get_runs(dg.RunsFilter(tags={"wiki_assets/claim_size": "8"}))
    assert [r.run_id for r in tagged] == [result.run_id]


def test_a_fresh_instance_gets_its_partitions_from_the_register_sensor(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """Before any sync, the daemon's sensor names the synced root's collections as partitions,
    reading no file; once they are partitions it skips."""
    defs = build_defs(workspace.corpus, summarizer_for(sim))
    sensor = defs.get_sensor_def("register_collections")
    assert instance.get_dynamic_partitions("collections") == []
    context = dg.build_sensor_context(instance=instance, resources={"corpus": workspace.corpus})
    result = sensor(context)
    assert isinstance(result, dg.SensorResult)
    (request,) = result.dynamic_partitions_requests or []
    expected = set(SAMPLE_COLLECTIONS)
    assert set(request.partition_keys) == expected
    instance.add_dynamic_partitions("collections", list(request.partition_keys))
    again = sensor(
        dg.build_sensor_context(instance=instance, resources={"corpus": workspace.corpus})
    )
    assert isinstance(again, dg.SkipReason)
    # A partition added by hand that names no collection (the UI's "Add a partition", a typo)
    # is removed again at the sensor's next look; the collections stay.
    instance.add_dynamic_partitions("collections", ["enginering"])
    removed = sensor(
        dg.build_sensor_context(instance=instance, resources={"corpus": workspace.corpus})
    )
    assert isinstance(removed, dg.SensorResult)
    (delete,) = removed.dynamic_partitions_requests or []
    assert isinstance(delete, dg.DeleteDynamicPartitionsRequest)
    assert list(delete.partition_keys) == ["enginering"]


def test_new_collection_is_picked_up_by_sync(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    summarizer = summarizer_for(sim)
    sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    (workspace.synced / "legal").mkdir()
    (workspace.synced / "legal" / "nda-template.md").write_text("# NDA template\n\nMutual NDA.\n")

    outcome = sync_then_ingest(instance, workspace.corpus, summarizer, FAST)

    assert outcome.plan.added == ["legal"]
    assert outcome.plan.pending == ["legal"]
    assert "legal" in instance.get_dynamic_partitions("collections")
    assert outcome.metadata["count"] == 1
    assert (workspace.wiki / "legal" / "nda-template.md").is_file()


def test_schedule_requests_the_new_and_stale_collections(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """The daily chain: the schedule asks for a sync_job run; that run registers and observes
    the collections; after it, the sensor asks for one ingest run over the pending ones (or
    says all are up to date)."""
    summarizer = summarizer_for(sim)
    defs = build_defs(workspace.corpus, summarizer)

    first = daily_tick(defs, instance)
    assert first.sync.dagster_run.job_name == "sync_job"
    sync_run = instance.get_run_by_id(first.sync.run_id)
    assert sync_run is not None and sync_run.tags["wiki_assets/source"] == "schedule"
    assert len(first.run_requests) == 1
    tags = first.run_requests[0].tags
    order = instance.get_dynamic_partitions("collections")
    assert len(order) == len(SAMPLE_COLLECTIONS)
    assert (tags[PARTITION_RANGE_START], tags[PARTITION_RANGE_END]) == (order[0], order[-1])
    assert tags["wiki_assets/source"] == "schedule"
    assert first.run_requests[0].run_key == f"{first.sync.run_id}/0"  # requested once
    # The sync run observed every collection and says what it planned.
    observed = instance.fetch_observations(dg.AssetKey("synced_documents"), limit=100).records
    assert {record.run_id for record in observed} == {first.sync.run_id}
    assert sorted(record.partition_key or "" for record in observed) == sorted(order)

    sync_then_ingest(instance, workspace.corpus, summarizer, FAST)
    idle = daily_tick(defs, instance)
    assert not idle.run_requests
    assert idle.skip_message == f"all {len(SAMPLE_COLLECTIONS)} collections are up to date"

    edited = workspace.synced / "operations" / "support-escalation-process.md"
    edited.write_text(edited.read_text() + "\nNew tier: L3 on weekends.\n")
    stale = daily_tick(defs, instance)
    tags = stale.run_requests[0].tags
    assert (tags[PARTITION_RANGE_START], tags[PARTITION_RANGE_END]) == ("operations", "operations")


def test_every_run_the_definitions_run_carries_its_source_tag(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """Runs launched from the UI carry only Dagster's tags: the sync, the index and the digest
    tag themselves with where they came from, as wiki_pages does."""
    summarizer = summarizer_for(sim)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    defs = build_defs(workspace.corpus, summarizer)
    sync_run = defs.resolve_job_def("sync_job").execute_in_process(instance=instance)
    index_run = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        instance=instance, asset_selection=[dg.AssetKey("wiki_index")]
    )
    digest_run = defs.resolve_job_def("wiki_digest_job").execute_in_process(
        instance=instance, partition_key="2026-12-01"
    )
    for result in (sync_run, index_run, digest_run):
        assert result.success
        run = instance.get_run_by_id(result.run_id)
        assert run is not None and run.tags.get("wiki_assets/source") == "ui", run.job_name


def test_evaluating_the_schedule_writes_nothing(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """The UI's "Preview tick result" evaluates the schedule for real: with a changed document,
    a new collection and a sync command configured, the evaluation asks for a sync_job run and
    changes nothing: no event, run or partition on the instance, no file anywhere, no command."""
    summarizer = summarizer_for(sim)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    edited = workspace.synced / "people" / "leave-policy.md"
    edited.write_text(edited.read_text() + "\nCarry-over is now 7 days.\n")
    (workspace.synced / "legal").mkdir()
    (workspace.synced / "legal" / "nda.md").write_text("# NDA\n\nMutual NDA.\n")
    ran = workspace.home.parent / "the-sync-command-ran"
    corpus = workspace.corpus.model_copy(update={"sync_command": f"touch {ran}"})
    defs = build_defs(corpus, summarizer)
    schedule = defs.resolve_schedule_def("daily_sync_then_ingest")

    def files() -> dict[str, tuple[int, int]]:
        root = workspace.home.parent
        return {
            path.relative_to(root).as_posix(): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in root.rglob("*")
            if path.is_file()
        }

    def instance_state() -> tuple[object, ...]:
        return (
            instance.event_log_storage.get_maximum_record_id(),
            [run.run_id for run in instance.get_runs()],
            instance.get_dynamic_partitions("collections"),
        )

    before, stored = files(), instance_state()
    with dg.build_schedule_context(instance=instance) as context:
        result = schedule.evaluate_tick(context)
    (request,) = result.run_requests or []
    assert request.job_name in (None, "sync_job")
    assert instance_state() == stored
    assert files() == before
    assert not ran.exists()


def stale_status(defs: dg.Definitions, instance: dg.DagsterInstance, partition: str) -> StaleStatus:
    """What the UI asks: Dagster's own resolver, with its own test loading context."""
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.loader import LoadingContextForTest

    resolver = CachingStaleStatusResolver(
        instance, defs.resolve_asset_graph(), LoadingContextForTest(instance)
    )
    return resolver.get_status(dg.AssetKey("wiki_pages"), partition)


def test_changed_collection_shows_stale_in_dagster(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """Sync's observations carry data versions, so Dagster itself marks the partition stale."""
    summarizer = summarizer_for(sim)
    defs = build_defs(workspace.corpus, summarizer)
    sync_then_ingest(instance, workspace.corpus, summarizer, FAST)

    assert stale_status(defs, instance, "product") == StaleStatus.FRESH
    edited = workspace.synced / "product" / "2026-roadmap.md"
    edited.write_text(edited.read_text() + "\nQ4: cold storage tier.\n")
    from wiki_assets.defs.sync import sync

    sync(instance, workspace.corpus, summarizer)
    assert stale_status(defs, instance, "product") == StaleStatus.STALE
    assert stale_status(defs, instance, "people") == StaleStatus.FRESH


def test_the_daily_sync_run_marks_a_changed_collection_stale_and_its_ingest_run_clears_it(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """The same, with the observations recorded by the schedule's sync_job run."""
    summarizer = summarizer_for(sim)
    defs = build_defs(workspace.corpus, summarizer, FAST)
    (first,) = daily_tick(defs, instance).run_requests
    ingest_job = defs.resolve_job_def("ingest_job")
    assert ingest_job.execute_in_process(
        instance=instance, run_config=first.run_config, tags=first.tags
    ).success
    assert stale_status(defs, instance, "product") == StaleStatus.FRESH
    edited = workspace.synced / "product" / "2026-roadmap.md"
    edited.write_text(edited.read_text() + "\nQ4: cold storage tier.\n")
    tick = daily_tick(defs, instance)
    assert stale_status(defs, instance, "product") == StaleStatus.STALE
    assert stale_status(defs, instance, "people") == StaleStatus.FRESH
    (request,) = tick.run_requests
    assert ingest_job.execute_in_process(
        instance=instance, run_config=request.run_config, tags=request.tags
    ).success
    assert stale_status(defs, instance, "product") == StaleStatus.FRESH


ASSET_STATUS = """
query AssetStatus($key: AssetKeyInput!, $partitions: [String!]) {
  assetNodeOrError(assetKey: $key) {
    __typename
    ... on AssetNode {
      partitionStats { numPartitions numMaterialized numMaterializing numFailed }
      assetPartitionStatuses {
        __typename
        ... on DefaultPartitionStatuses { materializedPartitions unmaterializedPartitions }
      }
      staleStatusByPartition(partitions: $partitions)
    }
  }
}
"""


def test_synced_collections_count_as_present_in_the_ui(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """What the UI reads, through Dagster's own GraphQL schema against the real instance and the
    code location `dagster dev` loads: every synced collection is a present partition of
    synced_documents (not "Missing"), a re-sync with no change records no new materialization,
    and a changed collection still shows its wiki_pages partition as stale, without waking the
    automation of wiki_index."""
    from dagster._core.test_utils import in_process_test_workspace
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
    from dagster_graphql.test.utils import execute_dagster_graphql

    from wiki_assets.defs.sync import sync

    summarizer = summarizer_for(sim)
    defs = build_defs(workspace.corpus, summarizer)
    assert sync_then_ingest(instance, workspace.corpus, summarizer, FAST).success
    collections = sorted(instance.get_dynamic_partitions("collections"))
    assert len(collections) == len(SAMPLE_COLLECTIONS)
    origin = LoadableTargetOrigin(module_name="wiki_assets.definitions", attribute="defs")

    def node(asset: str) -> dict:
        with in_process_test_workspace(instance, origin) as context:
            result = execute_dagster_graphql(
                context, ASSET_STATUS, {"key": {"path": [asset]}, "partitions": collections}
            )
        assert not result.errors, result.errors
        data = result.data["assetNodeOrError"]
        assert data["__typename"] == "AssetNode", data
        return data

    def materializations() -> list[str]:
        records = instance.fetch_materializations(dg.AssetKey("synced_documents"), limit=100)
        return sorted(record.partition_key or "" for record in records.records)

    synced = node("synced_documents")
    assert synced["partitionStats"] == {
        "numPartitions": len(SAMPLE_COLLECTIONS),
        "numMaterialized": len(SAMPLE_COLLECTIONS),
        "numMaterializing": 0,
        "numFailed": 0,
    }
    statuses = synced["assetPartitionStatuses"]
    assert sorted(statuses["materializedPartitions"]) == collections
    assert statuses["unmaterializedPartitions"] == []
    assert materializations() == collections
    assert node("wiki_pages")["staleStatusByPartition"] == ["FRESH"] * len(SAMPLE_COLLECTIONS)

    automation = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    sync(instance, workspace.corpus, summarizer)  # nothing changed: observed, not materialized
    assert materializations() == collections
    assert node("wiki_pages")["staleStatusByPartition"] == ["FRESH"] * len(SAMPLE_COLLECTIONS)

    edited = workspace.synced / "product" / "2026-roadmap.md"
    edited.write_text(edited.read_text() + "\nQ4: cold storage tier.\n")
    sync(instance, workspace.corpus, summarizer)
    assert materializations() == sorted([*collections, "product"])
    stale = dict(zip(collections, node("wiki_pages")["staleStatusByPartition"], strict=True))
    assert stale == {key: "STALE" if key == "product" else "FRESH" for key in collections}
    materialized = node("synced_documents")["partitionStats"]["numMaterialized"]
    assert materialized == len(SAMPLE_COLLECTIONS)
    # wiki_index waits for wiki_pages: a changed mirror alone requests nothing.
    again = dg.evaluate_automation_conditions(
        defs=defs, instance=instance, cursor=automation.cursor
    )
    assert again.total_requested == 0
