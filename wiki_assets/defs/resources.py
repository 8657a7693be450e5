"""Resources: where the documents and the wiki live (:class:`CorpusResource`), and the fleet of
models that summarizes (:class:`SummarizerResource`).

Their config classes, and the dials' (:class:`~wiki_assets.defs.wiki_pages.config.IngestConfig`),
take their fields from the engine's (:func:`fields_from`): one definition of each dial and each
endpoint setting (``wiki_assets.engine.config``), shown by the launchpad with its description and
default and validated by the engine's own rules.
"""

import contextlib
import copy
import types
import typing
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import dagster as dg
from pydantic import Field, create_model, model_validator
from pydantic.fields import FieldInfo

from wiki_assets.engine import Corpus, Endpoint, Fleet, environment
from wiki_assets.engine.config import EmbeddingsEndpoint, VariableName
from wiki_assets.engine.documents.corpus import DEFAULT_MAX_BYTES, DEFAULT_MAX_FILE_BYTES
from wiki_assets.engine.errors import DiskFull, EmbeddedModelUnavailable, no_space_message
from wiki_assets.engine.ingestion.progress import Log
from wiki_assets.engine.llm.embedded_embeddings import (
    embedded_embeddings_available,
    embedded_embeddings_endpoint,
    embedded_embeddings_server,
)
from wiki_assets.engine.llm.leftovers import ServerRecords
from wiki_assets.engine.llm.local_server import embedded_endpoint, embedded_server
from wiki_assets.engine.state.store import DEFAULT_SCHEMA, StateStore
from wiki_assets.engine.wiki.files import STATE_DIR

NGRAMS_ONLY = (
    "by n-grams only (names, codes, ids), not by meaning: a document's partner in another "
    "language is rarely found. For links by meaning, install the 'local' extra (the embedded "
    "multilingual-e5-small) or set resources.summarizer.config.embeddings."
)


class CorpusResource(dg.ConfigurableResource):
    """The synced root that documents are mirrored into, and the wiki root pages are written to."""

    synced_root: str = Field(
        default_factory=environment.synced_root,
        description="Folder the sources are mirrored into (env WIKI_ASSETS_SYNCED_ROOT).",
    )
    wiki_root: str = Field(
        default_factory=environment.wiki_root,
        description="Folder the wiki is written to; nothing is ever written outside it "
        "(env WIKI_ASSETS_WIKI_ROOT).",
    )
    collection_depth: int = Field(
        default=1, ge=1, description="Folder levels under the synced root that name a collection."
    )
    max_bytes: int = Field(
        default=DEFAULT_MAX_BYTES,
        ge=1,
        description="The most text a document may hold, in bytes: a text file's own, or the "
        "text extracted from a PDF, deck or workbook. A longer one fails with a reason.",
    )
    max_file_bytes: int = Field(
        default=DEFAULT_MAX_FILE_BYTES,
        ge=1,
        description="The largest file read at all, in bytes (a deck of images may hold little "
        "text). A larger one fails with a reason.",
    )
    sync_command: str | None = Field(
        default_factory=environment.sync_command,
        description="Command that mirrors the sources into the synced root before it is "
        "observed, e.g. 'rclone sync confluence: synced/confluence' or 'git -C synced pull' "
        "(env WIKI_ASSETS_SYNC_COMMAND). Its output is logged; a failure stops the ingest. "
        "Without it, sync only observes.",
    )
    sync_timeout_s: float = Field(default=3600.0, gt=0, description="Limit for sync_command.")
    state_url_env: VariableName = Field(
        default=environment.STATE_URL,
        description="Name of the environment variable holding a postgresql:// URL for the "
        "per-document state that parallel runs and machines share (the Dagster instance's own "
        "database fits). Unset or empty variable: SQLite in the wiki's state folder.",
    )
    state_schema: str = Field(
        default=DEFAULT_SCHEMA,
        description="PostgreSQL schema for that state: one per wiki sharing a database.",
    )

    def state_store(self) -> StateStore:
        url = environment.state_url(self.state_url_env)
        return StateStore(self.wiki_path / STATE_DIR, url, self.state_schema)

    @property
    def synced_path(self) -> Path:
        return Path(self.synced_root)

    def corpus(self, collections: Collection[str]) -> Corpus:
        """What a run of ``collections`` reads, as configured here."""
        return Corpus(
            self.synced_path,
            list(collections),
            self.collection_depth,
            self.max_bytes,
            self.max_file_bytes,
        )

    @property
    def wiki_path(self) -> Path:
        return Path(self.wiki_root)

    @contextmanager
    def naming_a_full_disk(self) -> Iterator[None]:
        """A full disk, however deep its error is (a task group's, under a failed rollback),
        fails the step as ``no space left on device: <the wiki's folder>``
        (:func:`~wiki_assets.engine.errors.no_space_message`); other errors go as they are."""
        try:
            yield
        except Exception as error:
            message = no_space_message(error, self.wiki_path)
            if message is None:
                raise
            raise DiskFull(message) from error


