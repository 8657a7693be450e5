"""The link index: ``wiki_index`` (``index.md``: every page by collection and by shared topic),
rebuilt after the pages, re-rendering any page whose links are out of date; the wiki's checks,
which its build evaluates; and what rebuilds it after pages written outside the ingest job.

By kind: the asset (:mod:`.assets`), its checks (:mod:`.checks`), Dagster's automation sensor
(:mod:`.sensors`). Below, what the rest of the project uses.
"""

from wiki_assets.defs.index.assets import wiki_index
from wiki_assets.defs.index.sensors import build_automation_sensor

__all__ = ["build_automation_sensor", "wiki_index"]
