"""Scoring: the documents most like an indexed one, by the cosine of their tf-idf vectors.

Every document sharing a feature with the query is scored ``sum(w_q * w_c * idf^2) / (|q| |c|)``
with ``idf = ln(1 + N / n)`` read from ``df`` when the query runs; ``|c|`` is the norm stored
when the candidate was indexed (with the idf of that moment), ``|q|`` is the query's with the
current idf. Grams posted by more than 20% of the corpus (once it has at least 50 documents) are
ignored, which keeps every posting list short, and past :data:`QUERY_POSTINGS` postings only the
rarest grams are matched. The weights are summed with numpy over the posting lists (see
:mod:`~wiki_assets.engine.related.segments`).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from itertools import chain, compress, repeat

import numpy as np

from wiki_assets.engine.related import segments
from wiki_assets.engine.related.segments import FEATURE_WEIGHTS
from wiki_assets.engine.related.storage import chunks

COMMON_FRACTION = 0.2
"""Grams posted by more than this fraction of the corpus are ignored at query time..."""
COMMON_MIN_DOCS = 50
"""...once the corpus has at least this many documents."""
QUERY_POSTINGS = 10_000
"""Most postings one candidates query sums. A query's cost is the sum of its grams' document
counts, which grows with the corpus; past this budget only the rarest grams (the most telling ones)
are matched, so a query costs about the same at a million documents as at ten thousand."""

DENSE_SUMS = 1 << 20
"""Sums a batch query adds up in one dense array (8 MiB of float64) when the batch's documents
times the highest document id fit; past that they are keyed by sorting. On a 100,000-document
index, a process asking batches of 64 and of 1 to 40 documents peaked at 158 MB with a bound of
1 << 22 (32 MiB) and at 114 MB with this one, for the same CPU."""

Found = list[tuple[int, float]]  # (document id, cosine), best first


def idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + n_docs / df) if df > 0 else 0.0


def _within_budget(
    query: list[tuple[int, str, float]], budget: int
) -> list[tuple[int, str, float]]:
    """The query's grams, rarest first, as long as their document counts fit in ``budget``
    (always at least one)."""
    if sum(df for df, _, _ in query) <= budget:
        return query
    kept: list[tuple[int, str, float]] = []
    used = 0
    for item in sorted(query):
        if kept and used + item[0] > budget:
            break
        kept.append(item)
        used += item[0]
    return kept


def most_similar_many(
    db: sqlite3.Connection, docs: Sequence[int], n_docs: int, k: int
) -> dict[int, Found]:
    """``(document id, cosine)`` of the ``k`` live documents most like each of ``docs`` (indexed
    documents), best first (ties in id order); only documents sharing a queried gram (score > 0),
    never the document itself; a document with nothing to match is left out.

    The documents are read together (one query for their features, one per 500 distinct grams
    for their ``df`` counts and for the posting lists, which the documents of a batch mostly
    share, one for which of the best are alive) and scored together in numpy, keyed by
    (document, candidate). Each sum still adds a document's own contributions in its own order
    (its grams in order, each gram's list in id order), so a document's answer is exactly its
    answer alone, whatever else is in the batch."""
    max_df = n_docs * COMMON_FRACTION if n_docs >= COMMON_MIN_DOCS else n_docs
    owner, grams, query_weight, norms = _queries(db, docs, n_docs, max_df)
    names = sorted(set(grams))
    lengths, list_ids, list_weights = segments.posting_lists(db, names)
    if not lengths.sum():
        return {}
    position = {name: at for at, name in enumerate(names)}
    gram = np.fromiter(map(position.__getitem__, grams), np.int64, len(grams))
    count = lengths[gram]  # postings each query gram brings
    ends = np.cumsum(count)
    first = (np.cumsum(lengths) - lengths)[gram]
    at = np.arange(ends[-1]) - np.repeat(ends - count, count) + np.repeat(first, count)
    ids = list_ids[at].astype(np.int64)
    contributions = list_weights[at] * np.repeat(query_weight, count)
    # Each sum is keyed by (the document's place in the batch, candidate). bincount adds in input
    # order: a document's contributions come in its own order whatever the batch holds.
    batch_docs, place = np.unique(owner, return_inverse=True)
    span = int(max(ids.max(), batch_docs.max())) + 1
    keys = np.repeat(place, count) * span + ids
    if len(batch_docs) * span <= DENSE_SUMS:
        dots = np.bincount(keys, weights=contributions, minlength=len(batch_docs) * span)
        keys = np.flatnonzero(dots)  # every weight is positive: a candidate's sum is too
        dots = dots[keys]
    else:
        keys, inverse = np.unique(keys, return_inverse=True)
        dots = np.bincount(inverse, weights=contributions)
    places, others = np.divmod(keys, span)
    dots[batch_docs[places] == others] = 0.0
    scored: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    starts = np.flatnonzero(np.diff(places, prepend=-1))
    for start, stop in zip(starts, [*starts[1:], len(keys)], strict=True):
        doc = int(batch_docs[places[start]])
        scored[doc] = (others[start:stop], dots[start:stop] / norms[doc])
    return _best_alive_many(db, scored, k)


def _queries(
    db: sqlite3.Connection, docs: Sequence[int], n_docs: int, max_df: float
) -> tuple[np.ndarray, list[str], np.ndarray, dict[int, float]]:
    """The documents' queries, gram by gram in (document, gram) order: each gram's document, the
    gram, its query weight ``weight * idf^2``; and each document's norm. A query holds the
    document's grams posted by at most ``max_df`` documents and by some other document (a gram
    only this document posts matches nothing), within :data:`QUERY_POSTINGS`."""
    features: list[tuple[int, str, bytes]] = []
    for chunk in chunks(sorted(set(docs))):
        marks = ",".join("?" * len(chunk))
        features += db.execute(
            f"SELECT id, grams, weights FROM docs WHERE id IN ({marks}) ORDER BY id", chunk
        ).fetchall()
    features.sort()  # documents in id order, each one's grams in gram order (as stored)
    doc_grams = [grams.split("\n") if grams else [] for _, grams, _ in features]
    every = list(chain.from_iterable(doc_grams))  # (document, gram) order
    df = _document_counts(db, sorted(set(every)))
    counts = np.fromiter(map(df.get, every, repeat(-1)), np.int64, len(every))
    rows = (counts >= 0) & (counts <= max_df)  # -1: not in df (no document posts it)
    if not rows.any():
        return np.zeros(0, np.int64), [], np.zeros(0), {}
    lengths = [len(names) for names in doc_grams]
    owner = np.repeat(np.array([doc for doc, _, _ in features], np.int64), lengths)[rows]
    weights = b"".join([weights for _, _, weights in features])
    weight = np.frombuffer(weights, FEATURE_WEIGHTS)[rows]
    gram_column = list(compress(every, rows.tolist()))
    posted = counts[rows].astype(np.float64)
    gram_idf = np.log(1.0 + n_docs / posted)
    query_docs, place = np.unique(owner, return_inverse=True)
    norm_sq = np.bincount(place, weights=(weight * gram_idf) ** 2)
    keep = (posted > 1) & (norm_sq[place] > 0.0)
    postings = np.bincount(place, weights=np.where(keep, posted, 0.0), minlength=len(query_docs))
    for over in np.flatnonzero(postings > QUERY_POSTINGS):  # only the rarest grams
        mine = np.flatnonzero(keep & (place == over))
        kept = _within_budget(
            [(int(posted[r]), gram_column[r], float(r)) for r in mine], QUERY_POSTINGS
        )
        keep[mine] = False
        keep[[int(r) for _, _, r in kept]] = True
    chosen = np.flatnonzero(keep)
    norms = {int(doc): float(np.sqrt(sq)) for doc, sq in zip(query_docs, norm_sq, strict=True)}
    return (
        owner[chosen],
        [gram_column[r] for r in chosen],
        (weight * gram_idf * gram_idf)[chosen],
        norms,
    )


def _document_counts(db: sqlite3.Connection, grams: Sequence[str]) -> dict[str, int]:
    """``df.n`` of each of ``grams``."""
    counts: dict[str, int] = {}
    for chunk in chunks(grams):
        marks = ",".join("?" * len(chunk))
        counts.update(db.execute(f"SELECT gram, n FROM df WHERE gram IN ({marks})", chunk))
    return counts


def _best(others: np.ndarray, scores: np.ndarray, take: int) -> tuple[list[int], np.ndarray, bool]:
    """The ``take`` best positive scores (and whatever ties the last of them), best first, ties in
    id (indexing) order: their ids, their scores, and whether that is every positive score."""
    positive = np.flatnonzero(scores > 0)
    best = positive
    if len(positive) > take:
        cut = np.partition(scores[positive], len(positive) - take)[len(positive) - take]
        best = positive[scores[positive] >= cut]
    best = best[np.lexsort((others[best], -scores[best]))][:take]
    return [int(other) for other in others[best]], scores[best], len(best) == len(positive)


def _alive(db: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
    alive: set[int] = set()
    for chunk in chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        alive.update(
            row[0] for row in db.execute(f"SELECT id FROM docs WHERE id IN ({marks})", chunk)
        )
    return alive


def _live(ids: list[int], scores: np.ndarray, alive: set[int]) -> Found:
    return [
        (other, min(1.0, float(score)))
        for other, score in zip(ids, scores, strict=True)
        if other in alive
    ]


def _best_alive_many(
    db: sqlite3.Connection, scored: dict[int, tuple[np.ndarray, np.ndarray]], k: int
) -> dict[int, Found]:
    """:func:`_best_alive` of every scored document; the first look at each document's best is
    checked against ``docs`` in one query for all of them."""
    tops = {doc: _best(others, scores, k + 8) for doc, (others, scores) in scored.items()}
    alive = _alive(db, sorted({other for ids, _, _ in tops.values() for other in ids}))
    found: dict[int, Found] = {}
    for doc, (ids, scores, everything) in tops.items():
        live = _live(ids, scores, alive)
        if len(live) >= k or everything:
            found[doc] = live[:k]
        else:  # many of its best were removed since their lists were merged: look further
            found[doc] = _best_alive(db, *scored[doc], k)
    return found


def _best_alive(db: sqlite3.Connection, others: np.ndarray, scores: np.ndarray, k: int) -> Found:
    """The ``k`` best positive scores among live documents, ties in id (indexing) order. The
    lists still hold documents removed or changed since they were last merged: their ids are
    gone from ``docs``, so a few more than ``k`` are taken, and more while that is not enough."""
    take = k + 8
    while True:
        ids, scores_taken, everything = _best(others, scores, take)
        live = _live(ids, scores_taken, _alive(db, ids))
        if len(live) >= k or everything:
            return live[:k]
        take *= 4
