"""The summarizer engine: a plain typed library with no Dagster imports.

One shared work queue feeds every model's workers; each worker claims a few documents at a time and
comes back for more when it is done, so no model ever waits for another. Results are journaled the
moment they return and written to the wiki on a timer; the state that runs share (journal, locks,
fleet-wide model slots) lives in a :class:`StateStore`, SQLite by default or PostgreSQL when several
machines run at once. The Dagster layer (``wiki_assets.defs``) is a
thin adapter over :func:`ingest`.

The names are imported when first used (PEP 562): a process that needs one part of the engine, such
as the helper process that answers link candidates ahead of a run
(:mod:`~wiki_assets.engine.related.helper`), does not import ``openai`` and the dispatch with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wiki_assets.engine.config import Dials, Endpoint
    from wiki_assets.engine.corpus import ROOT_COLLECTION, SourceDocument, collection_version, scan
    from wiki_assets.engine.errors import (
        CollectionBusy,
        ConfigurationError,
        DocumentError,
        DraftError,
        EmbeddedModelUnavailable,
        ModelError,
        StateError,
        StateUnavailable,
        UnsafePath,
        WikiAssetsError,
    )
    from wiki_assets.engine.plan import CollectionState, survey
    from wiki_assets.engine.report import IngestReport, ModelStats
    from wiki_assets.engine.run import ingest
    from wiki_assets.engine.store import StateStore

_HOME = {
    "Dials": "wiki_assets.engine.config",
    "Endpoint": "wiki_assets.engine.config",
    "ROOT_COLLECTION": "wiki_assets.engine.corpus",
    "SourceDocument": "wiki_assets.engine.corpus",
    "collection_version": "wiki_assets.engine.corpus",
    "scan": "wiki_assets.engine.corpus",
    "CollectionBusy": "wiki_assets.engine.errors",
    "ConfigurationError": "wiki_assets.engine.errors",
    "DocumentError": "wiki_assets.engine.errors",
    "DraftError": "wiki_assets.engine.errors",
    "EmbeddedModelUnavailable": "wiki_assets.engine.errors",
    "ModelError": "wiki_assets.engine.errors",
    "StateError": "wiki_assets.engine.errors",
    "StateUnavailable": "wiki_assets.engine.errors",
    "UnsafePath": "wiki_assets.engine.errors",
    "WikiAssetsError": "wiki_assets.engine.errors",
    "CollectionState": "wiki_assets.engine.plan",
    "survey": "wiki_assets.engine.plan",
    "IngestReport": "wiki_assets.engine.report",
    "ModelStats": "wiki_assets.engine.report",
    "ingest": "wiki_assets.engine.run",
    "StateStore": "wiki_assets.engine.store",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later lookups do not come back here
    return value


__all__ = [
    "ROOT_COLLECTION",
    "CollectionBusy",
    "CollectionState",
    "ConfigurationError",
    "Dials",
    "DocumentError",
    "DraftError",
    "EmbeddedModelUnavailable",
    "Endpoint",
    "IngestReport",
    "ModelError",
    "ModelStats",
    "SourceDocument",
    "StateError",
    "StateStore",
    "StateUnavailable",
    "UnsafePath",
    "WikiAssetsError",
    "collection_version",
    "ingest",
    "scan",
    "survey",
]
