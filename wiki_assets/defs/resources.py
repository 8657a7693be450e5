"""Resources: where the documents and the wiki live, and the fleet of models that summarizes."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field, field_validator, model_validator

from wiki_assets.engine import Endpoint
from wiki_assets.engine.corpus import DEFAULT_MAX_BYTES
from wiki_assets.engine.fleet import parse_workers
from wiki_assets.engine.local_model import embedded_endpoint, embedded_server
from wiki_assets.engine.store import DEFAULT_SCHEMA, StateStore
from wiki_assets.engine.wiki.files import STATE_DIR


class CorpusResource(dg.ConfigurableResource):
    """The synced root that documents are mirrored into, and the wiki root pages are written to."""

    synced_root: str = Field(
        default_factory=lambda: os.environ.get("WIKI_ASSETS_SYNCED_ROOT", "synced"),
        description="Folder the sources are mirrored into (env WIKI_ASSETS_SYNCED_ROOT).",
    )
    wiki_root: str = Field(
        default_factory=lambda: os.environ.get("WIKI_ASSETS_WIKI_ROOT", "wiki"),
        description="Folder the wiki is written to; nothing is ever written outside it "
        "(env WIKI_ASSETS_WIKI_ROOT).",
    )
    collection_depth: int = Field(
        default=1, ge=1, description="Folder levels under the synced root that name a collection."
    )
    max_bytes: int = Field(
        default=DEFAULT_MAX_BYTES, ge=1, description="Larger files fail with a reason."
    )
    sync_command: str | None = Field(
        default_factory=lambda: os.environ.get("WIKI_ASSETS_SYNC_COMMAND") or None,
        description="Command that mirrors the sources into the synced root before it is "
        "observed, e.g. 'rclone sync confluence: synced/confluence' or 'git -C synced pull' "
        "(env WIKI_ASSETS_SYNC_COMMAND). Its output is logged; a failure stops the ingest. "
        "Without it, sync only observes.",
    )
    sync_timeout_s: float = Field(default=3600.0, gt=0, description="Limit for sync_command.")
    state_url_env: str = Field(
        default="WIKI_ASSETS_STATE_URL",
        description="Name of the environment variable holding a postgresql:// URL for the "
        "per-document state that parallel runs and machines share (the Dagster instance's own "
        "database fits). Unset or empty variable: SQLite in the wiki's state folder.",
    )
    state_schema: str = Field(
        default=DEFAULT_SCHEMA,
        description="PostgreSQL schema for that state: one per wiki sharing a database.",
    )

    @field_validator("state_url_env")
    @classmethod
    def _state_env_name(cls, value: str) -> str:
        if not value.replace("_", "").isalnum():
            raise ValueError("must be the name of an environment variable, not a URL")
        return value

    def state_store(self) -> StateStore:
        url = os.environ.get(self.state_url_env) or None
        return StateStore(self.wiki_path / STATE_DIR, url, self.state_schema)

    @property
    def synced_path(self) -> Path:
        return Path(self.synced_root)

    @property
    def wiki_path(self) -> Path:
        return Path(self.wiki_root)


class ModelConfig(dg.Config):
    """One OpenAI-compatible endpoint (vLLM, llama.cpp, a gateway)."""

    name: str = Field(description="Short name used in logs and metadata, e.g. 'vllm-qwen'.")
    base_url: str = Field(description="OpenAI-compatible base URL, e.g. http://gpu1:8000/v1.")
    model: str = Field(description="Model id the endpoint serves.")
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key (never the key itself).",
    )
    workers: Any = Field(
        default=None, description="Overrides workers_per_model: an integer or 'auto'."
    )
    max_tokens: int | None = Field(default=None, ge=16, description="Overrides max_tokens.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per-request timeout in seconds.")
    context_tokens: int = Field(
        default=8192, ge=512, description="Context window; longer documents are cut to fit."
    )
    max_in_flight: int | None = Field(
        default=None,
        ge=1,
        description="Most requests in flight to this model across every run at once (parallel "
        "backfill runs share it through the state store); unset: each run bounds only itself.",
    )

    @field_validator("name", "model")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http(s) URL, got {value!r}")
        return value.rstrip("/")

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: Any) -> int | str | None:
        return None if value is None else parse_workers(value)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not value.replace("_", "").isalnum():
            raise ValueError("must be the name of an environment variable, not a key")
        return value

    def to_endpoint(self) -> Endpoint:
        return Endpoint(
            name=self.name,
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            workers=self.workers,
            max_tokens=self.max_tokens,
            timeout_s=self.timeout_s,
            context_tokens=self.context_tokens,
            max_in_flight=self.max_in_flight,
        )


class SummarizerResource(dg.ConfigurableResource):
    """The fleet of models. With no models configured, the embedded SmolLM2 model is started on a
    loopback port for the run (needs the 'local' extra)."""

    models: list[ModelConfig] = Field(
        default_factory=list,
        description="Endpoints that share the queue; empty means the embedded local model.",
    )
    embedded_threads: int | None = Field(
        default=None, ge=1, description="CPU threads of the embedded model's server."
    )

    @model_validator(mode="after")
    def _unique_names(self) -> "SummarizerResource":
        names = [model.name for model in self.models]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"models: duplicate name(s) {', '.join(duplicates)}")
        return self

    def planned_endpoints(self) -> list[Endpoint]:
        """The endpoints a run would use, without starting anything (for planning)."""
        if self.models:
            return [model.to_endpoint() for model in self.models]
        return [embedded_endpoint()]

    @contextmanager
    def endpoints(self) -> Iterator[list[Endpoint]]:
        """The live endpoints for one run; starts and stops the embedded model when needed."""
        if self.models:
            yield self.planned_endpoints()
            return
        with embedded_server(threads=self.embedded_threads) as endpoint:
            yield [endpoint]
