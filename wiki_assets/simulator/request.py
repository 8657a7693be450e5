"""Reading a chat completion request: what the simulator uses of it, or the 4xx/5xx it earns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from wiki_assets.simulator.answers import error_response
from wiki_assets.simulator.model import SimModel
from wiki_assets.simulator.tokens import estimate_tokens

__all__ = ["ChatRequest", "Rejected", "parse_request"]

# Tokens of chat-template overhead per message (role markers, separators), as OpenAI documents.
_TOKENS_PER_MESSAGE = 4
# max_tokens when the request does not say, like llama.cpp's server default.
_DEFAULT_MAX_TOKENS = 256


class Rejected(Exception):
    """An invalid request; carries the HTTP response to send."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


@dataclass(frozen=True)
class ChatRequest:
    """The parts of a chat completion request the simulator uses."""

    prompt_tokens: int
    max_tokens: int
    document: str  # the last user message (the last message if none is the user's)
    as_json: bool  # response_format asked for JSON
    schema: dict[str, Any] | None  # the JSON schema asked for, if any


def parse_request(sim: SimModel, body: Any) -> ChatRequest:
    """The request in ``body`` (decoded JSON), or :class:`Rejected` as ``sim``'s server would."""
    if not isinstance(body, dict):
        raise Rejected(error_response(400, "request body must be a JSON object"))
    if body.get("stream"):
        raise Rejected(error_response(400, "stream=true is not supported by the simulator"))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise Rejected(error_response(400, "'messages' must be a non-empty list"))
    if not all(isinstance(m, dict) for m in messages):
        raise Rejected(error_response(400, "every message must be an object"))

    max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    if max_tokens is None:
        max_tokens = _DEFAULT_MAX_TOKENS
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise Rejected(error_response(400, "'max_tokens' must be a positive integer"))

    as_json, schema = _response_format(sim, body.get("response_format"))

    texts = [_content_text(m.get("content")) for m in messages]
    prompt_tokens = sum(estimate_tokens(t) + _TOKENS_PER_MESSAGE for t in texts)
    users = [t for m, t in zip(messages, texts, strict=True) if m.get("role") == "user"]
    document = users[-1] if users else texts[-1]

    requested = prompt_tokens + max_tokens
    if requested > sim.context_tokens:
        # vLLM's wording, which clients (and the pipeline) match on to shrink the prompt.
        message = (
            f"This model's maximum context length is {sim.context_tokens} tokens. However, you "
            f"requested {requested} tokens ({prompt_tokens} in the messages, {max_tokens} in the "
            "completion). Please reduce the length of the messages or completion."
        )
        raise Rejected(error_response(400, message))
    return ChatRequest(prompt_tokens, max_tokens, document, as_json, schema)


def _response_format(sim: SimModel, response_format: Any) -> tuple[bool, dict[str, Any] | None]:
    """Whether ``response_format`` asks for JSON, and the schema it gives if any."""
    if response_format is None:
        return False, None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind == "json_schema":
        if not sim.json_schema_support:
            # llama-cpp-python validates response_format with pydantic and answers its
            # validation error as a 500 with a FastAPI-style "detail" body.
            detail = (
                "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
                "'ctx': {'expected': \"'text' or 'json_object'\"}}]"
            )
            raise Rejected(web.json_response({"detail": detail}, status=500))
        spec = response_format.get("json_schema")
        found = spec.get("schema") if isinstance(spec, dict) else None
        return True, found if isinstance(found, dict) else None
    if kind == "json_object":
        found = response_format.get("schema")
        return True, found if isinstance(found, dict) else None
    if kind != "text":
        raise Rejected(error_response(400, f"unsupported response_format type {kind!r}"))
    return False, None


def _content_text(content: Any) -> str:
    """Text of a message content: a string, or a list of parts of which the text ones count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""
