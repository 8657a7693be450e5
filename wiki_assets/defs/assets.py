"""The two assets: the synced documents (a source) and the wiki pages summarized from them."""

import os
import warnings
from typing import Any

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import Field, field_validator

from wiki_assets.defs.partitions import collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.engine import Dials, IngestReport, ingest
from wiki_assets.engine.fleet import parse_workers
from wiki_assets.engine.index import dangling_links, index_wiki
from wiki_assets.engine.prompts import PROMPT_VERSION

# Backfill policies are what this asset is built on; the beta notice only adds noise to logs.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)

synced_documents = dg.AssetSpec(
    "synced_documents",
    partitions_def=collections_partitions,
    group_name="wiki",
    description=(
        "Documents mirrored from Confluence, Notion and drives into the synced root, one partition "
        "per collection. Observed by the sync step with a data version derived from every "
        "document's path and content hash, so a changed collection shows its wiki pages as stale."
    ),
)


class IngestConfig(dg.Config):
    """The dials of one ingest. They live in run config because hardware and models change."""

    # Any: Dagster's config types have no "int or 'auto'"; the validator below enforces it.
    workers_per_model: Any = Field(
        default=4,
        description="Concurrent requests per model (an integer), or 'auto' to find each model's "
        "useful concurrency from its latency as requests grow. More keeps a batching server busy; "
        "past its saturation point it only adds latency.",
    )
    max_workers: int = Field(
        default=64, ge=1, description="Ceiling of automatic concurrency, per model."
    )
    claim_size: int = Field(
        default=32,
        ge=1,
        description="Documents a worker takes from the shared queue at once. Small contends on the "
        "queue; large leaves work stranded with slow models at the end.",
    )
    flush_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often finished pages are written and a progress line is logged.",
    )
    max_tokens: int = Field(
        default=200,
        ge=16,
        description="Output cap per summary. Summaries are short; a loose cap lets models ramble.",
    )
    force: bool = Field(
        default=False, description="Re-summarize every document of the partitions, changed or not."
    )
    language: str = Field(
        default="auto",
        description="Language of the pages: 'auto' writes each page in its document's language "
        "(a Korean document gets a Korean page); or a language such as 'en' or 'ko' for all.",
    )

    @field_validator("workers_per_model")
    @classmethod
    def _workers(cls, value: Any) -> int | str:
        return parse_workers(value)

    def to_dials(self) -> Dials:
        return Dials(**self.model_dump())


def run_config(dials: IngestConfig) -> dict[str, Any]:
    """Run config for the ingest job: the dials, and the aligned console logger (Dagster only uses
    a job's loggers when the run config names them)."""
    return {
        "ops": {"wiki_pages": {"config": dials.model_dump()}},
        "loggers": {"console": {"config": {"log_level": "INFO"}}},
    }


def collections_per_run() -> int | None:
    """WIKI_ASSETS_COLLECTIONS_PER_RUN: unset, a backfill is one run; N, runs of N collections."""
    value = os.environ.get("WIKI_ASSETS_COLLECTIONS_PER_RUN", "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"WIKI_ASSETS_COLLECTIONS_PER_RUN must be a positive integer: {value!r}")
    return int(value)


def backfill_policy() -> dg.BackfillPolicy:
    # By default a backfill of many collections is one run: one fleet, one queue, one set of
    # figures, no per-run start-up. Past one machine, runs of a few collections each go through
    # Dagster's run queue in parallel (its concurrency limit), sharing each model's in-flight limit
    # through the state store.
    per_run = collections_per_run()
    if per_run is None:
        return dg.BackfillPolicy.single_run()
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=per_run)


@dg.asset(
    partitions_def=collections_partitions,
    deps=[synced_documents],
    group_name="wiki",
    code_version=PROMPT_VERSION,
    backfill_policy=backfill_policy(),
    kinds={"openai", "markdown"},
)
def wiki_pages(
    context: dg.AssetExecutionContext,
    config: IngestConfig,
    corpus: CorpusResource,
    summarizer: SummarizerResource,
) -> dg.MaterializeResult:
    """Librarian-style markdown pages, one per synced document, mirroring the collection's folders.

    Materializing a partition summarizes its new and changed documents on every configured model at
    once and removes the pages of deleted documents. The metadata records what the run did and how
    fast, so tuning runs can be compared in the asset's plots.
    """
    collections = list(context.partition_keys)
    with summarizer.endpoints() as endpoints:
        report = ingest(
            synced_root=corpus.synced_path,
            wiki_root=corpus.wiki_path,
            collections=collections,
            endpoints=endpoints,
            dials=config.to_dials(),
            depth=corpus.collection_depth,
            max_bytes=corpus.max_bytes,
            log=context.log,
            store=corpus.state_store(),
        )
    if report.stopped:
        # Finished pages are on disk and journaled; the rest is left for the next run, so the
        # partitions must not look materialized.
        raise dg.Failure(
            description=f"{report.stopped}; {report.unfinished} documents left for the next run",
            metadata=report_metadata(report),
        )
    return dg.MaterializeResult(metadata=report_metadata(report))


