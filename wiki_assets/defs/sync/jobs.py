"""``sync_job``: the sync and its plan as a run, what the daily schedule requests."""

import dagster as dg

from wiki_assets.defs.metadata.materializations import SYNC
from wiki_assets.defs.metadata.recording import build
from wiki_assets.defs.names import SYNC_JOB, SYNC_OP
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.sync.observe import sync
from wiki_assets.defs.sync.plan import plan_lines, recorded_rates
from wiki_assets.defs.tags import tag_source
from wiki_assets.defs.wiki_pages.config import IngestConfig


def build_sync_job(dials: IngestConfig) -> dg.JobDefinition:
    """``sync_job``: the sync and its plan, as a run (what the schedule requests). The plan is
    made with ``dials`` (the project file's), which the ingest runs it leads to use."""

    @dg.op(
        name=SYNC_OP,
        description="Run the mirror command, observe every collection on synced_documents, "
        "register new collections as partitions, and record which collections need work.",
    )
    def sync_collections(
        context: dg.OpExecutionContext,
        corpus: CorpusResource,
        summarizer: SummarizerResource,
    ) -> dg.Output[None]:
        tag_source(context)
        plan = sync(
            context.instance, corpus, summarizer, context.log, dials, context.log_event,
            after_pages=False,
        )  # fmt: skip
        # The same plan `wiki-assets plan` prints, so the run's log says what its runs will do.
        to_summarize = sum(state.to_summarize for state in plan.states)
        estimate = recorded_rates(context.instance, summarizer, to_summarize)
        for line in [*plan_lines(plan.states), estimate.line()]:
            context.log.info(line)
        if plan.repair:
            context.log.info(f"unfinished: {'; '.join(plan.repair)}")
        return dg.Output(None, metadata=build(SYNC, plan.to_run()))

    @dg.job(
        name=SYNC_JOB,
        description="Sync the synced root and plan the ingest: the sensor ingest_after_sync then "
        "requests the runs of the new and stale collections.",
    )
    def sync_job() -> None:
        sync_collections()

    return sync_job
