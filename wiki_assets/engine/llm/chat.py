"""One chat completion request to an endpoint, over openai's client: structured output asked for
in the best form the server takes, the answer read and checked, and every failure turned into a
:class:`~wiki_assets.engine.errors.ModelError` that says what it means for the document and the
model. What to ask, and what a page or a part's notes are, is the model client's
(:mod:`~wiki_assets.engine.llm.client`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import pydantic_core

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.errors import ErrorKind, ModelError
from wiki_assets.engine.llm.response import (
    OUTPUT_MODES,
    Answer,
    error_kind,
    error_reason,
    overflows_context,
    refuses_format,
    response_format,
)

PLATFORM_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
)
"""The headers openai's client adds to every request to describe itself to OpenAI's API. Not
sent (:data:`_REQUEST_OPTIONS` omits them): no server this engine talks to reads them, and the
client copies and normalises every header of every request (without them, about 13 % less client
CPU per request against an instant server)."""

_REQUEST_OPTIONS: openai.RequestOptions = {
    "headers": {name: openai.Omit() for name in PLATFORM_HEADERS}
}


class Usage:
    """What one call of the model client took on the model, over all its requests."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0


class Chat:
    """One endpoint's chat completions (asking for at most ``max_tokens`` per answer). Create it
    inside the event loop that uses it."""

    def __init__(
        self,
        endpoint: Endpoint,
        max_tokens: int,
        on_overload: Callable[[], None] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.max_tokens = max_tokens
        self.output_mode = OUTPUT_MODES[0]  # downgraded, once per client, when a server refuses
        hooks: dict[str, list[Callable[..., Any]]] = {}
        if on_overload is not None:
            # openai retries 429/5xx itself and reports only the last failure; the hook sees
            # every answer, so the workers' controller can back off at the first push-back.
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
        self._url = str(self._client.base_url.join("chat/completions"))

    async def close(self) -> None:
        await self._client.close()

    def overflow_error(self, overflow: Overflow | None) -> ModelError:
        """The server's last refusal of a prompt as too long: its status (and request id) like
        any other answer's."""
        assert overflow is not None  # every attempt ended in one
        return self.error(
            "prompt too long for the model's context",
            "rejected",
            overflow.status_code,
            overflow.request_id,
        )

    async def structured(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        usage: Usage,
        temperature: float = 0.2,
    ) -> tuple[str, str]:
        while True:
            mode = self.output_mode
            try:
                return await self.request(
                    messages, response_format(mode, schema), usage, temperature
                )
            except FormatRefused:
                self.output_mode = OUTPUT_MODES[OUTPUT_MODES.index(mode) + 1]

    async def request(
        self,
        messages: list[dict[str, str]],
        output_format: Any,
        usage: Usage,
        temperature: float = 0.2,
    ) -> tuple[str, str]:
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            # Greedy for the compact page (it picks line numbers); a little spread for prose.
            "temperature": temperature,
        }
        if output_format is not None:
            body["response_format"] = output_format
        try:
            # The client's generic POST, not ``chat.completions.create``: that method walks every
            # request through its type-driven parameter transform and builds the whole typed
            # ChatCompletion from the answer (together about as much CPU as the HTTP exchange
            # against a fast server). The body here is plain strings and numbers, and the engine
            # reads four fields of the answer, which Answer validates. Retries, timeouts,
            # headers, hooks and errors are the same: both go through the client's one request
            # path. Around it, the three costs of that path that depend only on what is passed
            # in are paid here once or in compiled code: the URL is absolute (the client would
            # otherwise parse and join it with the base URL on every request), the body goes as
            # JSON bytes (pydantic-core writes the same bytes as the client's own encoder, in
            # compiled code), and the answer comes back as bytes that pydantic-core parses and
            # validates in one pass.
            raw = await self._client.post(
                self._url,
                cast_to=bytes,
                content=pydantic_core.to_json(body),
                options=_REQUEST_OPTIONS,
            )
            response = Answer.model_validate_json(raw)
        except openai.APIStatusError as error:
            if output_format is not None and output_format.get("type") != "text":
                if refuses_format(error):
                    raise FormatRefused from error
            if overflows_context(error):
                raise Overflow(error) from error
            raise self.error(
                error_reason(error), error_kind(error), error.status_code, error.request_id
            ) from error
        except openai.APIError as error:
            kind = error_kind(error)
            # A connection that could not be made: no answer, and not a request out of time.
            unreachable = isinstance(error, openai.APIConnectionError) and kind != "timeout"
            raise self.error(error_reason(error), kind, unreachable=unreachable) from error
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            # A non-JSON or malformed answer: pydantic-core's ValidationError is a ValueError.
            raise self.error(f"unparsable answer ({type(error).__name__})", "garbage") from error
        usage.requests += 1
        if response.usage:
            usage.prompt_tokens += response.usage.prompt_tokens or 0
            usage.completion_tokens += response.usage.completion_tokens or 0
        if not response.choices:
            raise self.error("answer without choices", "garbage")
        choice = response.choices[0]
        content = (choice.message.content or "").strip()
        if not content:
            raise self.error("empty answer", "garbage")
        return content, choice.finish_reason or "stop"

    def error(
        self,
        reason: str,
        kind: ErrorKind,
        status_code: int | None = None,
        request_id: str | None = None,
        *,
        unreachable: bool = False,
    ) -> ModelError:
        return ModelError(
            f"model {self.endpoint.name}: {reason}",
            kind,
            status_code=status_code,
            request_id=request_id,
            reason=reason,
            unreachable=unreachable,
        )


class FormatRefused(Exception):
    """The server refused the form of structured output asked for; the client asks for the next."""


class Overflow(Exception):
    """The server refused the prompt as longer than its context; the client retries shorter."""

    def __init__(self, error: openai.APIStatusError) -> None:
        super().__init__(error.message)
        self.status_code = error.status_code
        self.request_id = error.request_id
