"""The run's dials and a model endpoint: the one typed, validated definition of each.

Both are pydantic dataclasses (frozen, so hashable and safe to share between workers): building
one checks every field, and a mistake names the field. Each field's description is what the
Dagster launchpad shows: the run config (``IngestConfig``) and the endpoint config of the
summarizer resource (``ModelConfig``) are derived from these fields, not declared again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field
from pydantic.dataclasses import dataclass

from wiki_assets.engine import environment
from wiki_assets.engine.errors import ConfigurationError

AUTO: Literal["auto"] = "auto"
Workers = int | Literal["auto"]
FlaggedPages = Literal["keep", "retry", "extract"]
PageShape = Literal["full", "compact"]


def parse_workers(value: object) -> Workers:
    """An integer of at least 1, or 'auto' (config files may give either as a string)."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"must be an integer of at least 1 or 'auto', got {value!r}")
    return value


def _optional_workers(value: object) -> Workers | None:
    return None if value is None else parse_workers(value)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"must be an http(s) URL, got {value!r}")
    return value.rstrip("/")


# The validators sit on the whole field (not inside a union), so that a config class built from
# these fields with a looser annotation (Dagster's config has no "int or 'auto'") keeps them.
_WorkersField = Annotated[Workers, BeforeValidator(parse_workers)]
_OptionalWorkersField = Annotated[Workers | None, BeforeValidator(_optional_workers)]
_NonBlank = Annotated[str, AfterValidator(_not_blank)]
_HttpUrl = Annotated[str, AfterValidator(_http_url)]
# A field that names an environment variable, never the secret it holds: the type of every such
# field (the endpoint's api_key_env, the corpus's state_url_env, the digest's webhook_url_env).
VariableName = Annotated[str, AfterValidator(environment.variable_name)]
OptionalVariableName = Annotated[str | None, AfterValidator(environment.variable_name)]

# Unknown fields are errors: a misspelt dial must never mean "ran with the default".
_STRICT = ConfigDict(extra="forbid")


def _api_key(owner: str, api_key_env: str | None) -> str:
    """The key in the environment variable ``api_key_env``, read now (never stored); ``owner``
    (e.g. "model 'vllm'") starts the message when it is not set, which names the variable only."""
    # Local servers accept any key; the openai client insists on a non-empty one.
    if api_key_env is None:
        return "not-needed"
    key = environment.api_key(api_key_env)
    if not key:
        raise ConfigurationError(f"{owner}: environment variable {api_key_env} is not set")
    return key


