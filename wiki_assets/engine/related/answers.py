"""Candidates answers: the :class:`Candidate` a caller gets, and the answers the index stores.

A query's answer (``id:score`` pairs, best first) is stored for its document with the index's
``generation``; it stays valid until the indexed documents change, so a re-run over an unchanged
corpus looks its candidates up instead of querying again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from wiki_assets.engine.related.query import Found
from wiki_assets.engine.related.storage import chunks, get_meta

Answer = tuple[int, int, int, str]  # (document id, generation, k, encoded answer)


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str  # the document's path relative to the synced root (its identity)
    title: str
    line: str  # one line describing it (first meaningful sentence, <= 160 chars)
    score: float  # cosine similarity to the query document, in (0, 1]


def encode(found: Found) -> str:
    return ",".join(f"{other}:{score!r}" for other, score in found)


def decode(found: str) -> Found:
    """``answers.found`` (``id:score,...``) as ``(id, score)`` pairs."""
    pairs = [pair.split(":") for pair in found.split(",")] if found else []
    return [(int(other), float(score)) for other, score in pairs]


def answered(db: sqlite3.Connection, doc: int, generation: int, k: int) -> Found | None:
    """A stored answer still valid for this index and at least ``k`` long, or None."""
    row = db.execute(
        "SELECT found FROM answers WHERE doc = ? AND generation = ? AND k >= ?",
        (doc, generation, k),
    ).fetchone()
    return None if row is None else decode(row[0])[:k]


def describe(db: sqlite3.Connection, found: Found) -> list[Candidate]:
    """The answer's documents as candidates (any since removed are left out)."""
    described = _described(db, [other for other, _ in found])
    return [Candidate(*described[other], score) for other, score in found if other in described]


def stored(db: sqlite3.Connection, paths: Sequence[str], k: int) -> dict[str, list[Candidate]]:
    """The still-valid stored answers among ``paths`` (in one read transaction of the caller)."""
    generation = get_meta(db, "generation")
    found: dict[str, Found] = {}
    for chunk in chunks(list(paths)):
        marks = ",".join("?" * len(chunk))
        for path, answer in db.execute(
            "SELECT d.path, a.found FROM docs d JOIN answers a ON a.doc = d.id"
            f" WHERE d.path IN ({marks}) AND a.generation = ? AND a.k >= ?",
            [*chunk, generation, k],
        ):
            found[path] = decode(answer)[:k]
    described = _described(db, sorted({other for pairs in found.values() for other, _ in pairs}))
    return {
        path: [Candidate(*described[o], score) for o, score in pairs if o in described]
        for path, pairs in found.items()
    }


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
