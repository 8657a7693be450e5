"""``wiki_index``: ``index.md``, rebuilt after the pages, and the wiki's checks its build runs."""

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations

from wiki_assets.defs.index.checks import wiki_check_results, wiki_check_specs
from wiki_assets.defs.metadata.materializations import INDEX, IndexRun
from wiki_assets.defs.metadata.recording import build
from wiki_assets.defs.names import WIKI_INDEX, WIKI_PAGES
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.defs.tags import tag_source
from wiki_assets.engine.wiki.audit import NO_DANGLING_LINKS, audit_wiki
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.engine.wiki.render import LAYOUT_VERSION


@dg.asset(
    key=WIKI_INDEX,
    deps=[WIKI_PAGES],
    group_name="wiki",
    kinds={"markdown"},
    code_version=LAYOUT_VERSION,
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
