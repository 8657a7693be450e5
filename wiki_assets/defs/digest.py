"""The daily digest: ``wiki_digest``, one partition per calendar day, and what starts it.

The asset writes ``wiki/digest/YYYY-MM-DD.md`` and ``.json`` from the pages' history in the state
store, so any past day can be materialized again (a backfill from the UI), and then, when a
webhook is configured, posts the day's top changes to it, once a day: a later run of the same day
rewrites the files and leaves the message posted. The files are written before the post: a
webhook that stays down fails the step and loses nothing.
"""

import time
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import Field, field_validator

from wiki_assets.defs.metadata import (
    DELIVERED,
    DELIVERY,
    DIGEST,
    POSTED_IN_RUN,
    Delivered,
    DigestRun,
    build,
    plain,
)
from wiki_assets.defs.names import DIGEST_SENSOR, WIKI_DIGEST, WIKI_INDEX, WIKI_PAGES
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.engine import environment
from wiki_assets.engine.config import OptionalVariableName
from wiki_assets.engine.digest import write_digest
from wiki_assets.engine.digest.webhook import (
    ATTEMPTS,
    TOP_CHANGES,
    DeliveryFailed,
    post,
    slack_message,
)

DEFAULT_START_DATE = "2026-01-01"


class DigestResource(dg.ConfigurableResource):
    """Where the digest's days begin and end, and the optional chat delivery."""

    timezone: str = Field(
        default_factory=environment.digest_timezone,
        description="IANA timezone whose calendar days the digest covers, e.g. Europe/Berlin "
        "(env WIKI_ASSETS_DIGEST_TIMEZONE, default UTC). It shapes the partitions: set it in "
        "the project file, not per run.",
    )
    start_date: str = Field(
        default=DEFAULT_START_DATE, description="The first day with a partition (YYYY-MM-DD)."
    )
    webhook_url_env: OptionalVariableName = Field(
        default=None,
        description="Name of the environment variable holding a Slack-compatible incoming "
        "webhook URL (never the URL itself). Unset: no message is posted.",
    )
    wiki_url: str | None = Field(
        default=None,
        description="Where the wiki is served (e.g. https://wiki.example.com/team), so the "
        "message's page names are links; unset: plain page names.",
    )
    webhook_attempts: int = Field(
        default=ATTEMPTS,
        ge=1,
        description="Posts tried at most on 429, 5xx or no answer, with exponential backoff "
        "(1 s, 2 s, 4 s, ...; a Retry-After is honoured up to 30 s).",
    )
    top_changes: int = Field(
        default=TOP_CHANGES, ge=1, description="Pages the message lists at most."
    )

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r} (an IANA name such as UTC)") from None
        return value

    @field_validator("start_date")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        date.fromisoformat(value)
        return value

    def partitions(self) -> dg.DailyPartitionsDefinition:
        # end_offset=1: today is a partition already, so the digest can follow today's ingest
        # (its file is rewritten when the day sees another ingest).
        return dg.DailyPartitionsDefinition(
            start_date=self.start_date, timezone=self.timezone, end_offset=1
        )


class DigestConfig(dg.Config):
    deliver: bool = Field(
        default=True,
        description="Post to the webhook, when one is configured; turn off for a backfill of "
        "past days that the channel has seen.",
    )


def build_wiki_digest(partitions: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    timezone = partitions.timezone  # one definition of the day: the partitions'

    @dg.asset(
        key=WIKI_DIGEST,
        partitions_def=partitions,
        deps=[WIKI_INDEX],
        group_name="wiki",
        kinds={"markdown", "slack"},
    )
    def wiki_digest(
        context: dg.AssetExecutionContext,
        config: DigestConfig,
        corpus: CorpusResource,
        digest: DigestResource,
    ) -> dg.MaterializeResult:
        """The day's digest: pages added, changed (old and new description), removed and
        flagged, in ``digest/YYYY-MM-DD.md`` and ``.json``; posted to the chat webhook when one
        is configured, once a day."""
        day = date.fromisoformat(context.partition_key)
        files = write_digest(corpus.wiki_path, day, timezone, corpus.state_store())
        counts = files.digest.counts()
        metadata = build(DIGEST, DigestRun(files, timezone))
        context.log.info(
            f"digest {day} ({timezone}): "
            + " · ".join(f"{count} {kind}" for kind, count in counts.items())
            + f" → {files.markdown}"
        )
        posted_in_run = _posted_in_run(context)
        if posted_in_run is not None:
            context.log.info(
                f"digest {day} was posted by run {posted_in_run}: files updated, not posted again"
            )
            earlier = Delivered(True, posted_in_run=posted_in_run)
            return dg.MaterializeResult(metadata={**metadata, **build(DELIVERY, earlier)})
        variable = digest.webhook_url_env
        if not (config.deliver and variable):
            return dg.MaterializeResult(metadata={**metadata, **build(DELIVERY, Delivered(False))})
        url = environment.webhook_url(variable)
        if url is None:
            raise dg.Failure(
                description=f"digest written to {files.markdown}, not posted: the webhook's "
                f"environment variable {variable} is not set",
                metadata=metadata,
            )
        message = slack_message(files.digest, digest.wiki_url, digest.top_changes)
        try:
            delivery = post(url, message, named=variable, attempts=digest.webhook_attempts)
        except DeliveryFailed as error:
            raise dg.Failure(
                description=f"digest written to {files.markdown}, not posted: {error}",
                metadata=metadata,
            ) from None
        context.log.info(f"digest posted to webhook {variable} ({delivery.attempts} attempts)")
        delivered = Delivered(True, delivery.attempts, context.run_id)
        return dg.MaterializeResult(metadata={**metadata, **build(DELIVERY, delivered)})

    return wiki_digest


def _posted_in_run(context: dg.AssetExecutionContext) -> str | None:
    """The run that posted this day's digest, if one did: its latest materialization says so
    (each one carries the day's delivery forward)."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(
            asset_key=context.asset_key, asset_partitions=[context.partition_key]
        ),
        limit=1,
    ).records
    event = records[0].asset_materialization if records else None
    if event is None:
        return None
    values = plain(event.metadata)
    if not DELIVERED.read(values):
        return None
    return POSTED_IN_RUN.read(values) or records[0].run_id  # (recorded before posted_in_run)


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
