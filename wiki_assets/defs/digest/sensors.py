"""The sensor that starts the digest after a run that wrote pages, and what it reads of runs."""

import time
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import dagster as dg

from wiki_assets.defs.names import DIGEST_SENSOR, WIKI_PAGES


def build_digest_sensor(
    ingest_job: Any,  # what dg.define_asset_job returns (its class is not public)
    digest_job: Any,
    timezone: str,
) -> dg.SensorDefinition:
    # A run-status sensor rather than a schedule: the digest follows the pages however long the
    # run took (a cron offset would race a slow ingest). It watches every job of the code
    # location, as a materialization or backfill launched from an asset's page runs as Dagster's
    # __ASSET_JOB, not as ingest_job; a run that materialized no wiki_pages (the digest's own, an
    # index rebuild) is passed over. Parallel runs give one digest: it waits until no run that
    # writes pages is left in flight, and the message is posted once a day anyway.
    @dg.run_status_sensor(
        name=DIGEST_SENSOR,
        run_status=dg.DagsterRunStatus.SUCCESS,
        request_job=digest_job,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="After a run that materialized wiki_pages succeeds (the daily ingest, a "
        "materialization or backfill from the UI, whatever its job), build the digest of the "
        "day it finished, once no other such run is in flight.",
    )
    def wiki_digest_after_ingest(
        context: dg.RunStatusSensorContext,
    ) -> dg.RunRequest | dg.SkipReason:
        run_id = context.dagster_run.run_id
        if not materialized_pages(context.instance, run_id):
            return dg.SkipReason(f"run {run_id} materialized no wiki_pages")
        in_flight = context.instance.get_runs(dg.RunsFilter(statuses=IN_FLIGHT))
        if any(writes_pages(run, ingest_job.name) for run in in_flight):
            return dg.SkipReason(
                "a run that writes pages is in flight; its end requests the digest"
            )
        # The day the run's pages were written: its end, not the sensor's (late) evaluation.
        record = context.instance.get_run_record_by_id(run_id)
        ended = record.end_time if record is not None and record.end_time else time.time()
        day = datetime.fromtimestamp(ended, ZoneInfo(timezone)).date().isoformat()
        return dg.RunRequest(run_key=f"{day} after {run_id}", partition_key=day)

    return wiki_digest_after_ingest


def materialized_pages(instance: dg.DagsterInstance, run_id: str) -> bool:
    """Whether the run recorded a materialization of ``wiki_pages`` (read until the first)."""
    cursor = None
    while True:
        page = instance.get_records_for_run(
            run_id, cursor, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION, limit=100
        )
        if any(_is_pages(record) for record in page.records):
            return True
        if not page.has_more:
            return False
        cursor = page.cursor


def _is_pages(record: dg.EventLogRecord) -> bool:
    event = record.event_log_entry.dagster_event
    return event is not None and event.asset_key == WIKI_PAGES


def writes_pages(run: dg.DagsterRun, ingest_job: str) -> bool:
    """Whether a run not yet finished will write pages: a run of ``ingest_job``, or of any job
    (the UI's __ASSET_JOB) with wiki_pages in its selection."""
    return run.job_name == ingest_job or WIKI_PAGES in (run.asset_selection or ())


IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]
