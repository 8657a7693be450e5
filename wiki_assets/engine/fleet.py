"""Model endpoints, the run's dials, and the client that turns one document into one summary."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
import openai
from pydantic import BaseModel

from wiki_assets.engine.budget import estimate_tokens, split_to_budget
from wiki_assets.engine.errors import ConfigurationError
from wiki_assets.engine.errors import ErrorKind as ErrorKind
from wiki_assets.engine.errors import ModelError as ModelError
from wiki_assets.engine.page import DraftError, PageDraft, draft_schema, parse_draft
from wiki_assets.engine.prompts import (
    CHUNK_SYSTEM,
    CHUNK_USER,
    LIBRARIAN_SYSTEM,
    NO_CANDIDATES,
    PAGE_USER,
    PARTS_NOTE,
    REPAIR_USER,
)
from wiki_assets.engine.related import Candidate

AUTO: Literal["auto"] = "auto"
Workers = int | Literal["auto"]


def parse_workers(value: object) -> Workers:
    """An integer of at least 1, or 'auto' (config files may give either as a string)."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"must be an integer of at least 1 or 'auto', got {value!r}")
    return value


# Room for the system prompt, the user template and the chat template's own tokens.
PROMPT_OVERHEAD_TOKENS = 160


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One OpenAI-compatible model. ``None`` overrides fall back to the run's dials."""

    name: str
    base_url: str
    model: str
    api_key_env: str | None = None
    workers: Workers | None = None
    max_tokens: int | None = None
    timeout_s: float = 120.0
    context_tokens: int = 8192
    max_retries: int = 2
    # Requests in flight to this model across every run sharing the state store (None: no shared
    # limit, each run only bounds its own workers).
    max_in_flight: int | None = None

    @property
    def identity(self) -> str:
        """The physical model, the same in every run's config: what a fleet-wide limit counts."""
        return f"{self.base_url.rstrip('/')} {self.model}"

    def api_key(self) -> str:
        # Local servers accept any key; the openai client insists on a non-empty one.
        if self.api_key_env is None:
            return "not-needed"
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigurationError(
                f"model {self.name!r}: environment variable {self.api_key_env} is not set"
            )
        return key


