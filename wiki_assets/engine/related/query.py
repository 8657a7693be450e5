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

import numpy as np

from wiki_assets.engine.related import packed

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


def most_similar(db: sqlite3.Connection, doc: int, n_docs: int, upto: int, k: int) -> Found:
    """``(document id, cosine)`` of the ``k`` live documents most like ``doc``, best first (ties
    in id order); only documents sharing a queried gram (score > 0), never ``doc`` itself. ``upto``:
    the last document id in the packed lists."""
    max_df = n_docs * COMMON_FRACTION if n_docs >= COMMON_MIN_DOCS else n_docs
    rows = db.execute(
        "SELECT p.gram, p.weight, d.n FROM postings p JOIN df d ON d.gram = p.gram"
        " WHERE p.doc = ? AND d.n <= ?",
        (doc, max_df),
    ).fetchall()
    idfs = [idf(n_docs, df) for _, _, df in rows]
    norm_sq = sum(
        (weight * gram_idf) ** 2 for (_, weight, _), gram_idf in zip(rows, idfs, strict=True)
    )
    query = [  # (df, gram, query weight); a gram only this document posts matches nothing
        (df, gram, weight * gram_idf * gram_idf)
        for (gram, weight, df), gram_idf in zip(rows, idfs, strict=True)
        if df > 1
    ]
    if not query or norm_sq <= 0.0:
        return []
    query = _within_budget(query, QUERY_POSTINGS)
    ids, weights = packed.contributions(db, {gram: qw for _, gram, qw in query}, upto)
    if not len(ids):
        return []
    others, at = np.unique(ids, return_inverse=True)
    dots = np.bincount(at, weights=weights, minlength=len(others))
    dots[others == doc] = 0.0
    return _best_alive(db, others, dots / math.sqrt(norm_sq), k)


def _best_alive(db: sqlite3.Connection, others: np.ndarray, scores: np.ndarray, k: int) -> Found:
    """The ``k`` best positive scores among live documents, ties in id (indexing) order. The
    packed lists still hold documents removed or changed since they were packed: their ids are
    gone from ``docs``, so a few more than ``k`` are taken, and more while that is not enough."""
    positive = np.flatnonzero(scores > 0)
    take = k + 8
    while True:
        best = positive
        if len(positive) > take:  # the best ``take``, and whatever ties the last of them
            cut = np.partition(scores[positive], len(positive) - take)[len(positive) - take]
            best = positive[scores[positive] >= cut]
        best = best[np.lexsort((others[best], -scores[best]))][:take]
        ids = [int(other) for other in others[best]]
        marks = ",".join("?" * len(ids))
        alive = {row[0] for row in db.execute(f"SELECT id FROM docs WHERE id IN ({marks})", ids)}
        found = [
            (other, min(1.0, float(score)))
            for other, score in zip(ids, scores[best], strict=True)
            if other in alive
        ]
        if len(found) >= k or len(best) == len(positive):
            return found[:k]
        take *= 4
