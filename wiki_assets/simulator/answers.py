"""What the server answers: chat-completion bodies (plain or structured) and OpenAI-style errors.

Answers are deterministic functions of the last user message, so tests can check what travelled
end to end; only their token counts are simulated, not the text a model would write.
"""

from __future__ import annotations

import json
import time
from typing import Any

from aiohttp import web

from wiki_assets.simulator.schema import SchemaFiller
from wiki_assets.simulator.tokens import truncate_to_tokens

__all__ = ["answer_text", "completion_body", "error_response"]

# How many words of the document the plain-text answer quotes.
_SUMMARY_WORDS = 30


def answer_text(document: str, schema: dict[str, Any] | None, as_json: bool, tokens: int) -> str:
    """The assistant message content (only its token count is simulated, not the text)."""
    if as_json:
        if schema is None:
            words = " ".join(document.split()[:_SUMMARY_WORDS])
            return json.dumps({"summary": truncate_to_tokens(words, tokens)}, ensure_ascii=False)
        # Structured answers stay valid JSON even when max_tokens "cut" them: servers with
        # grammar-constrained decoding are what the pipeline relies on, and tests want to
        # validate the payload; finish_reason still reports the cut.
        return json.dumps(SchemaFiller(schema, document).value(schema), ensure_ascii=False)
    words = " ".join(document.split()[:_SUMMARY_WORDS])
    return truncate_to_tokens(f"Summary: {words}", tokens)


def completion_body(
    completion_id: int,
    model: str,
    content: str,
    prompt_tokens: int,
    completion_tokens: int,
    capped: bool,
) -> dict[str, Any]:
    """A ``chat.completion`` object with one choice and its usage; ``capped``: cut by max_tokens."""
    return {
        "id": f"chatcmpl-sim-{completion_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "length" if capped else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_response(status: int, message: str, kind: str = "invalid_request_error") -> web.Response:
    """An OpenAI-style error body, which the openai client turns into a typed exception."""
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return web.json_response(body, status=status)
