"""Dagster asset checks: the wiki's checks (:mod:`wiki_assets.engine.wiki.audit`) shown in the UI.

``wiki_index`` carries the checks of the whole wiki as readers see it, evaluated by its build
right after the index is written. ``wiki_pages`` carries the checks of its partitions: the state
store knows which documents failed and why. Dagster records a check per partition when a run
materializes one partition; a run over several (a single-run backfill) records one evaluation
for all of them.
"""

import warnings

import dagster as dg
import polars as pl
from pydantic import Field

from wiki_assets.defs.metadata import CHECK, build
from wiki_assets.defs.partitions import collections_partitions
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.engine.wiki.audit import (
    FLAGGED_SHARE,
    MAX_FLAGGED_SHARE,
    NO_FAILED_DOCUMENTS,
    WIKI_CHECKS,
    Audit,
    Outcome,
    Severity,
    failed_documents,
    flagged_pages,
)

# Checks per partition are a preview in this Dagster version; they are what lets a partition show
# its own result, and the check's logic does not depend on them.
warnings.filterwarnings("ignore", message="Specifying a partitions_def", category=dg.PreviewWarning)

_SEVERITY = {Severity.ERROR: dg.AssetCheckSeverity.ERROR, Severity.WARN: dg.AssetCheckSeverity.WARN}


def _result(outcome: Outcome) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=outcome.check.name,
        passed=outcome.passed,
        severity=_SEVERITY[outcome.check.severity],
        metadata=build(CHECK, outcome),
    )


def wiki_check_specs(asset: str) -> list[dg.AssetCheckSpec]:
    """The checks of the whole wiki, declared on ``asset`` (``wiki_index``: its build runs them)."""
    return [
        dg.AssetCheckSpec(check.name, asset=asset, description=check.description)
        for check in WIKI_CHECKS
    ]


def wiki_check_results(audit: Audit) -> list[dg.AssetCheckResult]:
    return [_result(outcome) for outcome in audit.outcomes if outcome.check in WIKI_CHECKS]


class FlaggedShareConfig(dg.Config):
    max_flagged_share: float = Field(
        default=MAX_FLAGGED_SHARE,
        ge=0.0,
        le=1.0,
        description="The share of a partition's pages flagged for review past which "
        "flagged_share warns.",
    )


def build_page_checks(wiki_pages: dg.AssetsDefinition) -> list[dg.AssetChecksDefinition]:
    @dg.asset_check(
        asset=wiki_pages,
        name=NO_FAILED_DOCUMENTS.name,
        partitions_def=collections_partitions,
        description=NO_FAILED_DOCUMENTS.description,
    )
    def no_failed_documents(
        context: dg.AssetCheckExecutionContext, corpus: CorpusResource
    ) -> dg.AssetCheckResult:
        return _result(failed_documents(corpus.state_store(), context.partition_keys))

    @dg.asset_check(
        asset=wiki_pages,
        name=FLAGGED_SHARE.name,
        partitions_def=collections_partitions,
        description=FLAGGED_SHARE.description,
    )
    def flagged_share(
        context: dg.AssetCheckExecutionContext, corpus: CorpusResource, config: FlaggedShareConfig
    ) -> dg.AssetCheckResult:
        return _result(
            flagged_pages(
                corpus.state_store(),
                context.partition_keys,
                max_flagged_share=config.max_flagged_share,
            )
        )

    return [no_failed_documents, flagged_share]


def audit_table(audit: Audit) -> pl.DataFrame:
    """One row per check, for ``wiki-assets check``."""
    return pl.DataFrame(
        {
            "check": [outcome.check.name for outcome in audit.outcomes],
            "severity": [str(outcome.check.severity) for outcome in audit.outcomes],
            "checked": [outcome.checked for outcome in audit.outcomes],
            "problems": [len(outcome.findings) for outcome in audit.outcomes],
            "result": [_verdict(outcome) for outcome in audit.outcomes],
        }
    )


def _verdict(outcome: Outcome) -> str:
    if outcome.passed:
        return "passed"
    return "FAILED" if outcome.check.severity is Severity.ERROR else "warning"
