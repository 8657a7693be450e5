"""The index's SQLite file: its tables, transactions and counters.

Tables:

``docs(id, path UNIQUE, title, line, content_hash, norm)``
    One row per indexed document; ``id`` is a compact integer key so postings do not repeat paths.
    Ids are never reused (``AUTOINCREMENT``), and a changed document gets a new one: the packed
    lists then never credit an old text's grams to a live id.
``postings(gram, doc, weight)``
    The inverted index, clustered on ``(gram, doc)``, with a covering index on ``doc``. A document
    posts only its ``features_per_doc`` most salient grams; ``weight`` is BM25's saturating term
    frequency ``tf * (k1 + 1) / (tf + k1)`` with ``k1 = 1.2``.
``packed(gram, ids, weights)``
    The posting lists of every document with an id up to ``meta.packed_upto``, one row per gram:
    the document ids (int32) and their weights divided by the document's norm (float32), as
    blobs a query reads whole. Rebuilt by :func:`~wiki_assets.engine.related.packed.repack`.
``df(gram, n, seen)``
    ``n``: exactly how many documents post ``gram`` (maintained on update and remove); it gives the
    query-time idf and decides which grams are too common to query. ``seen``: how many documents
    ever indexed contained ``gram`` at all (not only as a feature); it only steers which grams a
    document keeps.
``answers(doc, generation, k, found)``
    The last candidates answer for each document (``id:score`` pairs), valid while the index's
    ``generation`` is unchanged: re-summarizing an unchanged corpus (a tuning run, a new prompt)
    asks again for the same candidates, and a lookup costs far less than the query.
``meta(key, value)``
    Counters: indexed documents (``docs``), documents counted in ``seen`` (``seen_docs``), the
    schema version, the ``generation`` (bumped by every change to the indexed documents), and the
    packed lists' ``packed_upto``, ``packed_docs`` and ``packed_dead`` (documents removed or
    changed since they were packed).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any

SCHEMA_VERSION = 2
SQL_CHUNK = 500  # bound parameters per statement, well under SQLite's limit

TABLES = ("meta", "docs", "postings", "packed", "answers", "df")
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    line TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    norm REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS postings (
    gram TEXT NOT NULL,
    doc INTEGER NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (gram, doc)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_by_doc ON postings (doc, weight);
CREATE TABLE IF NOT EXISTS packed (
    gram TEXT PRIMARY KEY,
    ids BLOB NOT NULL,
    weights BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answers (
    doc INTEGER PRIMARY KEY,
    generation INTEGER NOT NULL,
    k INTEGER NOT NULL,
    found TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS df (
    gram TEXT PRIMARY KEY,
    n INTEGER NOT NULL DEFAULT 0,
    seen INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""


def create(db: sqlite3.Connection) -> None:
    """Create the tables; an index of another schema version is dropped and started afresh (it is
    derived from the documents alone: the next update indexes them again)."""
    with Transaction(db):
        existing = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        version = get_meta(db, "schema") if "meta" in existing else SCHEMA_VERSION
        if version not in (0, SCHEMA_VERSION):
            for table in TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        set_meta(db, "schema", SCHEMA_VERSION)


def get_meta(db: sqlite3.Connection, key: str) -> int:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return int(row[0]) if row else 0


def set_meta(db: sqlite3.Connection, key: str, value: int) -> None:
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def add_meta(db: sqlite3.Connection, key: str, delta: int) -> None:
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
        (key, delta),
    )


def chunks(items: Sequence[Any], size: int = SQL_CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on error); joins an open transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._owner = False

    def __enter__(self) -> None:
        if not self._db.in_transaction:
            self._db.execute("BEGIN IMMEDIATE")
            self._owner = True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._owner:
            return
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