@dataclass(frozen=True, slots=True)
class Dials:
    """What a tuning run changes; defaults match the Dagster run config's."""

    workers_per_model: Workers = 4
    claim_size: int = 32
    flush_seconds: float = 30.0
    max_tokens: int = 200
    force: bool = False
    max_workers: int = 64  # ceiling for automatic concurrency
    give_up_after_s: float = 60.0  # every model down this long: stop, leave the rest for later
    language: str = "auto"  # of the pages: "auto" (the document's own), or e.g. "en", "ko"
    # Model ids (as pages record them) whose pages are redone; a model leaving the fleet does not.
    redo_models: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        parse_workers(self.workers_per_model)
        for name in ("claim_size", "max_tokens", "max_workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.flush_seconds <= 0:
            raise ValueError(f"flush_seconds must be positive, got {self.flush_seconds}")


@dataclass(frozen=True, slots=True)
class Summary:
    draft: PageDraft
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    parts: int  # 1, or how many chunks a long document was summarized in
    requests: int


_CONTEXT_OVERFLOW = re.compile(r"context length|context window|too many tokens", re.IGNORECASE)
_FORMAT_REFUSED = re.compile(r"response_format|json_schema|json_object|Input should be", re.I)

# How to ask for structured output, best first. Servers differ: vLLM takes a JSON schema;
# llama-cpp-python's server refuses that form (HTTP 500) but constrains "json_object" with a
# schema; anything else gets the schema described in the prompt and a parser.
OUTPUT_MODES = ("json_schema", "json_object", "text")


@dataclass
class _AnswerUsage(BaseModel):
    prompt_tokens: int | None = None  # some servers send nulls here
    completion_tokens: int | None = None


class _AnswerMessage(BaseModel):
    content: str | None = None


class _AnswerChoice(BaseModel):
    message: _AnswerMessage
    finish_reason: str | None = None


class _Answer(BaseModel):
    """The parts of a chat completion the engine reads, validated (extra fields ignored)."""

    choices: list[_AnswerChoice]
    usage: _AnswerUsage | None = None


class _Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0


class ModelClient:
    """One endpoint's async client. Create it inside the event loop that uses it."""

    def __init__(
        self,
        endpoint: Endpoint,
        max_tokens: int,
        on_overload: Callable[[], None] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.max_tokens = endpoint.max_tokens or max_tokens
        self.output_mode = OUTPUT_MODES[0]  # downgraded, once per client, when a server refuses
        hooks: dict[str, list[Callable[..., Any]]] = {}
        if on_overload is not None:
            # openai retries 429/5xx itself and reports only the last failure; the hook sees
            # every answer, so the concurrency controller can back off at the first push-back.
            async def watch(response: Any) -> None:  # an httpx(-compatible) Response
                if response.status_code == 429 or response.status_code >= 500:
                    on_overload()

            hooks = {"response": [watch]}
        # openai's client owns HTTP retries (with backoff, honouring Retry-After) and timeouts.
        # Its aiohttp transport (the ``openai[aiohttp]`` extra, documented "for improved
        # concurrency performance") replaces httpx's connection pool, which checks every pooled
        # connection with a system call on each request: with dozens of requests in flight that
        # was the single largest cost of a request against a fast server.
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key(),
            timeout=endpoint.timeout_s,
            max_retries=endpoint.max_retries,
            http_client=openai.DefaultAioHttpClient(event_hooks=hooks),
        )

    async def close(self) -> None:
        await self._client.close()

    def _input_budget(self, reserved: str = "") -> int:
        return (
            self.endpoint.context_tokens
            - self.max_tokens
            - PROMPT_OVERHEAD_TOKENS
            - estimate_tokens(reserved)
        )

    async def summarize(
        self,
        path: str,
        title: str,
        text: str,
        candidates: Sequence[Candidate] = (),
        language: str = "English",
    ) -> Summary:
        """One page for one document. A document longer than the context is summarized over its
        whole length: each part is turned into notes, and the page is written from the notes."""
        listing = _candidate_list(candidates)
        usage = _Usage()
        body, parts = text, 1
        budget = self._input_budget(listing)
        if budget < 64:
            raise self._error(
                f"context of {self.endpoint.context_tokens} tokens leaves no room for input "
                f"after max_tokens={self.max_tokens}",
                "rejected",
            )
        # The estimate is pessimistic; a server that still reports an overflow gets parts half
        # as long.
        for _ in range(3):
            try:
                if estimate_tokens(body) > budget:
                    body, parts = await self._notes(path, text, budget, language, usage)
                draft, finish = await self._page(
                    path, title, body, parts, listing, language, candidates, usage
                )
                break
            except _Overflow:
                budget //= 2
                body, parts = text, 1
        else:
            raise self._error("prompt too long for the model's context", "rejected")
        allowed = {candidate.path for candidate in candidates} - {path}
        return Summary(
            draft=draft.keep_links_to(allowed),
            model=self.endpoint.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            finish_reason=finish,
            parts=parts,
            requests=usage.requests,
        )

    async def _notes(
        self, path: str, text: str, budget: int, language: str, usage: _Usage
    ) -> tuple[str, int]:
        """Map: notes on each part; repeated on the notes themselves if they are still too long."""
        chunks = split_to_budget(text, budget)
        notes = []
        for index, chunk in enumerate(chunks, start=1):
            messages = [
                {"role": "system", "content": CHUNK_SYSTEM.format(language=language)},
                {
                    "role": "user",
                    "content": CHUNK_USER.format(
                        path=path, part=index, parts=len(chunks), text=chunk
                    ),
                },
            ]
            content, _ = await self._request(messages, None, usage)
            notes.append(f"Part {index}: {content}")
        joined = "\n\n".join(notes)
        if estimate_tokens(joined) > budget and len(chunks) > 1:
            deeper, _ = await self._notes(path, joined, budget, language, usage)
            return deeper, len(chunks)
        return joined, len(chunks)

    async def _page(
        self,
        path: str,
        title: str,
        body: str,
        parts: int,
        listing: str,
        language: str,
        candidates: Sequence[Candidate],
        usage: _Usage,
    ) -> tuple[PageDraft, str]:
        prompt = PAGE_USER.format(
            language=language,
            path=path,
            title=title,
            parts_note=PARTS_NOTE.format(parts=parts) if parts > 1 else "",
            text=body,
            candidates=listing,
        )
        messages: list[dict[str, str]] = [
            {"role": "system", "content": LIBRARIAN_SYSTEM},
            {"role": "user", "content": prompt},
        ]
        schema = draft_schema(sorted({c.path for c in candidates} - {path}))
        content, finish = await self._structured(messages, schema, usage)
        try:
            return parse_draft(content, truncated=finish == "length"), finish
        except DraftError as problem:
            # One repair attempt, in the same conversation, then the document fails.
            messages += [
                {"role": "assistant", "content": content},
                {"role": "user", "content": REPAIR_USER.format(problem=problem)},
            ]
            content, finish = await self._structured(messages, schema, usage)
            try:
                return parse_draft(content, truncated=finish == "length"), finish
            except DraftError as again:
                raise self._error(
                    f"unparsable page after one repair ({again})", "garbage"
                ) from None

    async def _structured(
        self, messages: list[dict[str, str]], schema: dict[str, Any], usage: _Usage
    ) -> tuple[str, str]:
        while True:
            mode = self.output_mode
            try:
                return await self._request(messages, _response_format(mode, schema), usage)
            except _FormatRefused:
                self.output_mode = OUTPUT_MODES[OUTPUT_MODES.index(mode) + 1]

    async def _request(
        self, messages: list[dict[str, str]], response_format: Any, usage: _Usage
    ) -> tuple[str, str]:
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": 0.2,
        }
        if response_format is not None:
            body["response_format"] = response_format
        try:
            # The client's generic POST, not ``chat.completions.create``: that method walks every
            # request through its type-driven parameter transform and builds the whole typed
            # ChatCompletion from the answer (together about as much CPU as the HTTP exchange
            # against a fast server). The body here is plain strings and numbers, and the engine
            # reads four fields of the answer, which _Answer validates. Retries, timeouts,
            # headers, hooks and errors are the same: both go through the client's one request
            # path, and ``cast_to=object`` hands back the decoded JSON.
            data = await self._client.post("/chat/completions", cast_to=object, body=body)
            response = _Answer.model_validate(data)
        except openai.APIStatusError as error:
            text = str(error.body or "") + error.message
            if response_format is not None and error.status_code in (400, 422, 500):
                if _FORMAT_REFUSED.search(text) and response_format.get("type") != "text":
                    raise _FormatRefused from error
            if error.status_code == 400 and _CONTEXT_OVERFLOW.search(text):
                raise _Overflow from error
            raise self._error(
                _reason(error), _kind(error), error.status_code, error.request_id
            ) from error
        except openai.APIError as error:
            raise self._error(_reason(error), _kind(error)) from error
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            # openai parses the body itself: a non-JSON or malformed answer surfaces here.
            raise self._error(f"unparsable answer ({type(error).__name__})", "garbage") from error
        usage.requests += 1
        if response.usage:
            usage.prompt_tokens += response.usage.prompt_tokens or 0
            usage.completion_tokens += response.usage.completion_tokens or 0
        if not response.choices:
            raise self._error("answer without choices", "garbage")
        choice = response.choices[0]
        content = (choice.message.content or "").strip()
        if not content:
            raise self._error("empty answer", "garbage")
        return content, choice.finish_reason or "stop"

    def _error(
        self,
        reason: str,
        kind: ErrorKind,
        status_code: int | None = None,
        request_id: str | None = None,
    ) -> ModelError:
        return ModelError(
            f"model {self.endpoint.name}: {reason}",
            kind,
            status_code=status_code,
            request_id=request_id,
        )


