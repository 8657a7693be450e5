"""``wiki_verification``: the pages' unchecked sentences put to judges from the fleet, after
the pages and the index are written; its figures and checks."""

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations

from wiki_assets.defs.metadata.materializations import VERIFICATION
from wiki_assets.defs.metadata.recording import build
from wiki_assets.defs.names import WIKI_INDEX, WIKI_VERIFICATION, collections_partitions
from wiki_assets.defs.resources import CorpusResource, SummarizerResource
from wiki_assets.defs.tags import tag_source
from wiki_assets.defs.verification.config import VerifyConfig
from wiki_assets.defs.wiki_pages.backfill import backfill_policy
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.verification.report import VerificationReport
from wiki_assets.engine.verification.verify import verify

JUDGES_HOLD = "judges_hold"
PROSE_SETTLED = "prose_settled"


def build_wiki_verification(config: type[VerifyConfig] = VerifyConfig) -> dg.AssetsDefinition:
    """``wiki_verification``, its run config's defaults taken from ``config`` (the project
    file's), with ``wiki_pages``' backfill policy: the two run in one job, whose runs take as many
    collections as a run of the pages does."""

    def wiki_verification(
        context: dg.AssetExecutionContext,
        config: VerifyConfig,
        corpus: CorpusResource,
        summarizer: SummarizerResource,
    ) -> dg.MaterializeResult:
        """The sentences of the pages' descriptions and summaries that the rules left
        unchecked, each page's in one request to a model of the fleet that did not write it (or
        to the judge named), with known controls mixed in: a judge's verdicts apply only where it
        gets the controls right. A settled sentence names its judge on the page; one a judge finds
        not stated or contradicted flags its page. Pages, index and catalog are rebuilt where it
        changed something. With the embedded model alone there is no other model to judge:
        nothing is settled, and the check prose_settled says why."""
        return _verify(context, config, corpus, summarizer)

    # Dagster takes the config's schema, its defaults included, from the annotation: there, the
    # project's subclass (the launchpad shows the file's values), typed as its base here.
    wiki_verification.__annotations__["config"] = config
    return dg.asset(
        key=WIKI_VERIFICATION,
        deps=[WIKI_INDEX],
        partitions_def=collections_partitions,
        group_name="wiki",
        kinds={"markdown"},
        check_specs=[
            dg.AssetCheckSpec(
                JUDGES_HOLD,
                asset=WIKI_VERIFICATION,
                description="Every judge that answered got its known controls right often "
                "enough for its verdicts to be applied.",
            ),
            dg.AssetCheckSpec(
                PROSE_SETTLED,
                asset=WIKI_VERIFICATION,
                description="No page was left with unchecked sentences for want of a judge or "
                "of budget.",
            ),
        ],
        backfill_policy=backfill_policy(),
    )(wiki_verification)


def _verify(
    context: dg.AssetExecutionContext,
    config: VerifyConfig,
    corpus: CorpusResource,
    summarizer: SummarizerResource,
) -> dg.MaterializeResult:
    tag_source(context)
    collections = list(context.partition_keys)
    # The embedded model is the only model of a fleet with none configured: it wrote every
    # page, so nothing would judge them; no server is started for nothing.
    endpoints = summarizer.planned_endpoints() if summarizer.models else []
    with corpus.naming_a_full_disk():
        report = verify(
            wiki_root=corpus.wiki_path, synced_root=corpus.synced_path, collections=collections,
            endpoints=endpoints, connect=ModelClient, budget=config.budget_pages,
            judge=config.judge,
            store=corpus.state_store(), log=context.log.info,
        )  # fmt: skip
    return dg.MaterializeResult(metadata=build(VERIFICATION, report), check_results=_checks(report))


def _checks(report: VerificationReport) -> list[dg.AssetCheckResult]:
    failing = [judge.name for judge in report.judges if judge.answered and not judge.holding]
    left = sum(report.skipped.values())
    return [
        dg.AssetCheckResult(
            check_name=JUDGES_HOLD, passed=not failing, severity=dg.AssetCheckSeverity.WARN,
            metadata={"failing": ", ".join(failing) or "none"},
        ),
        dg.AssetCheckResult(
            check_name=PROSE_SETTLED, passed=left == 0, severity=dg.AssetCheckSeverity.WARN,
            metadata={"pages_left": left, "why": report.skipped_said()},
        ),
    ]  # fmt: skip
