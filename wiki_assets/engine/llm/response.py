"""What an OpenAI-compatible server answers, read: the fields of a chat completion the engine uses,
how to ask for structured output, and what a failed request means for the document and the model."""

from __future__ import annotations

import re
from typing import Any

import aiohttp
import openai
from pydantic import BaseModel

from wiki_assets.engine.errors import ErrorKind

# How to ask for structured output, best first. Servers differ: vLLM takes a JSON schema;
# llama-cpp-python's server refuses that form (HTTP 500) but constrains "json_object" with a
# schema; anything else gets the schema described in the prompt and a parser.
OUTPUT_MODES = ("json_schema", "json_object", "text")

_CONTEXT_OVERFLOW = re.compile(r"context length|context window|too many tokens", re.IGNORECASE)
_FORMAT_REFUSED = re.compile(r"response_format|json_schema|json_object|Input should be", re.I)


class AnswerUsage(BaseModel):
    prompt_tokens: int | None = None  # some servers send nulls here
    completion_tokens: int | None = None


class AnswerMessage(BaseModel):
    content: str | None = None


class AnswerChoice(BaseModel):
    message: AnswerMessage
    finish_reason: str | None = None


class Answer(BaseModel):
    """The parts of a chat completion the engine reads, validated (extra fields ignored)."""

    choices: list[AnswerChoice]
    usage: AnswerUsage | None = None


def response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The request's ``response_format`` for one of :data:`OUTPUT_MODES` (none for text)."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "page", "schema": schema}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def _text(error: openai.APIStatusError) -> str:
    return str(error.body or "") + error.message


def refuses_format(error: openai.APIStatusError) -> bool:
    """Whether the server refused the requested form of structured output (not the prompt)."""
    return error.status_code in (400, 422, 500) and bool(_FORMAT_REFUSED.search(_text(error)))


def overflows_context(error: openai.APIStatusError) -> bool:
    """Whether the server refused the prompt as longer than its context."""
    return error.status_code == 400 and bool(_CONTEXT_OVERFLOW.search(_text(error)))


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


def error_kind(error: openai.APIError) -> ErrorKind:
    if _timed_out(error):
        return "timeout"
    if isinstance(error, openai.APIStatusError) and error.status_code in (400, 413, 422):
        return "rejected"
    # Connection errors, 429 and 5xx after the client's retries, and 401/403/404 (a wrong key,
    # URL or model id) are the model's problem, not the document's.
    return "unavailable"


def error_reason(error: openai.APIError) -> str:
    if _timed_out(error):
        return "timed out"
    if isinstance(error, openai.APIConnectionError):
        return "connection failed"
    if isinstance(error, openai.APIStatusError):
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        return f"HTTP {error.status_code}: {message}"
    return type(error).__name__
