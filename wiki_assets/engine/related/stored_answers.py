"""The candidates answers the index stores, and the :class:`Candidate` a caller gets of one.

A query's answer (``id:score`` pairs, best first) is stored for its document with the index's
``generation``; it stays valid until the indexed documents or their vectors change, so a re-run
over an unchanged corpus looks its candidates up instead of querying again.

An answer takes, in turn, the next document closest in meaning (:mod:`.vectors`, when the index
holds vectors) and the next closest by n-grams, skipping any already taken (:func:`fused`). The
vectors find the same subject in another language; the n-grams find exact names, codes and ids,
and are all there is for a document without a vector. Measured on the labelled set, taking turns
kept every pair the vectors found first, where reciprocal-rank fusion lost most of them to the
n-grams' same-language neighbours.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from wiki_assets.engine.prompting.candidate import Candidate
from wiki_assets.engine.related import vectors
from wiki_assets.engine.related.query import Found, most_similar_many
from wiki_assets.engine.related.storage import chunks, get_meta

Answer = tuple[int, int, int, str]  # (document id, generation, k, encoded answer)


def encode(found: Found) -> str:
    return ",".join(f"{other}:{score!r}" for other, score in found)


def decode(found: str) -> Found:
    """``answers.found`` (``id:score,...``) as ``(id, score)`` pairs."""
    pairs = [pair.split(":") for pair in found.split(",")] if found else []
    return [(int(other), float(score)) for other, score in pairs]


def answered(
    db: sqlite3.Connection, docs: Sequence[int], generation: int, k: int
) -> dict[int, Found]:
    """The stored answers among ``docs`` still valid for this index and at least ``k`` long."""
    return {
        doc: decode(answer)[:k]
        for doc, answer in _valid_answers(db, "doc, found", docs, generation, k)
    }


def _valid_answers(
    db: sqlite3.Connection, columns: str, docs: Sequence[int], generation: int, k: int
) -> Iterator[tuple[Any, ...]]:
    """``columns`` of the stored answers among ``docs`` still valid for this index (its
    ``generation``) and at least ``k`` long."""
    for chunk in chunks(list(docs)):
        marks = ",".join("?" * len(chunk))
        yield from db.execute(
            f"SELECT {columns} FROM answers WHERE doc IN ({marks}) AND generation = ? AND k >= ?",
            [*chunk, generation, k],
        )


def find(
    db: sqlite3.Connection, paths: Sequence[str], k: int, *, stored: bool = True
) -> tuple[dict[str, int], dict[int, Found], list[Answer]]:
    """The answers of the indexed ``paths`` (in one read transaction of the caller): their ids,
    every answer by id (the stored ones still valid, the others computed together), and the
    computed ones as answers to store. ``stored=False``: the stored answers are not read back
    (only which documents have one), for a caller that wants only the missing ones computed."""
    ids = ids_of(db, paths)
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('docs', 'generation')"))
    generation = int(meta.get("generation", 0))
    if stored:
        found = answered(db, list(ids.values()), generation, k)
    else:
        have = _valid_answers(db, "doc", list(ids.values()), generation, k)
        found = {doc: [] for (doc,) in have}
    missing = [doc for doc in ids.values() if doc not in found]
    if not missing:
        return ids, found, []
    by_grams = most_similar_many(db, missing, int(meta.get("docs", 0)), k)
    by_meaning = vectors.nearest_many(db, missing, k)
    computed = {doc: fused(by_meaning.get(doc, []), by_grams.get(doc, []), k) for doc in missing}
    found.update(computed)
    return ids, found, [(doc, generation, k, encode(pairs)) for doc, pairs in computed.items()]


def fused(by_meaning: Found, by_grams: Found, k: int) -> Found:
    """The first ``k`` of the two rankings taken in turn (meaning first), each document once."""
    out: Found = []
    taken: set[int] = set()
    for pair in _alternate(by_meaning, by_grams):
        if pair[0] not in taken:
            taken.add(pair[0])
            out.append(pair)
            if len(out) == k:
                break
    return out


def _alternate(first: Found, second: Found) -> Iterator[tuple[int, float]]:
    for at in range(max(len(first), len(second))):
        yield from first[at : at + 1]
        yield from second[at : at + 1]


def describe(db: sqlite3.Connection, found: dict[int, Found]) -> dict[int, list[Candidate]]:
    """Each answer's documents as candidates (any since removed are left out), in one read."""
    described = _described(db, sorted({other for pairs in found.values() for other, _ in pairs}))
    return {
        doc: [Candidate(*described[other], score) for other, score in pairs if other in described]
        for doc, pairs in found.items()
    }


def stored(db: sqlite3.Connection, paths: Sequence[str], k: int) -> dict[str, list[Candidate]]:
    """The still-valid stored answers among ``paths`` (in one read transaction of the caller)."""
    ids = ids_of(db, paths)
    described = describe(db, answered(db, list(ids.values()), get_meta(db, "generation"), k))
    return {path: described[doc] for path, doc in ids.items() if doc in described}


def ids_of(db: sqlite3.Connection, paths: Sequence[str]) -> dict[str, int]:
    """The document ids of the indexed ``paths``."""
    ids: dict[str, int] = {}
    for chunk in chunks(list(paths)):
        marks = ",".join("?" * len(chunk))
        ids.update(db.execute(f"SELECT path, id FROM docs WHERE path IN ({marks})", chunk))
    return ids


def save(db: sqlite3.Connection, answers: list[Answer]) -> None:
    """Store answers (inside the caller's write transaction), replacing older ones."""
    db.executemany(
        "INSERT INTO answers (doc, generation, k, found) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(doc) DO UPDATE SET generation = excluded.generation,"
        " k = excluded.k, found = excluded.found",
        answers,
    )


def _described(db: sqlite3.Connection, ids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
    described: dict[int, tuple[str, str, str]] = {}
    for chunk in chunks(ids):
        marks = ",".join("?" * len(chunk))
        for other, path, title, line in db.execute(
            f"SELECT id, path, title, line FROM docs WHERE id IN ({marks})", chunk
        ):
            described[other] = (path, title, line)
    return described
