# The engine's public names, each listed once: type checkers read them here, and __init__.py
# imports each from the module named here when it is first used.

from wiki_assets.engine.config import Dials as Dials
from wiki_assets.engine.config import Endpoint as Endpoint
from wiki_assets.engine.documents.corpus import ROOT_COLLECTION as ROOT_COLLECTION
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
from wiki_assets.engine.ingestion.report import IngestReport as IngestReport
from wiki_assets.engine.ingestion.report import ModelStats as ModelStats
from wiki_assets.engine.ingestion.run import ingest as ingest
from wiki_assets.engine.ingestion.survey import CollectionState as CollectionState
from wiki_assets.engine.ingestion.survey import survey as survey
from wiki_assets.engine.state.store import StateStore as StateStore
