"""The summarizer engine: a plain typed library with no Dagster imports.

One shared work queue feeds every model's workers; each worker claims a few documents at a time and
comes back for more when it is done, so no model ever waits for another. Results are journaled the
moment they return and written to the wiki on a timer; the state that runs share (journal,
locks, fleet-wide worker leases) lives in a :class:`StateStore`, SQLite by default or PostgreSQL
when several machines run at once. The Dagster layer (``wiki_assets.defs``) is a thin adapter over
:func:`ingest`.

The public names are imported when first used (PEP 562), from the module :data:`_HOME` names, so
that a process that needs one part of the engine, such as the helper process that answers link
candidates ahead of a run (:mod:`~wiki_assets.engine.related.helper`), does not import ``openai``
and the dispatch with it. Type checkers read the same names in the ``TYPE_CHECKING`` block;
``tests/test_architecture.py`` checks that the two agree.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers: "as" marks each a re-export
    from wiki_assets.engine.config import Dials as Dials
    from wiki_assets.engine.config import Endpoint as Endpoint
    from wiki_assets.engine.documents.corpus import ROOT_COLLECTION as ROOT_COLLECTION
    from wiki_assets.engine.documents.corpus import Corpus as Corpus
    from wiki_assets.engine.documents.corpus import SourceDocument as SourceDocument
    from wiki_assets.engine.documents.corpus import collection_version as collection_version
    from wiki_assets.engine.documents.corpus import scan as scan
    from wiki_assets.engine.errors import CollectionBusy as CollectionBusy
    from wiki_assets.engine.errors import ConfigurationError as ConfigurationError
    from wiki_assets.engine.errors import DocumentError as DocumentError
    from wiki_assets.engine.errors import DraftError as DraftError
    from wiki_assets.engine.errors import EmbeddedModelUnavailable as EmbeddedModelUnavailable
    from wiki_assets.engine.errors import ModelError as ModelError
    from wiki_assets.engine.errors import StateError as StateError
    from wiki_assets.engine.errors import StateUnavailable as StateUnavailable
    from wiki_assets.engine.errors import UnsafePath as UnsafePath
    from wiki_assets.engine.errors import WikiAssetsError as WikiAssetsError
    from wiki_assets.engine.ingestion.fleet import Fleet as Fleet
    from wiki_assets.engine.ingestion.model_stats import ModelStats as ModelStats
    from wiki_assets.engine.ingestion.report import IngestReport as IngestReport
    from wiki_assets.engine.ingestion.run import ingest as ingest
    from wiki_assets.engine.ingestion.survey import CollectionState as CollectionState
    from wiki_assets.engine.ingestion.survey import survey as survey
    from wiki_assets.engine.state.store import StateStore as StateStore

_HOME = {
    "Dials": "wiki_assets.engine.config",
    "Endpoint": "wiki_assets.engine.config",
    "ROOT_COLLECTION": "wiki_assets.engine.documents.corpus",
    "Corpus": "wiki_assets.engine.documents.corpus",
    "SourceDocument": "wiki_assets.engine.documents.corpus",
    "collection_version": "wiki_assets.engine.documents.corpus",
    "scan": "wiki_assets.engine.documents.corpus",
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
    "Fleet": "wiki_assets.engine.ingestion.fleet",
    "IngestReport": "wiki_assets.engine.ingestion.report",
    "ModelStats": "wiki_assets.engine.ingestion.model_stats",
    "ingest": "wiki_assets.engine.ingestion.run",
    "CollectionState": "wiki_assets.engine.ingestion.survey",
    "survey": "wiki_assets.engine.ingestion.survey",
    "StateStore": "wiki_assets.engine.state.store",
}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
