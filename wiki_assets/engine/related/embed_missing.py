"""Bringing the index's vectors up to date: every indexed document without one is embedded.

A run does this after indexing and before any candidates are answered: a document's nearest
neighbours by meaning are found among every other document's vector, so a candidates answer
computed before the corpus is embedded would miss them. Documents are read and embedded a batch
at a time (memory holds one batch of openings), ahead of the requests. With a GPU endpoint that
is seconds for thousands of documents; on the embedded CPU model it is what
``docs/benchmarks.md`` measures.

An endpoint that fails costs no document: the pass stops, says why, and the run's candidates come
from the n-grams alone (documents without a vector are embedded by the next run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from wiki_assets.engine.errors import EmbeddingsError
from wiki_assets.engine.related.index import RelatedIndex
from wiki_assets.engine.related.vectors import EMBED_CHARS, script

EMBED_BATCH = 256
"""Documents read and handed to the embedder together (it splits them into its own requests)."""


class Embedder(Protocol):
    """What the pass needs of an embeddings client."""

    @property
    def model(self) -> str:
        """The model's name, stored with its vectors: another name means embedding again."""
        ...

    @property
    def where(self) -> str:
        """The endpoint, as errors name it (never a secret)."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised vector per text; raises :class:`EmbeddingsError`."""
        ...


@dataclass(slots=True)
class Embedded:
    """What :func:`embed_missing` did."""

    embedded: int = 0  # documents embedded
    reembed: str | None = None  # why every document was embedded again, if it was
    failure: str | None = None  # why the endpoint was given up on, if it was


def embed_missing(
    index: RelatedIndex,
    embedder: Embedder,
    read: Callable[[str], str | None],
    *,
    batch: int = EMBED_BATCH,
    stopped: Callable[[], bool] = lambda: False,
) -> Embedded:
    """Embed every document of ``index`` without a vector; ``read(path)`` is its text (None:
    unreadable now, left without a vector). Stops early once ``stopped()``. Raises
    :class:`~.vectors.DimensionMismatch` for vectors of another length than those stored."""
    result = Embedded(reembed=index.use_embedding_model(embedder.model))
    after = -1
    while not stopped():
        rows = index.without_vectors(after, batch)
        if not rows:
            break
        after = rows[-1][0]
        docs: list[tuple[int, str]] = []
        openings: list[str] = []
        for doc, path in rows:
            text = read(path)
            if text and text.strip():
                opening = text[:EMBED_CHARS]
                docs.append((doc, script(opening)))
                openings.append(opening)
        if not docs:
            continue
        try:
            array = embedder.embed(openings)
        except EmbeddingsError as error:
            result.failure = str(error)
            break
        index.store_vectors(embedder.model, embedder.where, docs, array)
        result.embedded += len(docs)
    return result
