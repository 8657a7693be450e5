"""Model endpoints, the run's dials, and the client that turns one document into one summary."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import openai

from wiki_assets.engine.budget import cut_to_budget, estimate_tokens
from wiki_assets.engine.prompts import LIBRARIAN_SYSTEM, LIBRARIAN_USER, TRUNCATION_NOTE

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

    def api_key(self) -> str:
        # Local servers accept any key; the openai client insists on a non-empty one.
        if self.api_key_env is None:
            return "not-needed"
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ValueError(
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

    def __post_init__(self) -> None:
        parse_workers(self.workers_per_model)
        for name in ("claim_size", "max_tokens", "max_workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.flush_seconds <= 0:
            raise ValueError(f"flush_seconds must be positive, got {self.flush_seconds}")


@dataclass(frozen=True, slots=True)
class Summary:
    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    input_cut: bool


ErrorKind = Literal["rejected", "timeout", "unavailable", "garbage"]


class ModelError(Exception):
    """A request that failed after the client's own retries; the message is the recorded reason.

    ``kind`` decides what happens next: ``rejected`` is about this document (it fails),
    ``timeout`` and ``garbage`` send it back to the queue a bounded number of times, and
    ``unavailable`` is about the model (it counts towards the circuit breaker).
    """

    def __init__(self, message: str, kind: ErrorKind) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


_CONTEXT_OVERFLOW = re.compile(r"context length|context window|too many tokens", re.IGNORECASE)


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
        hooks: dict[str, list[Callable[..., Any]]] = {}
        if on_overload is not None:
            # openai retries 429/5xx itself and reports only the last failure; the hook sees
            # every answer, so the concurrency controller can back off at the first push-back.
            async def watch(response: Any) -> None:  # an httpx(-compatible) Response
                if response.status_code == 429 or response.status_code >= 500:
                    on_overload()

            hooks = {"response": [watch]}
        # openai's client owns HTTP retries (with backoff, honouring Retry-After) and timeouts.
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key(),
            timeout=endpoint.timeout_s,
            max_retries=endpoint.max_retries,
            http_client=openai.DefaultAsyncHttpxClient(event_hooks=hooks),
        )

    async def close(self) -> None:
        await self._client.close()

    def _input_budget(self) -> int:
        return self.endpoint.context_tokens - self.max_tokens - PROMPT_OVERHEAD_TOKENS

    async def summarize(self, path: str, title: str, text: str) -> Summary:
        budget = self._input_budget()
        if budget < 64:
            raise ModelError(
                f"model {self.endpoint.name}: context of {self.endpoint.context_tokens} tokens "
                f"leaves no room for input after max_tokens={self.max_tokens}",
                "rejected",
            )
        # The estimate is deliberately pessimistic; if a server still says the prompt is too long,
        # shrink once more rather than fail the document.
        for attempt in range(2):
            body, cut = cut_to_budget(text, budget)
            if cut:
                body += TRUNCATION_NOTE
            try:
                return await self._complete(path, title, body, cut)
            except openai.BadRequestError as error:
                if attempt == 0 and _CONTEXT_OVERFLOW.search(str(error)):
                    budget = min(budget, estimate_tokens(body)) // 2
                    continue
                raise self._error(f"rejected ({_reason(error)})", "rejected") from error
            except openai.APIError as error:
                raise self._error(_reason(error), _kind(error)) from error
            except (ValueError, TypeError, AttributeError, KeyError) as error:
                # openai parses the body itself: a non-JSON or malformed answer surfaces here.
                raise self._error(
                    f"unparsable answer ({type(error).__name__})", "garbage"
                ) from error
        raise AssertionError("unreachable")

    def _error(self, reason: str, kind: ErrorKind) -> ModelError:
        return ModelError(f"model {self.endpoint.name}: {reason}", kind)

    async def _complete(self, path: str, title: str, body: str, cut: bool) -> Summary:
        response = await self._client.chat.completions.create(
            model=self.endpoint.model,
            messages=[
                {"role": "system", "content": LIBRARIAN_SYSTEM},
                {
                    "role": "user",
                    "content": LIBRARIAN_USER.format(path=path, title=title, text=body),
                },
            ],
            max_tokens=self.max_tokens,
            temperature=0.2,
        )
        if not response.choices:
            raise self._error("answer without choices", "garbage")
        choice = response.choices[0]
        content = (choice.message.content or "").strip()
        if not content:
            raise self._error("empty answer", "garbage")
        usage = response.usage
        return Summary(
            text=content,
            model=self.endpoint.model,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            finish_reason=choice.finish_reason or "stop",
            input_cut=cut,
        )


def _kind(error: openai.APIError) -> ErrorKind:
    if isinstance(error, openai.APITimeoutError):
        return "timeout"
    if isinstance(error, openai.APIStatusError) and error.status_code in (400, 413, 422):
        return "rejected"
    # Connection errors, 429 and 5xx after the client's retries, and 401/403/404 (a wrong key,
    # URL or model id) are the model's problem, not the document's.
    return "unavailable"


def _reason(error: openai.APIError) -> str:
    if isinstance(error, openai.APITimeoutError):
        return "timed out"
    if isinstance(error, openai.APIConnectionError):
        return "connection failed"
    if isinstance(error, openai.APIStatusError):
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        return f"HTTP {error.status_code}: {message}"
    return type(error).__name__
