"""``ingest_job``: the selected collections' pages, then the index, then the verification pass,
in one run."""

from typing import Any

import dagster as dg

from wiki_assets.defs.names import INGEST_JOB, collections_partitions


def build_ingest_job(
    wiki_pages: dg.AssetsDefinition,
    wiki_index: dg.AssetsDefinition,
    wiki_verification: dg.AssetsDefinition,
) -> Any:
    """``ingest_job`` (what ``dg.define_asset_job`` returns: its class is not public): what the
    sensor ``ingest_after_sync`` and the CLI run, one partition per collection."""
    return dg.define_asset_job(
        INGEST_JOB,
        selection=[wiki_pages, wiki_index, wiki_verification],
        partitions_def=collections_partitions,
        description="Summarize the selected collections into wiki pages, rebuild the index, then "
        "let judges from the fleet settle the sentences the rules left unchecked.",
    )
