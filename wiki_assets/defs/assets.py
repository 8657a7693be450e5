"""The two assets: the synced documents (a source) and the wiki pages summarized from them."""

import copy
import warnings
from typing import Any, cast

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import create_model

from wiki_assets.defs import handoff
from wiki_assets.defs.checks import wiki_check_results, wiki_check_specs
from wiki_assets.defs.derived import fields_from
from wiki_assets.defs.loggers import LOGGERS
from wiki_assets.defs.metadata.materializations import INDEX, IndexRun, partition_metadata
from wiki_assets.defs.metadata.recording import build
from wiki_assets.defs.metadata.run_figures import run_metadata
from wiki_assets.defs.names import SYNCED_DOCUMENTS, WIKI_INDEX, WIKI_PAGES, node
from wiki_assets.defs.partitions import collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.tags import tag_run, tag_source
from wiki_assets.engine import Dials, environment, ingest, survey
from wiki_assets.engine.model.prompts import PROMPT_VERSION
from wiki_assets.engine.wiki.audit import NO_DANGLING_LINKS, audit_wiki
from wiki_assets.engine.wiki.index import index_wiki

# Backfill policies are what this asset is built on; the beta notice only adds noise to logs.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy`", category=dg.BetaWarning)

synced_documents = dg.AssetSpec(
    SYNCED_DOCUMENTS,
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


# give_up_after_s is the engine's (simulations and tests shorten it), not a run config key.
@fields_from(Dials, exclude={"give_up_after_s"})
class IngestConfig(dg.Config):
    """The dials of one ingest. They live in run config because hardware and models change."""

    def to_dials(self) -> Dials:
        return Dials(**self.model_dump())


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
    """Run config for the ingest job: the dials, and the aligned console logger."""
    return {"ops": {node(WIKI_PAGES): {"config": dials.model_dump()}}, **LOGGERS}


def no_collection(keys: list[str], corpus: CorpusResource) -> str:
    """Why a run of partitions that name no collection fails: which, where, and what is there."""
    states = survey(
        corpus.synced_path, corpus.wiki_path, [], Dials(), corpus.collection_depth,
        corpus.state_store(),
    )  # fmt: skip
    there = [state.name for state in states]
    return (
        f"partition {', '.join(map(repr, keys))} names no collection in {corpus.synced_path} "
        f"(a folder there, or pages of one in the wiki); its collections: "
        f"{', '.join(there) or 'none'}. Partitions come from the sync (sync_job, the daily "
        "schedule or `wiki-assets ingest`), which also drops one that names no collection."
    )


def backfill_policy() -> dg.BackfillPolicy:
    # By default a backfill of many collections is one run: one fleet, one queue, one set of
    # figures, no per-run start-up. Past one machine, runs of a few collections each go through
    # Dagster's run queue in parallel (its concurrency limit), sharing each model's in-flight limit
    # through the state store.
    per_run = environment.collections_per_run()
    if per_run is None:
        return dg.BackfillPolicy.single_run()
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=per_run)


def build_wiki_pages(dials: type[IngestConfig] = IngestConfig) -> dg.AssetsDefinition:
    """The ``wiki_pages`` asset, its dials' defaults taken from ``dials`` (the project file's)."""

    @dg.asset(
        key=WIKI_PAGES,
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

        A partition per collection of the synced root: the sensor register_collections adds them
        while the daemon runs, and every sync (sync_job, the daily schedule, `wiki-assets
        ingest`) does too. No partitions yet? Run sync_job.

        Materializing a partition summarizes its new and changed documents on every configured
        model at once and removes the pages of deleted documents. Each partition records its own
        counts; the run's figures (duration, docs/s, per model, dials) are one observation of this
        asset per run, so tuning runs can be compared one point each.
        """
        collections = list(context.partition_keys)
        tag_run(context, cast(IngestConfig, config), corpus)
        run_dials = cast(IngestConfig, config).to_dials()  # a subclass with the file's defaults
        store = corpus.state_store()
        # What each collection holds before the run (the same rule the run applies), so that
        # every partition can record its own counts; the fleet as planned is the one that runs.
        before = survey(
            corpus.synced_path,
            corpus.wiki_path,
            summarizer.planned_endpoints(),
            run_dials,
            corpus.collection_depth,
            store,
            collections,
        )
        unknown = sorted(set(collections) - {state.name for state in before})
        if unknown:
            # A partition added by hand (a typo) would otherwise materialize green, empty.
            raise dg.Failure(description=no_collection(unknown, corpus))
        with summarizer.live(context.log) as fleet, corpus.naming_a_full_disk():
            report = ingest(
                synced_root=corpus.synced_path,
                wiki_root=corpus.wiki_path,
                collections=collections,
                endpoints=fleet.endpoints,
                dials=run_dials,
                depth=corpus.collection_depth,
                max_bytes=corpus.max_bytes,
                max_file_bytes=corpus.max_file_bytes,
                log=context.log,
                store=store,
                embeddings=fleet.embeddings,
                servers=fleet.servers,
            )
        # The whole report, for the CLI that executes this run in its own process.
        handoff.publish(context.run_id, report)
        figures = run_metadata(report)
        # Once per run, stopped early or not: `wiki-assets runs` lists both.
        context.log_event(dg.AssetObservation(asset_key=context.asset_key, metadata=figures))
        if report.stopped:
            # Finished pages are on disk and journaled; the rest is left for the next run, so the
            # partitions must not look materialized. A signal that stopped it is in the figures
            # (stopped_by, above); a run terminated from the UI is marked canceled by Dagster.
            raise dg.Failure(
                description=f"{report.stopped}; {report.unfinished} documents left for the next "
                "run",
            )
        for key, counts in partition_metadata(report, before, corpus.collection_depth).items():
            context.add_asset_metadata(counts, partition_key=key)
        return dg.MaterializeResult()

    return wiki_pages


@dg.asset(
    key=WIKI_INDEX,
    deps=[WIKI_PAGES],
    group_name="wiki",
    kinds={"markdown"},
    # Rebuilt whenever pages change, by the ingest job itself or, for runs that only select
    # wiki_pages (a UI backfill), by Dagster's automation when it is on.
    automation_condition=dg.AutomationCondition.eager(),
    # The wiki's checks are evaluated by the build itself: one pass over the pages serves both
    # the index's figures and the checks.
    check_specs=wiki_check_specs(WIKI_INDEX),
)
def wiki_index(context: dg.AssetExecutionContext, corpus: CorpusResource) -> dg.MaterializeResult:
    """``index.md``: every page by collection and by shared topic. Building it also re-renders any
    page whose related links or backlinks are out of date, so no link in the wiki dangles; then the
    wiki's checks run over the files as readers see them."""
    tag_source(context)
    with corpus.naming_a_full_disk():
        report = index_wiki(corpus.wiki_path, corpus.state_store())
    audit = audit_wiki(corpus.wiki_path, corpus.synced_path)
    dangling = audit.outcome(NO_DANGLING_LINKS).findings
    for finding in dangling[:20]:
        context.log.warning(f"dangling link in {finding}")
    context.log.info(
        f"index: {report.pages} pages · {report.collections} collections · "
        f"{report.topics} shared topics · {report.rewritten} pages rewritten (links or missing)"
    )
    return dg.MaterializeResult(
        metadata=build(INDEX, IndexRun(report, len(dangling))),
        check_results=wiki_check_results(audit),
    )
