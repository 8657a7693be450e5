"""The index's SQLite file: its tables, transactions and counters.

Tables:

``docs(id, path UNIQUE, title, line, content_hash, norm, grams, weights)``
    One row per indexed document; ``id`` is a compact integer key so posting lists do not repeat
    paths. Ids are never reused (``AUTOINCREMENT``), and a changed document gets a new one: a
    posting list then never credits an old text's grams to a live id. ``grams`` are the
    document's features (its ``features_per_doc`` most salient grams), sorted and joined by
    newlines (a normalized gram holds letters, digits and spaces only); ``weights`` their BM25
    saturating term frequencies ``tf * (k1 + 1) / (tf + k1)`` (``k1 = 1.2``), float64, in the
    same order. A query reads its document's features from here, in one row.
``lists(gram, segment, ids, weights)``
    The inverted index, gram-major: per gram and segment, the ids (int32) of the segment's
    documents posting the gram, ascending, and their weights divided by the document's norm
    (float32), as blobs a query reads whole. See :mod:`~wiki_assets.engine.related.segments`.
``segments(first, docs, grams)``
    One row per segment of ``lists``: the first document id it holds (segments hold disjoint,
    ascending ranges of ids, so their order is the ids' order), how many documents it held when
    it was written, and its grams, sorted and newline-joined (what merging it reads; not kept
    for the first segment, which is only ever merged with all the others).
``df(gram, n, seen)``
    ``n``: exactly how many live documents post ``gram`` (maintained on update and remove); it
    gives the query-time idf and decides which grams are too common to query. ``seen``: how many
    documents ever indexed contained ``gram`` at all (not only as a feature); it only steers which
    grams a document keeps.
``answers(doc, generation, k, found)``
    The last candidates answer for each document (``id:score`` pairs), valid while the index's
    ``generation`` is unchanged: re-summarizing an unchanged corpus (a tuning run, a new prompt)
    asks again for the same candidates, and a lookup costs far less than the query.
``vectors(doc, script, vec)``, ``vector_groups(script, n, total)``, ``vector_model(model, dim)``
    Candidates by meaning (:mod:`~wiki_assets.engine.related.vectors`): a document's embedding
    (float16) and the script it is written in; per script the sum (float64) and count of its
    vectors; the one embedding model the vectors come from, and their dimension.
``meta(key, value)``
    Counters: indexed documents (``docs``), documents counted in ``seen`` (``seen_docs``), the
    schema version, the ``generation`` (bumped by every change to the indexed documents), and
    ``dead``: documents removed or changed since the segments were last merged into one, whose
    ids the lists still hold.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any

SCHEMA_VERSION = 3
SQL_CHUNK = 500  # bound parameters per statement, well under SQLite's limit

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
    norm REAL NOT NULL,
    grams TEXT NOT NULL,
    weights BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS lists (
    gram TEXT NOT NULL,
    segment INTEGER NOT NULL,
    ids BLOB NOT NULL,
    weights BLOB NOT NULL,
    PRIMARY KEY (gram, segment)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (
    first INTEGER PRIMARY KEY,
    docs INTEGER NOT NULL,
    grams TEXT NOT NULL
);
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

VECTOR_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    doc INTEGER PRIMARY KEY,
    script TEXT NOT NULL,
    vec BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS vector_groups (
    script TEXT PRIMARY KEY,
    n INTEGER NOT NULL,
    total BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vector_model (
    model TEXT NOT NULL,
    dim INTEGER NOT NULL
);
"""
VECTOR_TABLES = ("vectors", "vector_groups", "vector_model")
# Every table an index of any schema version had: another version's are all dropped.
TABLES = (
    "meta",
    "docs",
    "postings",
    "packed",
    "lists",
    "segments",
    "answers",
    "df",
    *VECTOR_TABLES,
)


def create(db: sqlite3.Connection) -> None:
    """Create the tables; an index of another schema version is dropped and started afresh (it is
    derived from the documents alone: the next update indexes them again)."""
    with Transaction(db):
        existing = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        version = get_meta(db, "schema") if "meta" in existing else SCHEMA_VERSION
        if version not in (0, SCHEMA_VERSION):
            for table in TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in (SCHEMA + VECTOR_SCHEMA).split(";"):
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
        if exc_type:
            rollback(self._db)
            return
        try:
            self._db.execute("COMMIT")
        except BaseException:
            rollback(self._db)
            raise


def rollback(db: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not ended it itself (a full disk does): a
    ROLLBACK without one would raise ``cannot rollback - no transaction is active`` over the
    error that ended it."""
    if db.in_transaction:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
