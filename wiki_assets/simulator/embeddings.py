"""``POST /v1/embeddings``: deterministic vectors in OpenAI's shape, and the faults of
``SimModel.embedding_fault``.

A text's vector is feature hashing of its lower-cased character 3-grams (the text padded with a
space at each end) into ``embedding_dim`` buckets, each 3-gram adding +1 or -1 by a second hash,
then L2-normalised: the same text always gets the same vector, and texts that share words share
3-grams, so their vectors are closer than those of unrelated texts.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import struct
from typing import Any

from aiohttp import web

from wiki_assets.simulator.answers import error_response
from wiki_assets.simulator.model import SimModel
from wiki_assets.simulator.request import Rejected
from wiki_assets.simulator.scheduler import SchedulerStopped
from wiki_assets.simulator.stats import Ledger
from wiki_assets.simulator.tokens import estimate_tokens

__all__ = ["Embeddings", "hashed_vector"]


def hashed_vector(text: str, dim: int) -> list[float]:
    """The simulated vector of ``text``: hashed character 3-grams, L2-normalised."""
    padded = f" {text.lower()} "
    grams = [padded[i : i + 3] for i in range(len(padded) - 2)] or [padded]
    vector = [0.0] * dim
    for gram in grams:
        digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[(value >> 1) % dim] += 1.0 if value & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:  # every 3-gram cancelled out: any fixed unit vector
        return [1.0] + [0.0] * (dim - 1)
    return [x / norm for x in vector]


def _inputs(body: Any) -> list[str]:
    if not isinstance(body, dict):
        raise Rejected(error_response(400, "request body must be a JSON object"))
    value = body.get("input")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(text, str) for text in value):
        return value
    raise Rejected(error_response(400, "'input' must be a string or a non-empty list of strings"))


def _encoded(vector: list[float], encoding: Any) -> list[float] | str:
    if encoding == "base64":  # little-endian float32, as OpenAI's API sends it
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
    return vector


# What each "garbage" request gets, in turn: a reason a client must refuse the answer.
_GARBAGE = ("cut", "no_data", "missing", "zero", "ragged", "nan")


class Embeddings:
    """Answers ``/v1/embeddings`` for one model on its server's event loop. ``stopping`` is set
    by the server's shutdown and ends a delayed request (as :class:`SchedulerStopped`)."""

    def __init__(self, sim: SimModel, ledger: Ledger, stopping: asyncio.Event) -> None:
        self._sim = sim
        self._ledger = ledger
        self._stopping = stopping

    async def answer(self, request: web.Request) -> web.StreamResponse:
        """The response to one embeddings request; :class:`Rejected` for an invalid one."""
        sim = self._sim
        number = self._ledger.open_embeddings(request.headers.get("Authorization", ""))
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            raise Rejected(error_response(400, "request body is not valid JSON")) from None
        texts = _inputs(body)
        if sim.embedding_delay_s > 0:
            try:
                await asyncio.wait_for(self._stopping.wait(), sim.embedding_delay_s)
            except TimeoutError:
                pass
            else:
                raise SchedulerStopped
        if sim.embedding_fault == "down":
            return error_response(503, "simulated embeddings outage", "server_error")
        dim = sim.embedding_dim
        if sim.embedding_fault == "wrong_dim" and number % 2 == 0:
            dim += 1
        vectors: list[list[float]] = [hashed_vector(text, dim) for text in texts]
        if sim.embedding_fault == "garbage":
            return _garbage(_GARBAGE[(number - 1) % len(_GARBAGE)], vectors)
        self._ledger.count_embedded(len(texts))
        data = [
            {
                "object": "embedding",
                "index": index,
                "embedding": _encoded(vector, body.get("encoding_format")),
            }
            for index, vector in enumerate(vectors)
        ]
        tokens = sum(estimate_tokens(text) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return web.json_response(
            {"object": "list", "data": data, "model": sim.model, "usage": usage}
        )


def _garbage(kind: str, vectors: list[list[float]]) -> web.Response:
    """HTTP 200 with an answer that is not the vectors asked for."""
    if kind == "cut":  # a truncated body with a JSON content type, like a proxy cutting it
        return web.Response(text='{"object": "list", "data": [', content_type="application/json")
    if kind == "no_data":
        return web.json_response({"object": "list", "model": "garbage"})
    if kind == "missing":
        vectors = vectors[:-1]
    elif kind == "zero":
        vectors = [[0.0] * len(vectors[0]), *vectors[1:]]
    elif kind == "ragged":
        vectors = [[*vectors[0], 0.5], *vectors[1:]]
    else:  # "nan": json.dumps writes NaN, which Python's json (and openai's client) reads
        vectors = [[math.nan, *vectors[0][1:]], *vectors[1:]]
    data = [
        {"object": "embedding", "index": index, "embedding": vector}
        for index, vector in enumerate(vectors)
    ]
    return web.json_response({"object": "list", "data": data, "model": "garbage"})
