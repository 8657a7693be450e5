"""The names other tools rely on, each defined once: the asset keys, the collections' partitions,
the jobs, the op of the sync job, the sensors and the schedule. Runs, tags, run config
(``ops.wiki_pages.config``), the UI's pages and the CLI all find the definitions by these names;
renaming one orphans their history."""

import dagster as dg

# The assets, upstream first.
SYNCED_DOCUMENTS = dg.AssetKey("synced_documents")
WIKI_PAGES = dg.AssetKey("wiki_pages")
WIKI_INDEX = dg.AssetKey("wiki_index")
WIKI_DIGEST = dg.AssetKey("wiki_digest")
WIKI_VERIFICATION = dg.AssetKey("wiki_verification")

# The partitions of synced_documents and wiki_pages, which the instance keeps under this name: one
# per collection (a folder level of the synced root), never one per document, as Dagster spends
# ~25 ms of bookkeeping per partition per run, as much as a fast fleet spends summarizing.
collections_partitions = dg.DynamicPartitionsDefinition(name="collections")

# Jobs, and the sync job's one op.
INGEST_JOB = "ingest_job"
SYNC_JOB = "sync_job"
SYNC_OP = "sync_collections"
DIGEST_JOB = "wiki_digest_job"

# What starts runs.
SCHEDULE = "daily_sync_then_ingest"
INGEST_SENSOR = "ingest_after_sync"
REGISTER_SENSOR = "register_collections"
DIGEST_SENSOR = "wiki_digest_after_ingest"
AUTOMATION_SENSOR = "default_automation_condition_sensor"


def node(key: dg.AssetKey) -> str:
    """The name of the op that computes the asset ``key`` (one-part keys): what run config's
    ``ops`` section and a run's per-node results are keyed by."""
    return key.to_python_identifier()
