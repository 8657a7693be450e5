"""Sync-then-ingest in this process, through Dagster: what the CLI runs and tests drive.

It is the same job, assets and instance as the daily schedule and the UI, so every CLI run shows up
in the asset's run history and metadata plots.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from wiki_assets.defs.assets import IngestConfig, models_of, run_config, run_tags
from wiki_assets.defs.partitions import collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.sync import SyncPlan, sync

SUMMARY_FIELDS = (
    "count",
    "skipped",
    "recovered",
    "removed",
    "requeued",
    "unfinished",
    "duration_s",
    "docs_per_sec",
    "prompt_tokens",
    "completion_tokens",
    "hit_max_tokens",
)



@dataclass
class IngestOutcome:
    plan: SyncPlan
    run_id: str | None = None
    success: bool = True
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    run_partitions: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The CLI's JSON: figures from the run's materialization metadata, plus the documents of
        collections the run did not need to touch, which count as skipped."""
        summary: dict[str, Any] = {
            "success": self.success,
            "run_id": self.run_id,
            "error": self.error,
            "collections": self.plan.pending,
            "failed": self.metadata.get("failed_documents", []),
        }
        for key in SUMMARY_FIELDS:
            summary[key] = self.metadata.get(key, 0)
        summary["models"] = models_of(self.metadata)
        summary["skipped"] += self.plan.documents - self.documents_in_run
        return summary

    @property
    def documents_in_run(self) -> int:
        in_run = set(self.run_partitions)
        return sum(state.documents for state in self.plan.states if state.name in in_run)


def sync_then_ingest(
    instance: dg.DagsterInstance,
    corpus: CorpusResource,
    summarizer: SummarizerResource,
    dials: IngestConfig | None = None,
    log: Any = None,
    config_source: str = "",
) -> IngestOutcome:
    from wiki_assets.definitions import INGEST_JOB, build_defs

    dials = dials or IngestConfig()
    plan = sync(instance, corpus, summarizer, log, dials)
    if log:
        log.info(
            f"sync: {len(plan.states)} collections · {plan.documents} documents · "
            f"{len(plan.added)} new · {len(plan.pending)} to ingest"
        )
    outcome = IngestOutcome(plan)
    if not plan.pending:
        if log:
            log.info("ingest done: 0 docs · every collection is up to date")
        return outcome
    job = build_defs(corpus, summarizer, dials).resolve_job_def(INGEST_JOB)
    tags = {**plan.run_tags(), **run_tags("cli", dials, config_source)}
    result = job.execute_in_process(
        run_config=run_config(dials), instance=instance, tags=tags, raise_on_error=False
    )
    outcome.run_id = result.run_id
    outcome.success = result.success
    keys = instance.get_dynamic_partitions(collections_partitions.name or "")
    outcome.run_partitions = keys[keys.index(plan.pending[0]) : keys.index(plan.pending[-1]) + 1]
    if not result.success:
        failure = next((event for event in result.all_events if event.is_failure), None)
        outcome.error = _failure_reason(failure)
        return outcome
    observation = result.asset_observations_for_node("wiki_pages")[0]
    outcome.metadata = {key: value.value for key, value in observation.metadata.items()}
    return outcome


def _failure_reason(event: dg.DagsterEvent | None) -> str:
    if event is None:
        return "the run failed"
    data = event.event_specific_data
    error = getattr(data, "error", None)
    if error is not None:
        # Dagster wraps the asset's exception; the innermost cause is what a user can act on.
        while error.cause is not None:
            error = error.cause
        return error.message.strip()
    return event.message or "the run failed"
