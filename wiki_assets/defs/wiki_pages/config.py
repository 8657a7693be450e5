"""The run config of ``wiki_pages`` (``ops.wiki_pages.config``): the dials of one ingest, whose
fields are the engine's :class:`~wiki_assets.engine.Dials`, their defaults the project file's."""

import copy
from typing import Any

import dagster as dg
from pydantic import create_model

from wiki_assets.defs.loggers import LOGGERS
from wiki_assets.defs.names import WIKI_PAGES, node
from wiki_assets.defs.resources import fields_from
from wiki_assets.engine import Dials


# give_up_after_s is the engine's (simulations and tests shorten it), not a run config key.
@fields_from(Dials, exclude={"give_up_after_s"})
class IngestConfig(dg.Config):
    """The dials of one ingest. They live in run config because hardware and models change."""

    def to_dials(self) -> Dials:
        return Dials(**self.model_dump())


def dials_with_defaults(dials: IngestConfig) -> type[IngestConfig]:
    """``IngestConfig`` whose defaults are ``dials`` (the project file's): what the launchpad
    pre-fills and what a UI materialization runs with when nothing is changed."""
    fields: dict[str, Any] = {}
    for name, info in IngestConfig.model_fields.items():
        value = getattr(dials, name)
        if value == info.default:
            continue
        overridden = copy.copy(info)
        overridden.default = value
        fields[name] = (info.annotation, overridden)
    if not fields:
        return IngestConfig
    return create_model("IngestConfig", __base__=IngestConfig, **fields)


def run_config(dials: IngestConfig) -> dict[str, Any]:
    """Run config for the ingest job: the dials, and the aligned console logger."""
    return {"ops": {node(WIKI_PAGES): {"config": dials.model_dump()}}, **LOGGERS}
