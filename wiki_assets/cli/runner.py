"""Sync-then-ingest in this process, through Dagster: what the CLI runs and tests drive.

It is a run of the code location's own job (the one `dagster dev -w workspace.yaml` loads), on the
same instance as the daily schedule and the UI, so every CLI run shows up on the job's Runs page,
the timeline, the asset's history and plots, and re-executes from the UI with the same fleet.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

# No public API serves here: a run listed on its job's Runs page and re-executable from the UI
# needs a code-location origin (the UI filters a job's runs by the tag it yields, and a
# re-execution is launched in the parent run's location), and only a run created from the loaded
# location has one. `dg.execute_job` and `dagster job execute` create runs without it.
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.execution.api import execute_run
from dagster._core.remote_origin import InProcessCodeLocationOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._utils.hosted_user_process import recon_job_from_origin

from wiki_assets.defs.metadata.run_figures import REPORT_FILE, plain
from wiki_assets.defs.names import (
    INGEST_JOB,
    WIKI_INDEX,
    WIKI_PAGES,
    WIKI_VERIFICATION,
    collections_partitions,
    node,
)
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.sync import SyncPlan, sync
from wiki_assets.defs.sync.plan import RECOVERED
from wiki_assets.defs.tags import run_tags
from wiki_assets.defs.verification import VerifyConfig
from wiki_assets.defs.wiki_pages.config import IngestConfig, run_config
from wiki_assets.engine.errors import DiskFull
from wiki_assets.engine.ingestion.figure import Shown
from wiki_assets.engine.ingestion.figures import (
    COLLECTIONS,
    MODELS,
    RUN_FIGURES,
    SKIPPED,
    STOPPED_BY,
)
from wiki_assets.engine.ingestion.kept_reports import read_report

# The CLI's JSON (an interface other tools read): success, run_id and error, the figures of the
# engine's report declared for it (Shown.CLI) as the report has them, and each model's.
SUMMARY_FIGURES = tuple(figure for figure in RUN_FIGURES if Shown.CLI in figure.shown)


@dataclass
class IngestOutcome:
    plan: SyncPlan
    run_id: str | None = None
    success: bool = True
    error: str | None = None
    # The engine's report, whole (every failure listed), as the run kept it; empty when it never
    # ran. The run's recorded figures (the UI's) name its file.
    report: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)  # the run's recorded figures (the UI's)
    run_partitions: list[str] = field(default_factory=list)

    @property
    def stopped_by(self) -> str | None:
        """The signal that stopped the run cleanly, if one did."""
        stopped_by: str | None = self.report.get(STOPPED_BY.name)
        return stopped_by

    def summary(self) -> dict[str, Any]:
        """The CLI's JSON: figures from the engine's report (also of a run it stopped early; zeros
        when it never ran), plus the documents of collections the run did not need to touch, which
        count as skipped."""
        summary: dict[str, Any] = {
            "success": self.success,
            "run_id": self.run_id,
            "error": self.error,
        }
        for figure in SUMMARY_FIGURES:  # (no report: no item listed, nothing counted)
            summary[figure.name] = self.report.get(figure.name, [] if figure.kind is list else 0)
        summary[COLLECTIONS.name] = self.plan.pending
        summary[SKIPPED.name] += self.plan.documents - self.documents_in_run
        summary[MODELS] = self.report.get(MODELS, {})
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
    verification: VerifyConfig | None = None,
) -> IngestOutcome:
    dials = dials or IngestConfig()
    plan = sync(instance, corpus, summarizer, log, dials)
    if log:
        recovered = sum(state.recovered for state in plan.states)
        to_summarize = sum(state.to_summarize for state in plan.states)
        # Each count says what it counts: collections and documents are easily taken for another.
        log.info(
            f"sync: {plan.documents} documents in {len(plan.states)} collections · "
            f"{len(plan.added)} new collections · {len(plan.pending)} collections to ingest "
            f"({to_summarize} documents to summarize)"
            + (f" · {recovered} {RECOVERED}" if recovered else "")
        )
        if plan.repair:
            log.info(f"unfinished: {'; '.join(plan.repair)}")
    outcome = IngestOutcome(plan)
    if not plan.pending and not plan.repair:
        if log:
            log.info("ingest done: 0 docs · every collection is up to date")
        return outcome
    # What an earlier run left undone and only the index build finishes, with no collection to
    # ingest: a run of wiki_index alone (it writes missing pages again from the journal).
    index_only = frozenset({WIKI_INDEX}) if not plan.pending else None
    tags = {
        **(plan.run_tags() if plan.pending else {}),
        **run_tags("cli", dials, config_source),
    }
    ops = run_config(dials)["ops"]
    if not index_only:  # the pass runs after the pages (a run of the index alone has none)
        ops[node(WIKI_VERIFICATION)] = {"config": (verification or VerifyConfig()).model_dump()}
    config = {
        **run_config(dials),
        "ops": ops,
        # The fleet and folders of this run travel in its run config, so a re-execution from the
        # UI uses them too. Steps run in this process, one after the other (the definitions'
        # executor).
        "resources": {
            "summarizer": {"config": config_of(summarizer)},
            "corpus": {"config": config_of(corpus)},
        },
    }
    result = execute_in_location(instance, INGEST_JOB, config, tags, asset_selection=index_only)
    outcome.run_id = result.run_id
    outcome.success = result.success
    # The run's own record of its figures, and through it the engine's whole report: from the
    # instance's event log, which holds it also for a run a signal stopped (the failed step's
    # events are not in the result). A run of the index alone, or one that failed before the
    # pages' figures were recorded, has neither.
    observations = [
        entry.asset_observation
        for entry in instance.all_logs(result.run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION)
        if entry.asset_observation is not None and entry.asset_observation.asset_key == WIKI_PAGES
    ]
    if observations:
        outcome.metadata = plain(observations[-1].metadata)
        outcome.report = read_report(Path(outcome.metadata[REPORT_FILE]))
    if plan.pending:
        keys = instance.get_dynamic_partitions(collections_partitions.name or "")
        outcome.run_partitions = list(
            keys[keys.index(plan.pending[0]) : keys.index(plan.pending[-1]) + 1]
        )
    if not result.success:
        failure = next((event for event in result.all_events if event.is_failure), None)
        outcome.error = _failure_reason(failure)
    return outcome


LOCATION = "wiki_assets.definitions:defs"  # the code location workspace.yaml loads
REPOSITORY = "__repository__"


def execute_in_location(
    instance: dg.DagsterInstance,
    job_name: str,
    config: dict[str, Any],
    tags: dict[str, str],
    run_id: str | None = None,
    asset_selection: frozenset[dg.AssetKey] | None = None,
) -> dg.JobExecutionResult:
    """Run ``job_name`` of the project's code location in this process, as a run of that
    location's job (what ``dagster job launch`` creates, executed here instead of by a run
    launcher): it is listed on the job's Runs page and the timeline, and re-executes from the UI.
    ``asset_selection``: only these assets of the job (and their checks), as the UI's
    *Materialize selected* runs them.
    """
    origin = InProcessCodeLocationOrigin(
        LoadableTargetOrigin(
            executable_path=sys.executable,
            module_name="wiki_assets.definitions",
            attribute="defs",
            working_directory=os.getcwd(),
        ),
        location_name=LOCATION,
    )
    with origin.create_location(instance) as location:
        repository = location.get_repository(REPOSITORY)
        if asset_selection is None:
            job = repository.get_full_job(job_name)
        else:
            selector = JobSubsetSelector(
                location_name=LOCATION,
                repository_name=REPOSITORY,
                job_name=job_name,
                op_selection=None,
                asset_selection=asset_selection,
            )
            job = location.get_job(selector)
        plan = location.get_execution_plan(
            job, config, step_keys_to_execute=None, known_state=None, instance=instance
        ).execution_plan_snapshot
        run = instance.create_run(
            job_name=job.name,
            run_id=run_id,
            run_config=config,
            resolved_op_selection=None,
            step_keys_to_execute=plan.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags={**job.tags, **tags},
            job_snapshot=job.job_snapshot,
            execution_plan_snapshot=plan,
            parent_job_snapshot=job.parent_job_snapshot,
            remote_job_origin=job.get_remote_origin(),
            job_code_origin=job.get_python_origin(),
            asset_selection=asset_selection,
            asset_check_selection=None,
            asset_graph=repository.asset_graph,
        )
    assert run.job_code_origin is not None  # set above, from the loaded job
    recon = recon_job_from_origin(run.job_code_origin)
    if asset_selection is not None:
        recon = recon.get_subset(asset_selection=asset_selection)
    return execute_run(recon, run, instance)


def config_of(resource: dg.ConfigurableResource) -> dict[str, Any]:
    """A resource's fields as run config (unset optional fields left out)."""
    values: dict[str, Any] = {}
    for name in type(resource).model_fields:
        value = getattr(resource, name)
        if isinstance(value, list):
            value = [_plain(element) for element in value]
        if value is not None:
            values[name] = _plain(value)
    return values


def _plain(value: Any) -> Any:
    """A nested config (a model of the fleet, the embeddings endpoint) as a mapping, its unset
    optional fields left out; anything else as it is."""
    if isinstance(value, dg.Config):
        return {key: item for key, item in value.model_dump().items() if item is not None}
    return value


def _failure_reason(event: dg.DagsterEvent | None) -> str:
    if event is None:
        return "the run failed"
    data = event.event_specific_data
    error = getattr(data, "error", None)
    if error is not None:
        # Dagster wraps the asset's exception; the innermost cause is what a user can act on,
        # but for a full disk, whose own error (deep in a task group, under a failed rollback)
        # the step has already named with its folder.
        chain = [error]
        while chain[-1].cause is not None:
            chain.append(chain[-1].cause)
        named = next((e for e in chain if e.cls_name == DiskFull.__name__), None)
        if named is not None:
            text = named.message.strip()
            return text.split(f"{named.cls_name}: ", 1)[-1]
        innermost, text = chain[-1], chain[-1].message.strip()
        if innermost.cls_name == dg.Failure.__name__:
            # The asset's own report: its words, without "dagster._core…Failure: ".
            return text.split(f"{innermost.cls_name}: ", 1)[-1]
        return text
    return event.message or "the run failed"
