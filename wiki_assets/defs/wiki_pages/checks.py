"""``wiki_pages``' asset checks, one result per partition: the checks of a collection's pages
(:mod:`wiki_assets.engine.wiki.audit`; the state store knows which documents failed and why) and
of the run's fleet (``models_in_service``). Each partition a run covers gets its own result, also
in a run over several (a single-run backfill): Dagster would otherwise record one result for the
run, with no partition, and show every partition of the run as skipped. A run of the checks with
no partition (the asset's Checks tab, "Execute all") checks every partition.

The checks of the whole wiki are ``wiki_index``'s (:mod:`wiki_assets.defs.index.checks`).
"""

import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import dagster as dg

# No public API serves here: dg.AssetCheckEvaluation's target_materialization_data (which
# partition's materialization a result is about, for a check run over many partitions at
# once) takes this type, and dagster does not export it.
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)
from pydantic import Field

from wiki_assets.defs.index.checks import SEVERITY
from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.metadata.materializations import CHECK
from wiki_assets.defs.metadata.recording import build
from wiki_assets.defs.names import WIKI_PAGES, collections_partitions
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.engine.ingestion.model_stats import IN_SERVICE
from wiki_assets.engine.state.journal import WRITTEN, Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.audit import (
    FLAGGED_SHARE,
    MAX_FLAGGED_SHARE,
    NO_FAILED_DOCUMENTS,
    Outcome,
    Severity,
    WikiCheck,
    failed_documents,
)

# Checks per partition are a preview in this Dagster version; they are what lets a partition show
# its own result, and the check's logic does not depend on them.
warnings.filterwarnings("ignore", message="Specifying a partitions_def", category=dg.PreviewWarning)

# A check of the run rather than of the wiki's files: what its figures say of its fleet.
MODELS_IN_SERVICE = WikiCheck(
    "models_in_service",
    Severity.WARN,
    "Every model of the run's fleet served to the run's end: none whose server died, none that "
    "its breaker took out after failures in a row (the run's models_out says which and why).",
)


class FlaggedShareConfig(dg.Config):
    max_flagged_share: float = Field(
        default=MAX_FLAGGED_SHARE,
        ge=0.0,
        le=1.0,
        description="The share of a partition's pages flagged for review past which "
        "flagged_share warns.",
    )


def _targets(
    instance: dg.DagsterInstance, keys: Sequence[str]
) -> dict[str, AssetCheckEvaluationTargetMaterializationData]:
    """Each partition's latest materialization, which its result is about (what Dagster looks up
    for a check of one partition): the run's own, in one query, right after the run wrote them."""
    found: dict[str, AssetCheckEvaluationTargetMaterializationData] = {}
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=WIKI_PAGES, asset_partitions=list(keys)), limit=len(keys)
    ).records
    for record in records:  # newest first
        if record.partition_key is not None and record.partition_key not in found:
            found[record.partition_key] = _target(record)
    for key in keys:  # one materialized since by another run, or a check run on its own
        if key not in found:
            latest = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=WIKI_PAGES, asset_partitions=[key]), limit=1
            ).records
            if latest:
                found[key] = _target(latest[0])
    return found


def _target(record: dg.EventLogRecord) -> AssetCheckEvaluationTargetMaterializationData:
    return AssetCheckEvaluationTargetMaterializationData(
        storage_id=record.storage_id, run_id=record.run_id, timestamp=record.timestamp
    )


def _per_partition(
    context: dg.AssetCheckExecutionContext, outcomes: dict[str, Outcome]
) -> Iterator[dg.AssetCheckEvaluation | dg.Output[None]]:
    targets = _targets(context.instance, list(outcomes))
    for key, outcome in outcomes.items():
        yield dg.AssetCheckEvaluation(
            asset_key=WIKI_PAGES,
            check_name=outcome.check.name,
            passed=outcome.passed,
            severity=SEVERITY[outcome.check.severity],
            metadata=build(CHECK, outcome),
            target_materialization_data=targets.get(key),
            partition=key,
        )
    if not (context.has_partition_key or context.has_partition_key_range) and outcomes:
        # A run of no partition (the Checks tab's "Execute all"): Dagster planned one result
        # without a partition too, which would otherwise stay pending (and show as skipped):
        # the whole wiki's, every partition's findings together.
        (check,) = {outcome.check for outcome in outcomes.values()}
        found = (finding for outcome in outcomes.values() for finding in outcome.findings)
        whole = Outcome(
            check, sum(o.checked for o in outcomes.values()), tuple(dict.fromkeys(found))
        )
        yield dg.AssetCheckEvaluation(
            asset_key=WIKI_PAGES,
            check_name=check.name,
            passed=whole.passed,
            severity=SEVERITY[check.severity],
            metadata=build(CHECK, whole),
        )
    # The check's own output, with nothing in it: its results are the evaluations above, which
    # Dagster does not count as the output (it would log that the op "did not yield" it).
    for name in context.op_execution_context.selected_output_names:
        yield dg.Output(None, output_name=name)


