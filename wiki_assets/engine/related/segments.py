"""The inverted index in segments: every gram's documents and weights as blobs a query reads whole.

A candidates query sums, for each of its grams, the weights of every document posting that gram.
Stored row by row that is thousands of rows per query, and a row per posting to insert when a
document is indexed (a first run inserts a corpus of them); stored as one blob per gram it is a few
dozen rows to read, and numpy adds them up.

Each write of documents (a :meth:`~.index.RelatedIndex.update_many` batch) adds a *segment*: the
posting lists of exactly those documents, one row per gram, built in numpy from the postings the
batch chose. Segments hold disjoint, ascending ranges of document ids, so a gram's list is its
segments' lists end to end, in id order. A document removed or changed (a changed document gets a
new id) stays in its segment's lists until they are merged, and is dropped when the candidates
are described. After each update the segments are merged (:func:`merge_if_due`): all into one
when what lies outside the first (documents in later segments, and documents gone) reaches
:data:`MERGE_SHARE` of it (and :data:`MERGE_MIN` documents), so every posting is merged a bounded
number of times however the corpus grows; else the later ones into one, once there are more than
:data:`MAX_SEGMENTS`, so a query reads a few rows per gram.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wiki_assets.engine.related.storage import SQL_CHUNK, chunks, get_meta, set_meta

MERGE_MIN = 256
"""Documents outside the first segment (in later ones, or gone) below which it is never merged."""
MERGE_SHARE = 0.1
"""...and the share of the first segment's documents they must reach for a merge of them all."""
MAX_SEGMENTS = 8
"""Segments past which the later ones are merged into one (a query reads a row per segment)."""

IDS = np.dtype("<i4")
WEIGHTS = np.dtype("<f4")
"""A list's weights: a posting's weight divided by its document's norm, as float32."""
FEATURE_WEIGHTS = np.dtype("<f8")
"""``docs.weights``: a document's features' tf weights, kept exactly for its queries."""
_INSERT = "INSERT INTO lists (gram, segment, ids, weights) VALUES (?, ?, ?, ?)"


@dataclass(frozen=True, slots=True)
class Postings:
    """The postings of some newly indexed documents, posting by posting: the document's id, the
    gram and its weight divided by the document's norm, rounded to float32 as a list keeps it."""

    docs: np.ndarray  # int64
    grams: list[str]
    weights: np.ndarray  # float32


def write(db: sqlite3.Connection, batch: Sequence[Postings]) -> None:
    """Add a segment holding ``batch`` (documents with ids above every segment's), inside the
    caller's write transaction."""
    docs = np.concatenate([p.docs for p in batch]) if batch else np.zeros(0, np.int64)
    if not len(docs):
        return  # nothing posted: no segment
    grams = [gram for p in batch for gram in p.grams]
    weights = np.concatenate([p.weights for p in batch])
    names = sorted(set(grams))  # a gram's place ranks it as SQLite's BINARY order does
    place = {name: at for at, name in enumerate(names)}
    gram = np.fromiter(map(place.__getitem__, grams), np.int64, len(grams))
    order = np.lexsort((docs, gram))
    first = int(docs.min())
    _insert_lists(db, names, gram[order], docs[order], weights[order], first)
    db.execute("INSERT INTO segments (first, docs) VALUES (?, ?)", (first, len(np.unique(docs))))


def _insert_lists(
    db: sqlite3.Connection,
    names: Sequence[str],
    gram: np.ndarray,
    docs: np.ndarray,
    weights: np.ndarray,
    segment: int,
) -> None:
    """One row per gram of postings sorted by (gram, document): ``gram`` indexes ``names``."""
    starts = np.flatnonzero(np.diff(gram, prepend=-1))
    ends = np.append(starts[1:], len(gram))
    ids = docs.astype(IDS).tobytes()
    weight_bytes = weights.astype(WEIGHTS).tobytes()
    db.executemany(
        _INSERT,
        (
            (names[g], segment, ids[a * 4 : b * 4], weight_bytes[a * 4 : b * 4])
            for g, a, b in zip(gram[starts].tolist(), starts.tolist(), ends.tolist(), strict=True)
        ),
    )