class _FormatRefused(Exception):
    pass


class _Overflow(Exception):
    pass


def _response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "page", "schema": schema}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def _candidate_list(candidates: Sequence[Candidate]) -> str:
    if not candidates:
        return NO_CANDIDATES
    return "\n".join(f"- {c.path}: {c.title} — {c.line}" for c in candidates)


def _timed_out(error: openai.APIError) -> bool:
    """Whether the request ran out of time. The aiohttp transport reports every lost connection
    (a server that dropped it, a refused connect) as a connect *timeout*; its own exception, at
    the bottom of the chain, tells a real timeout from a connection that is gone."""
    if not isinstance(error, openai.APITimeoutError):
        return False
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, aiohttp.ClientError):
            return isinstance(cause, aiohttp.ServerTimeoutError)
        cause = cause.__cause__ or cause.__context__
    return True


def _kind(error: openai.APIError) -> ErrorKind:
    if _timed_out(error):
        return "timeout"
    if isinstance(error, openai.APIStatusError) and error.status_code in (400, 413, 422):
        return "rejected"
    # Connection errors, 429 and 5xx after the client's retries, and 401/403/404 (a wrong key,
    # URL or model id) are the model's problem, not the document's.
    return "unavailable"


def _reason(error: openai.APIError) -> str:
    if _timed_out(error):
        return "timed out"
    if isinstance(error, openai.APIConnectionError):
        return "connection failed"
    if isinstance(error, openai.APIStatusError):
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        return f"HTTP {error.status_code}: {message}"
    return type(error).__name__
