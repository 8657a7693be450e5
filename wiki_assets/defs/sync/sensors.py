"""``ingest_after_sync``: after a ``sync_job`` run succeeds, the ingest runs of its plan; and
``register_collections``: the synced root's collections as ``wiki_pages`` partitions, so that a
fresh instance offers them before the first sync."""

from typing import Any

import dagster as dg

from wiki_assets.defs.metadata.materializations import COLLECTIONS, PENDING, REPAIR
from wiki_assets.defs.metadata.run_figures import plain
from wiki_assets.defs.names import INGEST_SENSOR, REGISTER_SENSOR, SYNC_OP, collections_partitions
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.defs.sync.observe import SyncPlan
from wiki_assets.defs.tags import launched_by
from wiki_assets.defs.wiki_pages.config import IngestConfig
from wiki_assets.engine import environment
from wiki_assets.engine.documents.corpus import ROOT_COLLECTION, collection_names

REGISTER_EVERY_S = 60


def build_register_sensor() -> dg.SensorDefinition:
    """Registers each collection of the synced root (its folders, by name: no file is read) as
    a partition, as soon as the daemon evaluates it after the code location loads, and every
    minute after: partitions appear without waiting for the first sync. The sync observes and
    plans them; this only names them. A partition added by hand that names no collection (no
    folder in the synced root, none of pages in the wiki: a typo in the UI's "Add a partition")
    is removed again, as the sync would, with a line that says so."""

    @dg.sensor(
        name=REGISTER_SENSOR,
        minimum_interval_seconds=REGISTER_EVERY_S,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Registers the synced root's collections (its folders) as partitions, so "
        "that they can be materialized before the first sync. The sync (sync_job, the daily "
        "schedule, `wiki-assets ingest`) observes them and plans the work.",
    )
    def register_collections(
        context: dg.SensorEvaluationContext, corpus: CorpusResource
    ) -> dg.SensorResult | dg.SkipReason:
        name = collections_partitions.name
        assert name is not None
        known = set(context.instance.get_dynamic_partitions(name))
        collections = collection_names(corpus.synced_path, corpus.collection_depth)
        new = sorted(collections - known)
        stray = sorted(
            key
            for key in known - collections
            if key != ROOT_COLLECTION and not (corpus.wiki_path / key).is_dir()
        )
        for key in stray:
            context.log.info(
                f"partition {key!r} names no collection in {corpus.synced_path}: removed"
            )
        requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = [
            *([collections_partitions.build_add_request(new)] if new else []),
            *([collections_partitions.build_delete_request(stray)] if stray else []),
        ]
        if not requests:
            return dg.SkipReason(f"every collection of {corpus.synced_path} is a partition")
        return dg.SensorResult(dynamic_partitions_requests=requests)

    return register_collections


def build_ingest_sensor(
    sync_job: dg.JobDefinition,
    ingest_job: Any,  # what dg.define_asset_job returns (its class is not public)
    dials: IngestConfig,
) -> dg.SensorDefinition:
    """After a ``sync_job`` run succeeds, the ingest runs of its plan, with ``dials`` and the
    fleet the definitions were built with. Reads the sync run's output; writes nothing."""

    @dg.run_status_sensor(
        name=INGEST_SENSOR,
        run_status=dg.DagsterRunStatus.SUCCESS,
        monitored_jobs=[sync_job],
        request_job=ingest_job,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="After a sync_job run succeeds, ingest the collections it found new or "
        "stale: in one run, or in parallel runs of WIKI_ASSETS_COLLECTIONS_PER_RUN collections.",
    )
    def ingest_after_sync(
        context: dg.RunStatusSensorContext,
    ) -> dg.SensorResult | dg.SkipReason:
        run_id = context.dagster_run.run_id
        planned = sync_plan_of(context.instance, run_id)
        if planned is None:
            return dg.SkipReason(f"sync run {run_id} recorded no plan")
        collections, pending, repair = planned
        plan = SyncPlan(states=[], added=[], pending=pending, repair=repair)
        if not pending and repair:
            # Nothing to summarize, but an earlier run left the index unfinished.
            return dg.SensorResult(run_requests=[plan.index_request(dials)])
        if not pending:
            return dg.SkipReason(f"all {collections} collections are up to date")
        source = launched_by(context.dagster_run.tags)  # the schedule's, or one from the UI
        per_run = environment.collections_per_run()
        return dg.SensorResult(run_requests=plan.run_requests(per_run, dials, source, run_id))

    return ingest_after_sync


def sync_plan_of(
    instance: dg.DagsterInstance, run_id: str
) -> tuple[int, list[str], list[str]] | None:
    """The collections a ``sync_job`` run found, the ones it planned to ingest (in partition
    order) and what it found left for the index build, from its op's output."""
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.STEP_OUTPUT, limit=10
    ).records
    for record in records:
        event = record.event_log_entry.dagster_event
        if event is None or event.step_key != SYNC_OP:
            continue
        values = plain(event.step_output_data.metadata)
        collections, pending = COLLECTIONS.read(values), PENDING.read(values)
        if collections is not None and pending is not None:
            repair = [str(why) for why in (REPAIR.read(values) or [])]
            return collections, [str(key) for key in pending], repair
    return None
