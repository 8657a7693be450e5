"""Assembles the Dagster definitions; ``defs`` is what ``dagster dev -w workspace.yaml`` loads."""

from __future__ import annotations

import dagster as dg

from wiki_assets.defs.assets import synced_documents, wiki_index, wiki_pages
from wiki_assets.defs.loggers import aligned_console_logger
from wiki_assets.defs.partitions import collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.sync import build_schedule

INGEST_JOB = "ingest_job"


def build_defs(
    corpus: CorpusResource | None = None, summarizer: SummarizerResource | None = None
) -> dg.Definitions:
    ingest_job = dg.define_asset_job(
        INGEST_JOB,
        selection=[wiki_pages, wiki_index],
        partitions_def=collections_partitions,
        description="Summarize the selected collections into wiki pages, then rebuild the index.",
    )
    return dg.Definitions(
        assets=[synced_documents, wiki_pages, wiki_index],
        jobs=[ingest_job],
        schedules=[build_schedule(ingest_job)],
        resources={
            "corpus": corpus or CorpusResource(),
            "summarizer": summarizer or SummarizerResource(),
        },
        loggers={"console": aligned_console_logger},
    )


defs = build_defs()
