"""Scoring: the documents most like an indexed one, by the cosine of their tf-idf vectors.

Every document sharing a feature with the query is scored ``sum(w_q * w_c * idf^2) / (|q| |c|)``
with ``idf = ln(1 + N / n)`` read from ``df`` when the query runs; ``|c|`` is the norm stored
when the candidate was indexed (with the idf of that moment), ``|q|`` is the query's with the
current idf. Grams posted by more than 20% of the corpus (once it has at least 50 documents) are
ignored, which keeps every posting list short, and past :data:`QUERY_POSTINGS` postings only the
rarest grams are matched. The weights are summed with numpy over the packed posting lists (see
:mod:`~wiki_assets.engine.related.packed`).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence

import numpy as np

from wiki_assets.engine.related import packed
from wiki_assets.engine.related.storage import chunks

COMMON_FRACTION = 0.2
"""Grams posted by more than this fraction of the corpus are ignored at query time..."""
COMMON_MIN_DOCS = 50
"""...once the corpus has at least this many documents."""
QUERY_POSTINGS = 10_000
"""Most postings one candidates query sums. A query's cost is the sum of its grams' document
counts, which grows with the corpus; past this budget only the rarest grams (the most telling ones)
are matched, so a query costs about the same at a million documents as at ten thousand."""

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
    db: sqlite3.Connection, docs: Sequence[int], n_docs: int, upto: int, k: int
) -> dict[int, Found]:
    """``(document id, cosine)`` of the ``k`` live documents most like each of ``docs`` (indexed
    documents), best first (ties in id order); only documents sharing a queried gram (score > 0),
    never the document itself; a document with nothing to match is left out. ``upto``: the last
    document id in the packed lists. Read together: one query for
    their grams, one per 500 distinct grams for the posting lists (documents of one batch share
    most of theirs) and one for which of the best are alive. Each document is scored on its own,
    in the same order whatever else is in the batch, so its answer is exactly its answer alone."""
    max_df = n_docs * COMMON_FRACTION if n_docs >= COMMON_MIN_DOCS else n_docs
    queries = _queries(db, docs, n_docs, max_df)
    grams = sorted({gram for query_weight, _ in queries.values() for gram in query_weight})
    lists = packed.posting_lists(db, grams, upto)
    scored: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for doc, (query_weight, norm) in queries.items():
        parts = [(lists[gram], weight) for gram, weight in query_weight.items() if gram in lists]
        if not parts:
            continue
        ids = np.concatenate([postings[0] for postings, _ in parts])
        weights = np.concatenate([postings[1] * weight for postings, weight in parts])
        others, at = np.unique(ids, return_inverse=True)
        dots = np.bincount(at, weights=weights, minlength=len(others))
        dots[others == doc] = 0.0
        scored[doc] = (others, dots / norm)
    return _best_alive_many(db, scored, k)


def _queries(
    db: sqlite3.Connection, docs: Sequence[int], n_docs: int, max_df: float
) -> dict[int, tuple[dict[str, float], float]]:
    """Each document's query: its grams posted by at most ``max_df`` documents and by some other
    document, with their query weights (within :data:`QUERY_POSTINGS`), and its norm. Documents
    with nothing to match are left out."""
    rows: dict[int, list[tuple[str, float, int]]] = {doc: [] for doc in docs}
    for chunk in chunks(list(rows)):
        marks = ",".join("?" * len(chunk))
        for doc, gram, weight, df in db.execute(
            "SELECT p.doc, p.gram, p.weight, d.n FROM postings p JOIN df d ON d.gram = p.gram"
            f" WHERE p.doc IN ({marks}) AND d.n <= ? ORDER BY p.doc, p.gram",
            [*chunk, max_df],
        ):
            rows[doc].append((gram, weight, df))
    queries = {}
    for doc, posted in rows.items():
        idfs = [idf(n_docs, df) for _, _, df in posted]
        norm_sq = sum(
            (weight * gram_idf) ** 2 for (_, weight, _), gram_idf in zip(posted, idfs, strict=True)
        )
        query = [  # (df, gram, query weight); a gram only this document posts matches nothing
            (df, gram, weight * gram_idf * gram_idf)
            for (gram, weight, df), gram_idf in zip(posted, idfs, strict=True)
            if df > 1
        ]
        if query and norm_sq > 0.0:
            kept = _within_budget(query, QUERY_POSTINGS)
            queries[doc] = ({gram: qw for _, gram, qw in kept}, math.sqrt(norm_sq))
    return queries


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
        else:  # many of its best were removed since the lists were packed: look further
            found[doc] = _best_alive(db, *scored[doc], k)
    return found


def _best_alive(db: sqlite3.Connection, others: np.ndarray, scores: np.ndarray, k: int) -> Found:
    """The ``k`` best positive scores among live documents, ties in id (indexing) order. The
    packed lists still hold documents removed or changed since they were packed: their ids are
    gone from ``docs``, so a few more than ``k`` are taken, and more while that is not enough."""
    take = k + 8
    while True:
        ids, scores_taken, everything = _best(others, scores, take)
        live = _live(ids, scores_taken, _alive(db, ids))
        if len(live) >= k or everything:
            return live[:k]
        take *= 4