@dataclass(frozen=True, slots=True, config=_STRICT)
class Endpoint:
    """One OpenAI-compatible model. ``None`` overrides fall back to the run's dials."""

    name: _NonBlank = Field(description="Short name used in logs and metadata, e.g. 'vllm-qwen'.")
    base_url: _HttpUrl = Field(description="OpenAI-compatible base URL, e.g. http://gpu1:8000/v1.")
    model: _NonBlank = Field(description="Model id the endpoint serves.")
    api_key_env: OptionalVariableName = Field(
        default=None,
        description="Name of the environment variable holding the API key (never the key itself).",
    )
    workers: _OptionalWorkersField = Field(
        default=None, description="Overrides workers_per_model: an integer or 'auto'."
    )
    max_tokens: int | None = Field(default=None, ge=16, description="Overrides max_tokens.")
    timeout_s: float = Field(default=120.0, gt=0, description="Per-request timeout in seconds.")
    context_tokens: int = Field(
        default=8192,
        ge=512,
        description="Context window in tokens. A document too long for one request of the "
        "fleet's smallest context is read in parts, none left out: notes on each part (a request "
        "each, spread over the fleet), then the page from the notes.",
    )
    max_in_flight: int | None = Field(
        default=None,
        ge=1,
        description="Most requests in flight to this model across every run at once (parallel "
        "backfill runs share it through the state store); unset: each run bounds only itself.",
    )
    page_shape: PageShape = Field(
        default="full",
        description="What the model is asked for. 'full': the whole page (title, description, "
        "summary, key points with their quotes and lines, topics, related documents with "
        "reasons). 'compact', for a very small model: a one-line description, a two-sentence "
        "summary and topics, and the numbers of the document's key lines, which the engine "
        "quotes; related documents are the closest candidates of the related index.",
    )
    prose_languages: tuple[str, ...] = Field(
        default=(),
        description="With page_shape 'compact': the languages the model writes (names, e.g. "
        "['English']). A document in another language gets the key lines the model picks, "
        "quoted, on a page labelled as not summarized, instead of prose nobody can read. "
        "Empty: every language.",
    )
    max_retries: int = Field(
        default=2,
        ge=0,
        description="Retries of a request that got a 429, a 5xx or no answer, by the HTTP client "
        "itself, with backoff, before the request fails.",
    )

    def writes(self, language: str) -> bool:
        """Whether the model is asked to write prose in ``language`` (a name, e.g. 'Korean')."""
        if self.page_shape == "full" or not self.prose_languages:
            return True
        return language.strip().lower() in {known.lower() for known in self.prose_languages}

    @property
    def page_form(self) -> str:
        """What shapes this endpoint's pages besides the dials (part of a page's fingerprint)."""
        if self.page_shape == "full":
            return "full"
        return "compact:" + ",".join(sorted(language.lower() for language in self.prose_languages))

    @property
    def identity(self) -> str:
        """The physical model, the same in every run's config: what a fleet-wide limit counts."""
        return f"{self.base_url.rstrip('/')} {self.model}"

    def api_key(self) -> str:
        """The key from the environment variable ``api_key_env`` names, read now (never stored)."""
        return _api_key(f"model {self.name!r}", self.api_key_env)


