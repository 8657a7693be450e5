"""Sync-then-ingest: observe the synced root, register new collections, request the stale ones.

Daily, in three steps, so that evaluating the schedule (the daemon's tick, or "Preview tick result"
in the UI) does nothing but ask for a run:

1. the schedule ``daily_sync_then_ingest`` requests a run of ``sync_job``;
2. that run's one op, ``sync_collections``, runs the mirror command, observes every collection on
   ``synced_documents``, registers new collections as partitions and records the plan (the
   collections whose pages need work) on its output;
3. when it succeeds, the sensor ``ingest_after_sync`` requests the ingest runs of that plan.

Meanwhile the sensor ``register_collections`` names the synced root's collections as partitions
(by their folders, reading no file), so that a fresh instance offers them before its first sync.

The CLI runs the same sync in its own process (:func:`sync`), then its run.

By kind: the source asset ``synced_documents`` (:mod:`.assets`), the sync itself, which the CLI
runs too (:mod:`.observe`), the job (:mod:`.jobs`), the schedule (:mod:`.schedules`) and the
sensors (:mod:`.sensors`). Below, what the rest of the project uses.
"""

from wiki_assets.defs.names import INGEST_SENSOR, SYNC_JOB, SYNC_OP
from wiki_assets.defs.sync.assets import synced_documents
from wiki_assets.defs.sync.jobs import build_sync_job
from wiki_assets.defs.sync.observe import (
    PARTITION_RANGE_END,
    PARTITION_RANGE_START,
    SyncFailed,
    SyncPlan,
    sync,
    unfinished_index,
)
from wiki_assets.defs.sync.schedules import build_schedule
from wiki_assets.defs.sync.sensors import (
    build_ingest_sensor,
    build_register_sensor,
    sync_plan_of,
)

__all__ = [
    "INGEST_SENSOR",
    "PARTITION_RANGE_END",
    "PARTITION_RANGE_START",
    "SYNC_JOB",
    "SYNC_OP",
    "SyncFailed",
    "SyncPlan",
    "build_ingest_sensor",
    "build_register_sensor",
    "build_schedule",
    "build_sync_job",
    "sync",
    "sync_plan_of",
    "synced_documents",
    "unfinished_index",
]
