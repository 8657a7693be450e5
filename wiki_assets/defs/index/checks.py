"""``wiki_index``'s asset checks: the checks of the whole wiki as readers see it
(:mod:`wiki_assets.engine.wiki.audit`), evaluated by the index's build right after it writes
``index.md`` (one pass over the pages serves both); and how any check's outcome is shown in the
UI (:data:`SEVERITY`, the result's metadata)."""

import dagster as dg

from wiki_assets.defs.metadata.materializations import CHECK
from wiki_assets.defs.metadata.recording import build
from wiki_assets.engine.wiki.audit import WIKI_CHECKS, Audit, Outcome, Severity

SEVERITY = {Severity.ERROR: dg.AssetCheckSeverity.ERROR, Severity.WARN: dg.AssetCheckSeverity.WARN}


def _result(outcome: Outcome) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=outcome.check.name,
        passed=outcome.passed,
        severity=SEVERITY[outcome.check.severity],
        metadata=build(CHECK, outcome),
    )


def wiki_check_specs(asset: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    """The checks of the whole wiki, declared on ``asset`` (``wiki_index``: its build runs them)."""
    return [
        dg.AssetCheckSpec(check.name, asset=asset, description=check.description)
        for check in WIKI_CHECKS
    ]


def wiki_check_results(audit: Audit) -> list[dg.AssetCheckResult]:
    return [_result(outcome) for outcome in audit.outcomes if outcome.check in WIKI_CHECKS]