# Config classes whose fields are the engine's

ConfigClass = TypeVar("ConfigClass", bound=dg.Config)


def _dagster_type(annotation: Any) -> Any:
    """The annotation as Dagster's config can express it. A tuple becomes a list, and a union of
    several types (``int | Literal['auto']``) becomes Any: the field's validators, which are the
    engine's and kept, still decide what is valid."""
    origin = typing.get_origin(annotation)
    if origin is tuple:
        return list[typing.get_args(annotation)[0]]  # type: ignore[misc]
    if origin in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(members) > 1:
            return Any
    return annotation


def _dagster_field(info: FieldInfo) -> tuple[Any, FieldInfo]:
    annotation = _dagster_type(info.annotation)
    field = copy.copy(info)
    field.annotation = annotation
    if isinstance(field.default, tuple):
        field.default = list(field.default)
    return annotation, field


def fields_from(
    engine_class: type, exclude: Collection[str] = ()
) -> Callable[[type[ConfigClass]], type[ConfigClass]]:
    """A class decorator: the ``dg.Config`` class it decorates (its docstring and methods) gets
    every field of the engine's pydantic dataclass ``engine_class`` but those in ``exclude``, in
    their order, with their defaults, descriptions and validators."""
    engine_fields: dict[str, FieldInfo] = engine_class.__pydantic_fields__  # type: ignore[attr-defined]
    unknown = set(exclude) - set(engine_fields)
    if unknown:
        raise TypeError(f"{engine_class.__name__} has no field(s) {', '.join(sorted(unknown))}")

    def derive(cls: type[ConfigClass]) -> type[ConfigClass]:
        fields = {
            name: _dagster_field(info)
            for name, info in engine_fields.items()
            if name not in exclude
        }
        return create_model(  # type: ignore[call-overload]
            cls.__name__,
            __base__=cls,
            __module__=cls.__module__,
            __doc__=cls.__doc__,
            **fields,
        )

    return derive


def with_defaults(values: ConfigClass) -> type[ConfigClass]:
    """``values``' config class whose defaults are ``values`` (the project file's): what the
    launchpad pre-fills and what a UI materialization runs with when nothing is changed."""
    cls = type(values)
    fields: dict[str, Any] = {}
    for name, info in cls.model_fields.items():
        value = getattr(values, name)
        if value == info.default:
            continue
        overridden = copy.copy(info)
        overridden.default = value
        fields[name] = (info.annotation, overridden)
    if not fields:
        return cls
    return create_model(cls.__name__, __base__=cls, **fields)


# max_retries is the engine's (the embedded model and tests set it), not an endpoint config key.
@fields_from(Endpoint, exclude={"max_retries"})
class ModelConfig(dg.Config):
    """One OpenAI-compatible endpoint (vLLM, llama.cpp, a gateway)."""

    def to_endpoint(self) -> Endpoint:
        return Endpoint(**self.model_dump())


