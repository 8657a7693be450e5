"""Vectors of texts from an OpenAI-compatible ``/v1/embeddings`` endpoint, synchronously, over
openai's client like the chat models (its retries with backoff, its timeouts, the key read from
the environment when the client is made).

Every failure is an :class:`~wiki_assets.engine.errors.EmbeddingsError` naming the endpoint and
the reason, never the key. The first request that still fails after the client's own retries
opens the breaker for the client's whole life: every later :meth:`EmbeddingsClient.embed` raises
the same error at once, so a run that falls back to the n-gram index alone pays the endpoint's
timeouts once, not once per batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import openai

from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.errors import EmbeddingsError
from wiki_assets.engine.llm.chat import PLATFORM_HEADERS
from wiki_assets.engine.llm.response import error_reason

Vectors = npt.NDArray[np.float32]

_REQUEST_OPTIONS: openai.RequestOptions = {
    "headers": {name: openai.Omit() for name in PLATFORM_HEADERS}
}


class EmbeddingsClient:
    """One embeddings endpoint's synchronous client (not thread-safe: one caller at a time)."""

    def __init__(
        self, endpoint: EmbeddingsEndpoint, gone: Callable[[], str | None] | None = None
    ) -> None:
        self.endpoint = endpoint
        # For a server that is a child process of the run: why it died, if it has (its exit
        # code or signal and last lines), which then says why a request failed.
        self.gone = gone
        self._client = openai.OpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key(),
            timeout=endpoint.timeout_s,
            max_retries=endpoint.max_retries,
        )
        self._dim: int | None = None  # of the first answer; every later one must match it
        self._broken: EmbeddingsError | None = None  # the breaker: open once a batch failed

    def __enter__(self) -> EmbeddingsClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    @property
    def model(self) -> str:
        """The model's name, stored with the vectors it embeds."""
        return self.endpoint.model

    @property
    def where(self) -> str:
        """The endpoint as errors name it."""
        return f"{self.endpoint.name} ({self.endpoint.base_url})"

    @property
    def dim(self) -> int | None:
        """The dimension of the endpoint's vectors, once one answer has said it."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The vectors of ``texts``: float32, one L2-normalised row per text, in order. Asked
        for in requests of ``batch_size`` texts, each with the endpoint's ``input_prefix``."""
        if self._broken is not None:
            raise self._broken
        notice = self.gone() if self.gone is not None else None
        if notice is not None:
            self._broken = self._error(notice)  # no request to a server known to be dead
            raise self._broken
        size = self.endpoint.batch_size
        rows = []
        try:
            for start in range(0, len(texts), size):
                rows.append(self._batch(texts[start : start + size]))
        except EmbeddingsError as error:
            self._broken = error
            raise
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return np.concatenate(rows)

    def _batch(self, texts: Sequence[str]) -> Vectors:
        prefix = self.endpoint.input_prefix
        body = {
            "model": self.endpoint.model,
            "input": [prefix + text for text in texts],
            "encoding_format": "float",
        }
        try:
            # The generic POST, as the chat requests do: the answer's JSON, checked here.
            answer = self._client.post(
                "/embeddings", cast_to=object, body=body, options=_REQUEST_OPTIONS
            )
        except openai.APIConnectionError as error:  # timeouts too
            raise self._error(error_reason(error)) from error
        except openai.APIError as error:
            # from None: the server's own text (which the reason shortens) stays out of the log.
            raise self._error(error_reason(error)) from None
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            # openai decodes the body itself: a non-JSON answer surfaces here.
            raise self._error(f"unparsable answer ({type(error).__name__})") from None
        vectors = self._vectors(answer, len(texts))
        if self._dim is None:
            self._dim = vectors.shape[1]
        elif vectors.shape[1] != self._dim:
            raise self._error(f"dimension changed from {self._dim} to {vectors.shape[1]}")
        return vectors

    def _vectors(self, answer: Any, count: int) -> Vectors:
        """The answer's vectors in input order, normalised, or the error that says what is
        wrong with it."""
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list):
            raise self._error("answer without a list of vectors ('data')")
        if len(data) != count:
            raise self._error(f"{len(data)} vectors for {count} inputs")
        if not all(isinstance(item, dict) and type(item.get("index")) is int for item in data):
            raise self._error("a vector without its index")
        data = sorted(data, key=lambda item: item["index"])
        if [item["index"] for item in data] != list(range(count)):
            raise self._error("vector indexes are not those of the inputs")
        embeddings = [item.get("embedding") for item in data]
        if not all(_numbers(embedding) for embedding in embeddings):
            raise self._error("a vector that is not a list of numbers")
        lengths = sorted({len(embedding) for embedding in embeddings})
        if len(lengths) != 1:
            raise self._error(f"vectors of unequal length ({', '.join(map(str, lengths))})")
        if lengths == [0]:
            raise self._error("empty vectors")
        vectors = np.asarray(embeddings, dtype=np.float64)
        if not np.isfinite(vectors).all():
            raise self._error("a vector with a number that is not finite")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if not (norms > 0).all() or not np.isfinite(norms).all():
            raise self._error("a zero vector")
        normalised: Vectors = (vectors / norms).astype(np.float32)
        return normalised

    def _error(self, reason: str) -> EmbeddingsError:
        notice = self.gone() if self.gone is not None else None
        if notice is not None:
            reason = notice  # the request failed because its server died: say how
        key = self._client.api_key
        if len(key) >= 4 and key in reason:  # a server that echoes the key it was sent
            reason = reason.replace(key, "***")
        endpoint = self.endpoint
        return EmbeddingsError(
            f"embeddings endpoint {endpoint.name} ({endpoint.base_url}): {reason}", reason=reason
        )


def _numbers(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(number, int | float) and not isinstance(number, bool) for number in value
    )


__all__ = ["EmbeddingsClient", "Vectors"]
