"""The two assets: the synced documents (a source) and the wiki pages summarized from them."""

import copy
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import Field, create_model, field_validator

from wiki_assets.defs.partitions import collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.engine import Dials, IngestReport, ingest
from wiki_assets.engine.corpus import collection_of
from wiki_assets.engine.fleet import AUTO, parse_workers
from wiki_assets.engine.ingest import CollectionState, survey
from wiki_assets.engine.prompts import PROMPT_VERSION
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.engine.wiki.links import dangling_links

# Backfill policies are what this asset is built on; the beta notice only adds noise to logs.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)

synced_documents = dg.AssetSpec(
    "synced_documents",
    partitions_def=collections_partitions,
    group_name="wiki",
    description=(
        "Documents mirrored from Confluence, Notion and drives into the synced root, one partition "
        "per collection. The sync step observes every collection with a data version derived "
        "from every document's path and content hash, so a changed collection shows its wiki "
        "pages as stale, and records a materialization of a collection when it is new or its "
        "version changed, so every synced collection counts as present."
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

    redo_models: list[str] = Field(
        default=[],
        description="Model ids (the 'model' a page records) whose pages are redone. A model that "
        "leaves the fleet keeps its pages current: redoing them is asked for here, or with force.",
    )

    @field_validator("workers_per_model")
    @classmethod
    def _workers(cls, value: Any) -> int | str:
        return parse_workers(value)

    def to_dials(self) -> Dials:
        values = self.model_dump()
        values["redo_models"] = tuple(values["redo_models"])
        return Dials(**values)


def dials_with_defaults(dials: IngestConfig) -> type[IngestConfig]:
    """``IngestConfig`` whose defaults are ``dials`` (the project file's): what the launchpad
    pre-fills and what a UI materialization runs with when nothing is changed."""
    fields: dict[str, Any] = {}
    for name, info in IngestConfig.model_fields.items():
        value = getattr(dials, name)
        if value == info.default:
            continue
        overridden = copy.copy(info)
        overridden.default = value
        fields[name] = (info.annotation, overridden)
    if not fields:
        return IngestConfig
    return create_model("IngestConfig", __base__=IngestConfig, **fields)


def run_config(dials: IngestConfig) -> dict[str, Any]:
    """Run config for the ingest job: the dials, and the aligned console logger (Dagster only uses
    a job's loggers when the run config names them)."""
    return {
        "ops": {"wiki_pages": {"config": dials.model_dump()}},
        "loggers": {"console": {"config": {"log_level": "INFO"}}},
    }


SOURCE_TAG = "wiki_assets/source"  # cli, schedule: where a run was started
CONFIG_TAG = "wiki_assets/config"  # the config files it was configured from
DIALS_TAG = "wiki_assets/dials"


def run_tags(source: str, dials: IngestConfig, config_source: str = "") -> dict[str, str]:
    """Tags that say where a run came from and what it was tuned with, shown in the Runs list."""
    values = dials.model_dump()
    tags = {
        SOURCE_TAG: source,
        DIALS_TAG: " ".join(
            f"{key}={','.join(value) if isinstance(value, list) else value}"
            for key, value in values.items()
            if value not in ([], None)
        ),
    }
    if config_source:
        tags[CONFIG_TAG] = config_source
    return tags


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


def build_wiki_pages(dials: type[IngestConfig] = IngestConfig) -> dg.AssetsDefinition:
    """The ``wiki_pages`` asset, its dials' defaults taken from ``dials`` (the project file's)."""

    @dg.asset(
        name="wiki_pages",
        partitions_def=collections_partitions,
        deps=[synced_documents],
        group_name="wiki",
        code_version=PROMPT_VERSION,
        backfill_policy=backfill_policy(),
        kinds={"openai", "markdown"},
    )
    def wiki_pages(
        context: dg.AssetExecutionContext,
        config: dials,  # type: ignore[valid-type]
        corpus: CorpusResource,
        summarizer: SummarizerResource,
    ) -> dg.MaterializeResult:
        """Librarian-style markdown pages, one per synced document, mirroring the collection's
        folders.

        Materializing a partition summarizes its new and changed documents on every configured
        model at once and removes the pages of deleted documents. Each partition records its own
        counts; the run's figures (duration, docs/s, per model, dials) are one observation of this
        asset per run, so tuning runs can be compared one point each.
        """
        collections = list(context.partition_keys)
        run_dials = config.to_dials()
        store = corpus.state_store()
        with summarizer.endpoints() as endpoints:
            # What each collection holds before the run (the same rule the run applies), so that
            # every partition can record its own counts.
            before = survey(
                corpus.synced_path,
                corpus.wiki_path,
                endpoints,
                run_dials,
                corpus.collection_depth,
                store,
                collections,
            )
            report = ingest(
                synced_root=corpus.synced_path,
                wiki_root=corpus.wiki_path,
                collections=collections,
                endpoints=endpoints,
                dials=run_dials,
                depth=corpus.collection_depth,
                max_bytes=corpus.max_bytes,
                log=context.log,
                store=store,
            )
        figures = run_metadata(report)
        if report.stopped:
            # Finished pages are on disk and journaled; the rest is left for the next run, so the
            # partitions must not look materialized.
            if report.stopped_by:
                # Which signal: the CLI exits with its code; a run terminated from the UI is
                # marked canceled by Dagster (the run is CANCELING when this step fails).
                figures[STOPPED_BY] = dg.MetadataValue.text(report.stopped_by)
            raise dg.Failure(
                description=f"{report.stopped}; {report.unfinished} documents left for the next "
                "run",
                metadata=figures,
            )
        context.log_event(dg.AssetObservation(asset_key=context.asset_key, metadata=figures))
        for key, counts in partition_counts(report, before, corpus.collection_depth).items():
            context.add_asset_metadata(counts, partition_key=key)
        return dg.MaterializeResult()

    return wiki_pages


wiki_pages = build_wiki_pages()


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
PARTITION_FIGURES = ("documents", "summarized", "skipped", "recovered", "failed", "removed")


def partition_counts(
    report: IngestReport, before: Sequence[CollectionState], depth: int
) -> dict[str, dict[str, Any]]:
    """Each collection's own counts. Every document of a collection is skipped, recovered (its
    page written from an answer already journaled), failed or summarized: the survey before the
    run tells the first two apart with the rule the run applies, the report names the failures."""
    failed: dict[str, int] = {}
    for failure in report.failed:
        name = collection_of(PurePosixPath(failure["path"]), depth)
        failed[name] = failed.get(name, 0) + 1
    counts = {}
    for state in before:
        lost = failed.get(state.name, 0)
        counts[state.name] = {
            "documents": dg.MetadataValue.int(state.documents),
            "summarized": dg.MetadataValue.int(
                state.documents - state.skipped - state.recovered - lost
            ),
            "skipped": dg.MetadataValue.int(state.skipped),
            "recovered": dg.MetadataValue.int(state.recovered),
            "failed": dg.MetadataValue.int(lost),
            "removed": dg.MetadataValue.int(state.removed),
        }
    empty = {name: dg.MetadataValue.int(0) for name in PARTITION_FIGURES}
    return {name: counts.get(name, empty) for name in report.collections}


STOPPED_BY = "stopped_by"  # metadata of a run a signal stopped: SIGTERM or SIGINT


def run_metadata(report: IngestReport) -> dict[str, Any]:
    """The run's figures, once per run: Int, Float and Bool values (which the UI plots) for every
    figure and dial, JSON only for the list of failures."""
    dials = report.dials
    metadata: dict[str, Any] = {
        "count": dg.MetadataValue.int(report.count),
        "skipped": dg.MetadataValue.int(report.skipped),
        "failed": dg.MetadataValue.int(len(report.failed)),
        "removed": dg.MetadataValue.int(report.removed),
        "recovered": dg.MetadataValue.int(report.recovered),
        "requeued": dg.MetadataValue.int(report.requeued),
        "unfinished": dg.MetadataValue.int(report.unfinished),
        "hedged": dg.MetadataValue.int(report.hedged),
        "duration_s": dg.MetadataValue.float(round(report.duration_s, 3)),
        "docs_per_sec": dg.MetadataValue.float(round(report.docs_per_sec, 3)),
        "prompt_tokens": dg.MetadataValue.int(report.prompt_tokens),
        "completion_tokens": dg.MetadataValue.int(report.completion_tokens),
        "hit_max_tokens": dg.MetadataValue.int(report.hit_max_tokens),
        "partitions": dg.MetadataValue.int(len(report.collections)),
        # 'auto' is a flag; where it settled is model/<name>/workers. A fixed count is a number.
        "workers_auto": dg.MetadataValue.bool(dials.workers_per_model == AUTO),
        "max_workers": dg.MetadataValue.int(dials.max_workers),
        "claim_size": dg.MetadataValue.int(dials.claim_size),
        "flush_seconds": dg.MetadataValue.float(float(dials.flush_seconds)),
        "max_tokens": dg.MetadataValue.int(dials.max_tokens),
        "force": dg.MetadataValue.bool(dials.force),
        "language": dg.MetadataValue.text(dials.language),
    }
    if dials.workers_per_model != AUTO:
        metadata["workers_per_model"] = dg.MetadataValue.int(int(dials.workers_per_model))
    if dials.redo_models:
        metadata["redo_models"] = dg.MetadataValue.text(", ".join(dials.redo_models))
    for stats in report.models:
        prefix = f"model/{stats.name}"
        metadata[f"{prefix}/model"] = dg.MetadataValue.text(stats.model)
        metadata[f"{prefix}/docs"] = dg.MetadataValue.int(stats.docs)
        metadata[f"{prefix}/docs_per_sec"] = dg.MetadataValue.float(
            round(report.model_docs_per_sec(stats), 3)
        )
        for figure in MODEL_COUNTS:
            metadata[f"{prefix}/{figure}"] = dg.MetadataValue.int(getattr(stats, figure))
        # Where automatic concurrency settled (or the fixed count), so tuning runs can compare.
        metadata[f"{prefix}/auto"] = dg.MetadataValue.bool(stats.auto)
    metadata["failed_documents"] = dg.MetadataValue.json(report.failed[:MAX_LISTED_FAILURES])
    return metadata


MODEL_COUNTS = (
    "failed",
    "garbage",
    "errors",
    "timeouts",
    "breaker_trips",
    "workers",
    "peak_workers",
    "prompt_tokens",
    "completion_tokens",
    "hit_max_tokens",
    "hedges",
    "hedges_won",
)


def models_of(metadata: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per model, its figures from a run's metadata (``model/<name>/<figure>``)."""
    models: dict[str, dict[str, Any]] = {}
    for key, value in metadata.items():
        parts = key.split("/")
        if len(parts) == 3 and parts[0] == "model":
            models.setdefault(parts[1], {"name": parts[1]})[parts[2]] = value
    return models
