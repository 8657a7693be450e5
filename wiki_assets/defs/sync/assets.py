"""``synced_documents``: the mirrored documents, a source asset that the sync observes."""

import dagster as dg

from wiki_assets.defs.names import SYNCED_DOCUMENTS, collections_partitions

synced_documents = dg.AssetSpec(
    SYNCED_DOCUMENTS,
    partitions_def=collections_partitions,
    group_name="wiki",
    description=(
        "Documents mirrored from Confluence, Notion and drives into the synced root, one partition "
        "per collection. Not materialized here (Dagster does not make them): to sync, launch the "
        "job sync_job (Jobs → sync_job → Launchpad), which the schedule daily_sync_then_ingest "
        "runs every day and `wiki-assets ingest` before each run. The sync observes every "
        "collection with a data version derived "
        "from every document's path and content hash, so a changed collection shows its wiki "
        "pages as stale, and records a materialization of a collection when it is new or its "
        "version changed, so every synced collection counts as present."
    ),
)
