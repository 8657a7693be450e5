"""The verification pass: ``wiki_verification``, a partition per collection like ``wiki_pages``,
run by ``ingest_job`` after the pages and the index (so it never delays a first answer) and from
the UI. Judges from the fleet settle the sentences the rules left unchecked
(:mod:`wiki_assets.engine.verification`); the asset records its figures and its checks
(:mod:`.assets`), its run config is :mod:`.config`."""

from wiki_assets.defs.verification.assets import build_wiki_verification
from wiki_assets.defs.verification.config import VerifyConfig

__all__ = ["VerifyConfig", "build_wiki_verification"]