# max_retries is the engine's (the embedded model sets it), not a config key.
@fields_from(EmbeddingsEndpoint, exclude={"max_retries"})
class EmbeddingsConfig(dg.Config):
    """An OpenAI-compatible /v1/embeddings endpoint (vLLM, TEI, llama.cpp, a gateway)."""

    def to_endpoint(self) -> EmbeddingsEndpoint:
        return EmbeddingsEndpoint(**self.model_dump())


class SummarizerResource(dg.ConfigurableResource):
    """The fleet of models, and the embeddings model that finds link candidates by meaning. With
    no models configured, the embedded SmolLM2 model is started on a loopback port for the run,
    and beside it the embedded multilingual-e5-small (both need the 'local' extra)."""

    models: list[ModelConfig] = Field(
        default_factory=list,
        description="Endpoints that share the queue; empty means the embedded local model.",
    )
    embedded_threads: int | None = Field(
        default=None, ge=1, description="CPU threads of the embedded model's server."
    )
    embeddings: EmbeddingsConfig | None = Field(
        default=None,
        description="An embeddings endpoint: link candidates are then found by meaning, in any "
        "language, as well as by the n-gram index (names, codes, ids). Unset: see "
        "embedded_embeddings.",
    )
    embedded_embeddings: bool = Field(
        default=True,
        description="Start the embedded multilingual-e5-small (the 'local' extra) on a loopback "
        "port for the run's link candidates when no embeddings endpoint is set, whatever the "
        "fleet: it finds a document's partner in another language. False: n-grams alone.",
    )

    @model_validator(mode="after")
    def _unique_names(self) -> "SummarizerResource":
        names = [model.to_endpoint().name for model in self.models]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"models: duplicate name(s) {', '.join(duplicates)}")
        return self

    def planned_endpoints(self) -> list[Endpoint]:
        """The endpoints a run would use, without starting anything (for planning)."""
        if self.models:
            return [model.to_endpoint() for model in self.models]
        return [embedded_endpoint()]

    def planned_embeddings(self) -> EmbeddingsEndpoint | None:
        """The embeddings endpoint a run would use, without starting anything (for planning)."""
        if self.embeddings is not None:
            return self.embeddings.to_endpoint()
        if self.embedded_embeddings and embedded_embeddings_available():
            return embedded_embeddings_endpoint()
        return None

    @contextmanager
    def live(self, log: Log, state_dir: Path | None = None) -> Iterator[Fleet]:
        """The live fleet for one run: the chat endpoints and the embeddings endpoint, starting
        (and afterwards stopping) the embedded servers that are wanted. The embedded chat model
        failing to start fails the run; the embedded embeddings model failing to start is one
        warning. Without an embeddings model the run's link candidates come from the n-grams
        alone, which one line says. With the wiki's ``state_dir``, the servers are recorded there
        while they run, and servers a killed run left are stopped first, a warning each."""
        records = ServerRecords(state_dir) if state_dir is not None else None
        if records is not None:
            for line in records.stop_leftovers():
                log.warning(line)
        threads = self.embedded_threads
        with contextlib.ExitStack() as stack:
            endpoints = self.planned_endpoints()
            embeddings: EmbeddingsEndpoint | None = None
            servers: dict[str, Callable[[], str | None]] = {}
            if not self.models:
                local = stack.enter_context(embedded_server(threads=threads, records=records))
                endpoints = [local.endpoint]
                servers[local.endpoint.name] = local.server.exit_notice
            if self.embeddings is not None:
                embeddings = self.embeddings.to_endpoint()
            elif self.embedded_embeddings and embedded_embeddings_available():
                try:
                    server = embedded_embeddings_server(threads=threads, records=records)
                    e5 = stack.enter_context(server)
                except EmbeddedModelUnavailable as error:
                    log.warning(f"{error} Link candidates by n-grams alone in this run.")
                else:
                    embeddings = e5.endpoint
                    servers[e5.endpoint.name] = e5.server.exit_notice
            if embeddings is None:
                log.info(f"links: {NGRAMS_ONLY}")
            yield Fleet(endpoints, embeddings, servers)
