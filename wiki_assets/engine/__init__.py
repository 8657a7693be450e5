"""The summarizer engine: a plain typed library with no Dagster imports.

One shared work queue feeds every model's workers; each worker claims a few documents at a time and
comes back for more when it is done, so no model ever waits for another. Results are journaled the
moment they return and written to the wiki on a timer; the state that runs share (journal, locks,
fleet-wide model slots) lives in a :class:`StateStore`, SQLite by default or PostgreSQL when several
machines run at once. The Dagster layer (``wiki_assets.defs``) is a
thin adapter over :func:`ingest`.
"""

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