@dataclass(frozen=True, slots=True, config=_STRICT)
class EmbeddingsEndpoint:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, TEI, llama.cpp's ``--embedding``
    server, a gateway, or the embedded multilingual-e5-small): the vectors that, with the
    character n-gram index, find a document's link candidates. Requests go through the same
    client as the chat models' (its retries, timeouts and key handling)."""

    base_url: _HttpUrl = Field(
        description="OpenAI-compatible base URL (the part before /embeddings), e.g. "
        "http://gpu1:8080/v1."
    )
    model: _NonBlank = Field(
        description="Model id the endpoint serves. Stored with every vector: vectors of "
        "another model are never compared with them."
    )
    name: _NonBlank = Field(
        default="embeddings", description="Short name used in logs and errors, e.g. 'tei-e5'."
    )
    api_key_env: OptionalVariableName = Field(
        default=None,
        description="Name of the environment variable holding the API key (never the key itself).",
    )
    input_prefix: str = Field(
        default="",
        description="Text put before every input, for a model trained with prefixes that the "
        "server does not add itself: 'query: ' for an e5 model on vLLM or TEI (documents are "
        "compared with each other, and the e5 authors advise 'query: ' on both sides of a "
        "symmetric comparison). Empty for the embedded model, whose server adds it.",
    )
    batch_size: int = Field(default=32, ge=1, description="Inputs per request.")
    timeout_s: float = Field(default=60.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(
        default=2,
        ge=0,
        description="Retries of a request that got a 429, a 5xx or no answer, by the HTTP client "
        "itself, with backoff, before the request fails. After a request that still fails, the "
        "run stops asking this endpoint and links from the n-gram index alone.",
    )

    def api_key(self) -> str:
        """The key from the environment variable ``api_key_env`` names, read now (never stored)."""
        return _api_key(f"embeddings endpoint {self.name!r}", self.api_key_env)


# Dials of the engine alone (simulations and tests shorten it): no run config key, no run figure.
ENGINE_DIALS = frozenset({"give_up_after_s"})


@dataclass(frozen=True, slots=True, config=_STRICT)
class Dials:
    """What a tuning run changes: hardware and models change, so these live in run config."""

    workers_per_model: _WorkersField = Field(
        default=4,
        description="Workers per model, each with one request in flight (an integer), or 'auto' "
        "to find each model's useful number from its latency as requests grow. A batching "
        "server (vLLM) gets faster with more until it saturates; past that, more only adds "
        "latency. A model's own 'workers' overrides it: the embedded model uses 1, as "
        "llama.cpp's server decodes one request at a time.",
    )
    max_workers: int = Field(default=64, ge=1, description="The most workers 'auto' gives a model.")
    claim_size: int = Field(
        default=32,
        ge=1,
        description="Documents a worker takes from the shared queue at once. Small claims mean "
        "more trips to the queue; large claims strand work with slow models at the end (tail "
        "stealing limits the damage).",
    )
    flush_seconds: float = Field(
        default=30.0,
        gt=0,
        description="How often finished pages are written and a progress line is logged (sooner "
        "once 2,000 results wait for their pages). Results are journaled the moment they return "
        "either way, so this trades visibility against write churn, not safety.",
    )
    max_tokens: int = Field(
        default=200,
        ge=16,
        description="Output cap per page answer. Pages are short; a loose cap lets models ramble "
        "and slows every request. A page cut by it is kept and flagged, its unfinished last "
        "sentence left out. Changing it marks pages "
        "for re-summary.",
    )
    force: bool = Field(
        default=False,
        description="Re-summarize every document of the selected partitions, changed or not "
        "(from the CLI: every collection).",
    )
    language: str = Field(
        default="auto",
        description="Language of the pages: 'auto' writes each page in its document's language "
        "(a Korean document gets a Korean page); or a language such as 'en' or 'ko' for all. "
        "Changing it marks pages for re-summary.",
    )
    redo_models: tuple[str, ...] = Field(
        default=(),
        description="Model ids (the 'model' a page records) whose pages are redone. A model that "
        "leaves the fleet keeps its pages current: redoing them is asked for here, or with force.",
    )
    give_up_after_s: float = Field(
        default=60.0,
        gt=0,
        description="Every model down this long: the run stops and leaves the rest for the next.",
    )
    # Not part of a page's fingerprint (currency.fingerprint): it decides what becomes of an answer
    # the checks flag, not how a model writes, so changing it redoes no page; pages flagged before
    # stay as they are, listed under Needs review, until their document changes or is forced.
    flagged_pages: FlaggedPages = Field(
        default="retry",
        description="What a page the checks flag becomes: 'keep' it (flagged, listed under Needs "
        "review); 'retry' it once on another model of the fleet and keep the better answer (the "
        "default: a second opinion before publishing a doubtful entry, the model's work never "
        "discarded); or 'extract' (the document's title, headings and opening sentences, "
        "labelled as not summarized). A second opinion costs a request, within "
        "second_opinion_share; changing this dial redoes no page.",
    )
    second_opinion_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="With flagged_pages 'retry': at most this share of the run's documents get "
        "a second opinion (a request each). Within it the run learns which second opinions "
        "help: it stops asking a model whose second opinions are not kept and retrying a reason "
        "no other model's answer fixed; one not known to help only uses idle workers and never "
        "holds up the end of the run.",
    )
    judge_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="In a fleet of two or more models: at most this share of the run's "
        "documents have the sentences of their description and summary that the rules leave "
        "unchecked judged by another model (one request per page, on idle workers only, never "
        "holding up the end of the run; the run learns which judges hold). 0 turns it off; "
        "changing it redoes no page.",
    )
    judge: str = Field(
        default="",
        description="The model (its name in the fleet, or its model id) that judges; '' lets "
        "any model judge pages it did not write.",
    )

    def check_fleet(self, endpoints: Sequence[Endpoint]) -> None:
        """A dial that names a model names one of ``endpoints`` (a misspelt judge would
        otherwise judge nothing, silently)."""
        names = [name for e in endpoints for name in (e.name, e.model)]
        if self.judge and self.judge not in names:
            fleet = ", ".join(e.name for e in endpoints)
            raise ConfigurationError(
                f"dial judge: {self.judge!r} is no model of the fleet ({fleet})"
            )
