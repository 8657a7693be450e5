"""``wiki_digest_job``: the day's digest, what the sensor ``wiki_digest_after_ingest`` requests."""

from typing import Any

import dagster as dg

from wiki_assets.defs.names import DIGEST_JOB


def build_digest_job(
    wiki_digest: dg.AssetsDefinition, partitions: dg.DailyPartitionsDefinition
) -> Any:
    """``wiki_digest_job`` (what ``dg.define_asset_job`` returns: its class is not public)."""
    return dg.define_asset_job(
        DIGEST_JOB,
        selection=[wiki_digest],
        partitions_def=partitions,
        description="Write the day's digest of the wiki (and post it, if a webhook is set).",
    )