def posting_lists(
    db: sqlite3.Connection, grams: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every posting of ``grams`` (sorted), gram after gram: how many each gram has, then all
    their document ids and weights (``weight / norm``, as float64) end to end, each gram's in id
    order (its segments' lists in order)."""
    rows: list[tuple[str, bytes, bytes]] = []
    for chunk in chunks(list(grams)):
        marks = ",".join("?" * len(chunk))
        rows += db.execute(
            f"SELECT gram, ids, weights FROM lists WHERE gram IN ({marks}) ORDER BY gram, segment",
            chunk,
        ).fetchall()
    if not rows:
        return np.zeros(len(grams), np.int64), np.zeros(0, IDS), np.zeros(0)
    # The rows come in the order of the sorted grams asked for: one blob of all the lists and
    # one conversion, not one per gram (a batch of documents asks for a few thousand grams).
    row_grams, row_ids, row_weights = zip(*rows, strict=True)
    place = {gram: at for at, gram in enumerate(grams)}
    lengths = np.bincount(
        np.fromiter(map(place.__getitem__, row_grams), np.int64, len(rows)),
        weights=np.fromiter(map(len, row_ids), np.int64, len(rows)) // IDS.itemsize,
        minlength=len(grams),
    ).astype(np.int64)
    return (
        lengths,
        np.frombuffer(b"".join(row_ids), IDS),
        np.frombuffer(b"".join(row_weights), WEIGHTS).astype(np.float64),
    )


def forgotten(db: sqlite3.Connection) -> None:
    """A document was removed (or changed): its id stays in the lists until they are merged."""
    set_meta(db, "dead", get_meta(db, "dead") + 1)


def merge_if_due(db: sqlite3.Connection) -> None:
    """Merge the segments as the module docstring says (inside the caller's write transaction)."""
    segments = db.execute("SELECT first, docs FROM segments ORDER BY first").fetchall()
    dead = get_meta(db, "dead")
    if not segments:
        if dead:
            set_meta(db, "dead", 0)
        return
    outside = sum(docs for _, docs in segments[1:]) + dead
    if outside >= max(MERGE_MIN, MERGE_SHARE * segments[0][1]):
        merge(db, segments[0][0])
    elif len(segments) > MAX_SEGMENTS:
        merge(db, segments[1][0])


def merge(db: sqlite3.Connection, start: int) -> None:
    """Merge every segment from the one starting at document ``start`` on into one, without the
    documents that are gone (inside the caller's write transaction). From the first segment on,
    that is every document, and none of those gone is left in the lists.

    The grams are taken :data:`SQL_CHUNK` at a time from a temporary table of the segments'
    grams (in gram order), so memory holds one chunk of lists however large the index is."""
    (first,) = db.execute("SELECT min(first) FROM segments").fetchone()
    whole = first is None or start <= first
    (last,) = db.execute(
        "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'docs'"
    ).fetchone()
    alive = np.zeros(max(0, int(last) - start + 1), bool)  # by id - start
    live = np.fromiter(
        (doc for (doc,) in db.execute("SELECT id FROM docs WHERE id >= ?", (start,))), np.int64
    )
    alive[live - start] = True
    db.execute("DROP TABLE IF EXISTS temp.merging")
    db.execute("CREATE TEMP TABLE merging (gram TEXT PRIMARY KEY) WITHOUT ROWID")
    db.execute(
        "INSERT INTO temp.merging SELECT DISTINCT gram FROM lists WHERE segment >= ?", (start,)
    )
    after = ""  # every gram is longer
    while True:
        names = [
            gram
            for (gram,) in db.execute(
                "SELECT gram FROM temp.merging WHERE gram > ? ORDER BY gram LIMIT ?",
                (after, SQL_CHUNK),
            )
        ]
        if not names:
            break
        after = names[-1]
        marks = ",".join("?" * len(names))
        rows = db.execute(
            f"SELECT gram, ids, weights FROM lists WHERE gram IN ({marks}) AND segment >= ?"
            " ORDER BY gram, segment",
            [*names, start],
        ).fetchall()
        db.execute(f"DELETE FROM lists WHERE gram IN ({marks}) AND segment >= ?", [*names, start])
        place = {name: at for at, name in enumerate(names)}
        row_gram = np.fromiter((place[row[0]] for row in rows), np.int64, len(rows))
        row_ids = [row[1] for row in rows]
        docs = np.frombuffer(b"".join(row_ids), IDS).astype(np.int64)
        weights = np.frombuffer(b"".join([row[2] for row in rows]), WEIGHTS)
        gram = np.repeat(row_gram, [len(blob) // IDS.itemsize for blob in row_ids])
        keep = alive[docs - start] if len(docs) else np.zeros(0, bool)
        if len(docs[keep]):
            _insert_lists(db, names, gram[keep], docs[keep], weights[keep], start)
    db.execute("DROP TABLE temp.merging")
    db.execute("DELETE FROM segments WHERE first >= ?", (start,))
    if len(live):
        db.execute("INSERT INTO segments (first, docs) VALUES (?, ?)", (start, len(live)))
    if whole:
        set_meta(db, "dead", 0)
