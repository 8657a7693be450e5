"""The run config of ``wiki_pages`` (``ops.wiki_pages.config``): the dials of one ingest, whose
fields are the engine's :class:`~wiki_assets.engine.Dials`, their defaults the project file's."""

from typing import Any

import dagster as dg

from wiki_assets.defs.loggers import LOGGERS
from wiki_assets.defs.names import WIKI_PAGES, node
from wiki_assets.defs.resources import fields_from
from wiki_assets.engine import Dials
from wiki_assets.engine.config import ENGINE_DIALS


@fields_from(Dials, exclude=ENGINE_DIALS)
class IngestConfig(dg.Config):
    """The dials of one ingest. They live in run config because hardware and models change."""

    def to_dials(self) -> Dials:
        return Dials(**self.model_dump())


def run_config(dials: IngestConfig) -> dict[str, Any]:
    """Run config for the ingest job: the dials, and the aligned console logger."""
    return {"ops": {node(WIKI_PAGES): {"config": dials.model_dump()}}, **LOGGERS}
