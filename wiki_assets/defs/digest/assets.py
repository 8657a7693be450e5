"""``wiki_digest``: the day's digest files, then their post to the chat webhook, once a day."""

from datetime import date

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import Field

from wiki_assets.defs.digest.resources import DigestResource
from wiki_assets.defs.metadata.materializations import (
    DELIVERED,
    DELIVERY,
    DIGEST,
    POSTED_IN_RUN,
    Delivered,
    DigestRun,
)
from wiki_assets.defs.metadata.recording import build
from wiki_assets.defs.metadata.run_figures import plain
from wiki_assets.defs.names import WIKI_DIGEST, WIKI_INDEX
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.defs.tags import tag_source
from wiki_assets.engine import environment
from wiki_assets.engine.digest import write_changed_digest, write_digest
from wiki_assets.engine.digest.webhook import DeliveryFailed, post, slack_message


class DigestConfig(dg.Config):
    deliver: bool = Field(
        default=True,
        description="Post to the webhook, when one is configured; turn off for a backfill of "
        "past days that the channel has seen.",
    )


def build_wiki_digest(partitions: dg.DailyPartitionsDefinition) -> dg.AssetsDefinition:
    timezone = partitions.timezone  # one definition of the day: the partitions'

    # A backfill of many days (the UI's Materialize → All: every day since start_date) is one
    # run, not a run per day, which writes only the days that saw a change and posts none
    # (_many_days).
    @dg.asset(
        key=WIKI_DIGEST,
        partitions_def=partitions,
        deps=[WIKI_INDEX],
        group_name="wiki",
        kinds={"markdown", "slack"},
        backfill_policy=dg.BackfillPolicy.single_run(),
    )
    def wiki_digest(
        context: dg.AssetExecutionContext,
        config: DigestConfig,
        corpus: CorpusResource,
        digest: DigestResource,
    ) -> dg.MaterializeResult:
        """The day's digest: pages added, changed (old and new description), removed and
        flagged, in ``digest/YYYY-MM-DD.md`` and ``.json``; posted to the chat webhook when one
        is configured, once a day. A run of several days (a backfill, "Materialize all") writes
        the days that saw a change and posts none."""
        tag_source(context)
        if context.has_partition_key_range and len(context.partition_keys) > 1:
            _many_days(context, corpus, timezone)
            return dg.MaterializeResult()
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


def _many_days(context: dg.AssetExecutionContext, corpus: CorpusResource, timezone: str) -> None:
    """A run over several days: each day that saw a change gets its files and its counts; the
    others get nothing but a line that counts them. Nothing is posted: the channel hears of a
    day on that day (the sensor), not in a flood of past ones."""
    store, quiet = corpus.state_store(), 0
    for key in context.partition_keys:
        files = write_changed_digest(corpus.wiki_path, date.fromisoformat(key), timezone, store)
        if files is None:
            quiet += 1
            continue
        metadata = build(DIGEST, DigestRun(files, timezone))
        context.add_asset_metadata(
            {**metadata, **build(DELIVERY, Delivered(False))}, partition_key=key
        )
        context.log.info(f"digest {key}: {files.digest.counts()} → {files.markdown} (not posted)")
    context.log.info(
        f"digest of {len(context.partition_keys)} days: {quiet} without a change have no "
        "files; none posted (a day is posted on that day, or by materializing it alone)"
    )


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
