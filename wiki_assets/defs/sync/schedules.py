"""The daily schedule: it asks for a ``sync_job`` run and does nothing else."""

import dagster as dg

from wiki_assets.defs.loggers import LOGGERS
from wiki_assets.defs.names import SCHEDULE
from wiki_assets.defs.tags import SOURCE_TAG
from wiki_assets.engine import environment


def build_schedule(sync_job: dg.JobDefinition) -> dg.ScheduleDefinition:
    """The daily sync-then-ingest. Its evaluation asks for a run of ``sync_job`` and does nothing
    else: it reads and writes nothing, however large the synced tree."""

    return dg.ScheduleDefinition(
        name=SCHEDULE,
        cron_schedule=environment.cron_schedule(),
        job=sync_job,
        run_config=LOGGERS,
        tags={SOURCE_TAG: "schedule"},
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description="Start a sync_job run (the mirror command, then every collection observed "
        "and new ones registered); after it the sensor ingest_after_sync ingests every "
        "collection that is new or stale: in one run, or in parallel runs of "
        "WIKI_ASSETS_COLLECTIONS_PER_RUN collections (cron from WIKI_ASSETS_CRON).",
    )
