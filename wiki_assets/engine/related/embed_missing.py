"""Bringing the index's vectors up to date: every indexed document without one is embedded.

A document's nearest neighbours by meaning are found among every other document's vector, so a
candidates answer computed before the corpus is embedded misses some. When a run has few
documents to embed (:data:`EMBED_FIRST`: a daily run's changes), it embeds them after indexing and
before any candidates are answered (:func:`embed_missing`, on the plan's thread), which costs its
first request a second or two. When it has many (a first run), the fleet does not wait for them:
they are embedded beside the requests, by a process of their own
(:mod:`~wiki_assets.engine.ingestion.meaning`), and the pages written before the last vector came
get their nearest documents by meaning at the end of the run
(:mod:`~wiki_assets.engine.state.meaning_links`). :func:`embed_first_or_beside` chooses.

Documents are read and embedded a batch at a time (memory holds one batch of openings). An
endpoint that fails costs no document: the pass stops, says why, and the run's candidates come
from the n-grams alone (documents without a vector are embedded by the next run).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from wiki_assets.engine.errors import EmbeddingsError
from wiki_assets.engine.related.index import RelatedIndex
from wiki_assets.engine.related.vectors import EMBED_CHARS, script

EMBED_FIRST = 32
"""Documents to embed (those without a vector, and those the run extracts beside its requests)
up to which a run embeds them before its first request (a daily run's changes: its first request
waits seconds at most); past it, beside the requests."""
EMBED_BATCH = 16
"""Documents read and handed to the embedder together (it splits them into its own requests). A
stop is seen between two of them, so a batch is small enough for a CPU to embed in seconds."""


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
    """What a run's embedding before its first request did (:func:`embed_first_or_beside`)."""

    embedded: int = 0  # documents embedded
    seconds: float = 0.0  # what that took
    beside: bool = False  # too many to embed first: they are embedded beside the requests
    reembed: str | None = None  # why every document was embedded again, if it was
    failure: str | None = None  # why the endpoint was given up on, if it was


def embed_first_or_beside(
    index: RelatedIndex,
    embedder: Embedder,
    read: Callable[[str], str | None],
    later: int,
    stopped: Callable[[], bool],
) -> Embedded:
    """Embed the documents of ``index`` without a vector now (:func:`embed_missing`) when they
    and the ``later`` documents the run indexes beside its requests are at most
    :data:`EMBED_FIRST`; else leave them for the requests' side (:attr:`Embedded.beside`)."""
    began = time.monotonic()
    reembed = index.vectors.use_model(embedder.model)
    missing = index.vectors.count_missing()
    if missing + later > EMBED_FIRST:
        return Embedded(beside=True, reembed=reembed)
    done = embed_missing(index, embedder, read, stopped=stopped)
    done.reembed, done.seconds = reembed, time.monotonic() - began
    return done


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
    result = Embedded(reembed=index.vectors.use_model(embedder.model))
    after = -1
    while not stopped():
        rows = index.vectors.missing(after, batch)
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
        index.vectors.store(embedder.model, embedder.where, docs, array)
        result.embedded += len(docs)
    return result
