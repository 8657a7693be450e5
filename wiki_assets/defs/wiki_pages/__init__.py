"""The wiki pages: ``wiki_pages``, librarian-style markdown pages summarized from the synced
documents on every configured model at once, one partition per collection; its run config (the
dials), its checks, its job and how a backfill of it runs.

By kind: the run config (:mod:`.config`), the asset (:mod:`.assets`), its checks (:mod:`.checks`),
``ingest_job`` (:mod:`.jobs`) and the backfill policy (:mod:`.backfill`). The runs are requested by
the sync's sensor (:mod:`wiki_assets.defs.sync`). Below, what the rest of the project uses.
"""

from wiki_assets.defs.wiki_pages.assets import build_wiki_pages
from wiki_assets.defs.wiki_pages.checks import build_page_checks
from wiki_assets.defs.wiki_pages.config import IngestConfig, run_config
from wiki_assets.defs.wiki_pages.jobs import build_ingest_job

__all__ = [
    "IngestConfig",
    "build_ingest_job",
    "build_page_checks",
    "build_wiki_pages",
    "run_config",
]