@dg.asset(
    deps=[wiki_pages],
    group_name="wiki",
    kinds={"markdown"},
    # Rebuilt whenever pages change, by the ingest job itself or, for runs that only select
    # wiki_pages (a UI backfill), by Dagster's automation when it is on.
    automation_condition=dg.AutomationCondition.eager(),
)
def wiki_index(context: dg.AssetExecutionContext, corpus: CorpusResource) -> dg.MaterializeResult:
    """``index.md``: every page by collection and by shared topic. Building it also re-renders any
    page whose related links or backlinks are out of date, so no link in the wiki dangles."""
    report = index_wiki(corpus.wiki_path, corpus.state_store())
    dangling = dangling_links(corpus.wiki_path)
    for page, target in dangling[:20]:
        context.log.warning(f"dangling link in {page}: {target}")
    context.log.info(
        f"index: {report.pages} pages · {report.collections} collections · "
        f"{report.topics} shared topics · {report.rewritten} pages re-linked"
    )
    return dg.MaterializeResult(
        metadata={
            "pages": dg.MetadataValue.int(report.pages),
            "collections": dg.MetadataValue.int(report.collections),
            "topics": dg.MetadataValue.int(report.topics),
            "rewritten": dg.MetadataValue.int(report.rewritten),
            "dangling_links": dg.MetadataValue.int(len(dangling)),
        }
    )


MAX_LISTED_FAILURES = 200


def report_metadata(report: IngestReport) -> dict[str, Any]:
    """Int and Float values (which the UI plots) for every figure, JSON for the details."""
    dials = report.dials
    metadata: dict[str, Any] = {
        "count": dg.MetadataValue.int(report.count),
        "skipped": dg.MetadataValue.int(report.skipped),
        "failed": dg.MetadataValue.int(len(report.failed)),
        "removed": dg.MetadataValue.int(report.removed),
        "recovered": dg.MetadataValue.int(report.recovered),
        "requeued": dg.MetadataValue.int(report.requeued),
        "unfinished": dg.MetadataValue.int(report.unfinished),
        "duration_s": dg.MetadataValue.float(round(report.duration_s, 3)),
        "docs_per_sec": dg.MetadataValue.float(round(report.docs_per_sec, 3)),
        "prompt_tokens": dg.MetadataValue.int(report.prompt_tokens),
        "completion_tokens": dg.MetadataValue.int(report.completion_tokens),
        "hit_max_tokens": dg.MetadataValue.int(report.hit_max_tokens),
        "partitions": dg.MetadataValue.int(len(report.collections)),
        # 0 stands for "auto" so the dial stays a plottable Int.
        "workers_per_model": dg.MetadataValue.int(
            0 if dials.workers_per_model == "auto" else int(dials.workers_per_model)
        ),
        "max_workers": dg.MetadataValue.int(dials.max_workers),
        "claim_size": dg.MetadataValue.int(dials.claim_size),
        "flush_seconds": dg.MetadataValue.float(float(dials.flush_seconds)),
        "max_tokens": dg.MetadataValue.int(dials.max_tokens),
        "force": dg.MetadataValue.bool(dials.force),
    }
    for stats in report.models:
        prefix = f"model/{stats.name}"
        metadata[f"{prefix}/docs"] = dg.MetadataValue.int(stats.docs)
        metadata[f"{prefix}/docs_per_sec"] = dg.MetadataValue.float(
            round(report.model_docs_per_sec(stats), 3)
        )
        metadata[f"{prefix}/failed"] = dg.MetadataValue.int(stats.failed)
        metadata[f"{prefix}/errors"] = dg.MetadataValue.int(stats.errors)
        metadata[f"{prefix}/timeouts"] = dg.MetadataValue.int(stats.timeouts)
        metadata[f"{prefix}/breaker_trips"] = dg.MetadataValue.int(stats.breaker_trips)
        # Where automatic concurrency settled (or the fixed count), so tuning runs can compare.
        metadata[f"{prefix}/workers"] = dg.MetadataValue.int(stats.workers)
        metadata[f"{prefix}/peak_workers"] = dg.MetadataValue.int(stats.peak_workers)
    summary = report.to_dict()
    metadata["models"] = dg.MetadataValue.json(summary["models"])
    metadata["failed_documents"] = dg.MetadataValue.json(report.failed[:MAX_LISTED_FAILURES])
    return metadata
