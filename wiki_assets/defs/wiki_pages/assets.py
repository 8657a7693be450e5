"""``wiki_pages``: librarian-style markdown pages summarized from the synced documents, one
partition per collection."""

import time

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations

from wiki_assets.defs.metadata.comparison import with_comparison
from wiki_assets.defs.metadata.materializations import partition_metadata
from wiki_assets.defs.metadata.run_figures import REPORT_FILE, run_metadata
from wiki_assets.defs.names import SYNCED_DOCUMENTS, WIKI_PAGES, collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.tags import tag_models_out, tag_run
from wiki_assets.defs.wiki_pages.backfill import backfill_policy
from wiki_assets.defs.wiki_pages.config import IngestConfig
from wiki_assets.engine import Dials, ingest, survey
from wiki_assets.engine.ingestion.kept_reports import keep_report
from wiki_assets.engine.prompting.prompts import PROMPT_VERSION
from wiki_assets.engine.wiki.files import STATE_DIR


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


def build_wiki_pages(dials: type[IngestConfig] = IngestConfig) -> dg.AssetsDefinition:
    """The ``wiki_pages`` asset, its dials' defaults taken from ``dials`` (the project file's)."""

    def wiki_pages(
        context: dg.AssetExecutionContext,
        config: IngestConfig,
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
        tag_run(context, config, corpus)
        run_dials = config.to_dials()
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
        with (
            summarizer.live(context.log, corpus.wiki_path / STATE_DIR) as fleet,
            corpus.naming_a_full_disk(),
        ):
            report = ingest(
                corpus.corpus(collections),
                corpus.wiki_path,
                fleet,
                run_dials,
                log=context.log,
                store=store,
            )
            kept = keep_report(corpus.wiki_path, context.run_id, report)
        tag_models_out(context, report)
        figures = with_comparison(
            run_metadata(report), context.instance, context.run_id, time.time()
        )
        figures[REPORT_FILE] = dg.MetadataValue.path(str(kept))
        # Once per run, stopped early or not: `wiki-assets runs` lists both.
        context.log_event(dg.AssetObservation(asset_key=context.asset_key, metadata=figures))
        if report.tally.stopped:
            # Finished pages are on disk and journaled; the rest is left for the next run, so the
            # partitions must not look materialized. A signal that stopped it is in the figures
            # (stopped_by, above); a run terminated from the UI is marked canceled by Dagster.
            raise dg.Failure(
                description=f"{report.tally.stopped}; {report.unfinished} documents left for "
                "the next run",
            )
        for key, counts in partition_metadata(report, before, corpus.collection_depth).items():
            context.add_asset_metadata(counts, partition_key=key)
        return dg.MaterializeResult()

    # Dagster takes the config's schema, its defaults included, from the annotation: there, the
    # project's subclass (the launchpad shows the file's values), typed as its base here.
    wiki_pages.__annotations__["config"] = dials
    return dg.asset(
        key=WIKI_PAGES,
        partitions_def=collections_partitions,
        deps=[SYNCED_DOCUMENTS],
        group_name="wiki",
        code_version=PROMPT_VERSION,
        backfill_policy=backfill_policy(),
        kinds={"openai", "markdown"},
    )(wiki_pages)