def models_out_of(instance: dg.DagsterInstance, run_id: str) -> Outcome:
    """:data:`MODELS_IN_SERVICE` of a run, from the figures it recorded on ``wiki_pages``: each
    model that left it is a finding. A run with no figures (the check run on its own) passes."""
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION
    ).records
    for record in records:
        event = record.event_log_entry.dagster_event
        observation = record.asset_observation
        if event is None or event.asset_key != WIKI_PAGES or observation is None:
            continue
        values = md.plain(observation.metadata)
        models = md.models_of(values)
        out = [
            name
            for name, figures in models.items()
            if md.MODEL_SERVICE.read(figures) not in (*IN_SERVICE, None)
        ]
        findings = tuple(model_lines(md.MODELS_OUT.read(values) or "", out))
        return Outcome(MODELS_IN_SERVICE, len(models), findings)
    return Outcome(MODELS_IN_SERVICE, 0)


def model_lines(models_out: str, names: Sequence[str]) -> list[str]:
    """``models_out``'s line for each of ``names``: one per model. The text joins them with
    "; ", which a line may hold itself ("taken out (3 requests, 0 answered; the last error:
    …)"), so it is cut where a model's name begins a line, not at every "; "."""
    starts: dict[str, int] = {}
    for name in names:
        if models_out.startswith(f"{name}: "):
            starts[name] = 0
        elif (at := models_out.find(f"; {name}: ")) >= 0:
            starts[name] = at + 2
    found = sorted(starts.values())
    lines = []
    for name in names:
        start = starts.get(name)
        if start is None:  # (a run recorded before its models' lines were)
            lines.append(f"{name}: did not serve the run to its end")
            continue
        end = next((other - 2 for other in found if other > start), len(models_out))
        lines.append(models_out[start:end])
    return lines


def flagged_by_collection(
    store: StateStore, collections: Sequence[str], max_flagged_share: float
) -> dict[str, Outcome]:
    """:func:`wiki_assets.engine.wiki.audit.flagged_pages` of each collection, in one pass over
    the pages (that function reads every page of the wiki per call)."""
    pages = dict.fromkeys(collections, 0)
    flagged: dict[str, list[str]] = {name: [] for name in collections}
    if store.has_state():
        with Journal(store) as journal:
            for entry in journal.pages():
                if entry.status != WRITTEN or entry.collection not in pages:
                    continue
                pages[entry.collection] += 1
                reasons = (entry.result or {}).get("flags") or []
                if reasons:
                    flagged[entry.collection].append(f"{entry.page}: {', '.join(reasons)}")
    outcomes = {}
    for name in collections:
        share = len(flagged[name]) / pages[name] if pages[name] else 0.0
        shown = tuple(flagged[name]) if share > max_flagged_share else ()
        outcomes[name] = Outcome(FLAGGED_SHARE, pages[name], shown, round(share, 3))
    return outcomes


def checked_partitions(context: dg.AssetCheckExecutionContext) -> list[str]:
    """The partitions a run of the checks covers: its own, or every collection when it has none
    (what the Checks tab's "Execute all" launches)."""
    if context.has_partition_key or context.has_partition_key_range:
        return list(context.partition_keys)
    name = collections_partitions.name
    assert name is not None
    return list(context.instance.get_dynamic_partitions(name))


def _per_partition_check(check: WikiCheck, asset: dg.AssetsDefinition) -> dict[str, Any]:
    """A multi-asset check's arguments for ``check`` on ``asset``, evaluated per collection."""
    spec = dg.AssetCheckSpec(
        check.name,
        asset=asset,
        partitions_def=collections_partitions,
        description=check.description,
    )
    return {"specs": [spec], "name": check.name, "can_subset": True}


def build_page_checks(wiki_pages: dg.AssetsDefinition) -> list[dg.AssetChecksDefinition]:
    # Multi-asset checks, as their results are evaluations of one partition each (an
    # `asset_check` returns one result for its whole run).
    @dg.multi_asset_check(**_per_partition_check(NO_FAILED_DOCUMENTS, wiki_pages))
    def no_failed_documents(
        context: dg.AssetCheckExecutionContext, corpus: CorpusResource
    ) -> Iterator[dg.AssetCheckEvaluation | dg.Output[None]]:
        store = corpus.state_store()
        outcomes = {key: failed_documents(store, [key]) for key in checked_partitions(context)}
        yield from _per_partition(context, outcomes)

    @dg.multi_asset_check(**_per_partition_check(FLAGGED_SHARE, wiki_pages))
    def flagged_share(
        context: dg.AssetCheckExecutionContext, corpus: CorpusResource, config: FlaggedShareConfig
    ) -> Iterator[dg.AssetCheckEvaluation | dg.Output[None]]:
        outcomes = flagged_by_collection(
            corpus.state_store(), checked_partitions(context), config.max_flagged_share
        )
        yield from _per_partition(context, outcomes)

    @dg.multi_asset_check(**_per_partition_check(MODELS_IN_SERVICE, wiki_pages))
    def models_in_service(
        context: dg.AssetCheckExecutionContext,
    ) -> Iterator[dg.AssetCheckEvaluation | dg.Output[None]]:
        outcome = models_out_of(context.instance, context.op_execution_context.run_id)
        yield from _per_partition(context, dict.fromkeys(checked_partitions(context), outcome))

    return [no_failed_documents, flagged_share, models_in_service]
