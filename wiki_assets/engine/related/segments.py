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
from collections.abc import Iterator, Sequence
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
    db.execute(
        "INSERT INTO segments (first, docs, grams) VALUES (?, ?, ?)",
        (first, len(np.unique(docs)), "\n".join(names)),
    )


def _insert_lists(
    db: sqlite3.Connection,
    names: Sequence[str],
    gram: np.ndarray,
    docs: np.ndarray,
    weights: np.ndarray,
    segment: int,
) -> None:
    """One row per gram of postings sorted by (gram, document): ``gram`` indexes ``names``."""
    if not len(gram):
        return
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

    Grams are merged in gram order, a page of at most :data:`MERGE_BYTES` of lists at a time (a
    common gram's list holds a good share of the corpus), so memory does not grow with the index.
    Merging every segment walks the lists in order; merging the later ones takes their grams
    from ``segments.grams``, so it costs what they hold, not what the first one does."""
    (first,) = db.execute("SELECT min(first) FROM segments").fetchone()
    whole = first is None or start <= first
    (last,) = db.execute(
        "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'docs'"
    ).fetchone()
    live = np.fromiter(
        (doc for (doc,) in db.execute("SELECT id FROM docs WHERE id >= ?", (start,))), np.int64
    )
    alive: np.ndarray | None = None  # by id - start; None: every id from start on is alive
    if len(live) < int(last) - start + 1:
        alive = np.zeros(int(last) - start + 1, bool)
        alive[live - start] = True
    merged: list[str] = []  # the new segment's grams
    sized = _whole_sizes(db) if whole else _later_sizes(db, start)
    for names in _pages(sized):
        marks = ",".join("?" * len(names))
        rows = db.execute(
            f"SELECT gram, ids, weights FROM lists WHERE gram IN ({marks}) AND segment >= ?"
            " ORDER BY gram, segment",
            [*names, start],
        ).fetchall()
        db.execute(f"DELETE FROM lists WHERE gram IN ({marks}) AND segment >= ?", [*names, start])
        merged += _insert_merged(db, names, rows, start, alive)
    db.execute("DELETE FROM segments WHERE first >= ?", (start,))
    if len(live):
        # The first segment's grams are never read: only later segments merge among themselves.
        grams = "" if whole else "\n".join(merged)
        db.execute(
            "INSERT INTO segments (first, docs, grams) VALUES (?, ?, ?)", (start, len(live), grams)
        )
    if whole:
        set_meta(db, "dead", 0)


MERGE_BYTES = 1 << 21
"""Bytes of document ids (four per posting) a merge reads at a time, beside their weights."""


def _whole_sizes(db: sqlite3.Connection) -> Iterator[tuple[str, int]]:
    """Every gram of the lists, in order, with its lists' bytes of ids (SQLite reads a blob's
    length from its row header, not the blob)."""
    after = ""  # every gram is longer
    while True:
        rows = db.execute(
            "SELECT gram, sum(length(ids)) FROM lists WHERE gram > ? GROUP BY gram"
            " ORDER BY gram LIMIT ?",
            (after, SQL_CHUNK),
        ).fetchall()
        if not rows:
            return
        yield from rows
        after = rows[-1][0]


def _later_sizes(db: sqlite3.Connection, start: int) -> Iterator[tuple[str, int]]:
    """The grams of the segments from ``start`` on, in order, with those segments' bytes of ids."""
    names: set[str] = set()
    for (grams,) in db.execute("SELECT grams FROM segments WHERE first >= ?", (start,)):
        names.update(grams.split("\n") if grams else ())
    for chunk in chunks(sorted(names)):
        marks = ",".join("?" * len(chunk))
        yield from db.execute(
            f"SELECT gram, sum(length(ids)) FROM lists WHERE gram IN ({marks}) AND segment >= ?"
            " GROUP BY gram ORDER BY gram",
            [*chunk, start],
        ).fetchall()


def _pages(sized: Iterator[tuple[str, int]]) -> Iterator[list[str]]:
    """``sized`` grams in pages of at most :data:`MERGE_BYTES` (a larger gram alone) and
    :data:`SQL_CHUNK` grams. Each page is taken whole before its grams are merged."""
    page: list[str] = []
    size = 0
    for gram, gram_size in sized:
        if page and (size + gram_size > MERGE_BYTES or len(page) >= SQL_CHUNK):
            yield page
            page, size = [], 0
        page.append(gram)
        size += gram_size
    if page:
        yield page


def _insert_merged(
    db: sqlite3.Connection,
    names: list[str],
    rows: list[tuple[str, bytes, bytes]],
    start: int,
    alive: np.ndarray | None,
) -> list[str]:
    """The merged rows of ``names``: each gram's ``rows`` (in segment order) end to end, without
    the documents ``alive`` says are gone. Returns the grams written (some may have none left)."""
    if alive is None:  # nothing to drop: each gram's blobs end to end
        merged: dict[str, tuple[list[bytes], list[bytes]]] = {}
        for name, list_ids, list_weights in rows:
            parts = merged.setdefault(name, ([], []))
            parts[0].append(list_ids)
            parts[1].append(list_weights)
        db.executemany(
            _INSERT,
            [
                (name, start, b"".join(parts[0]), b"".join(parts[1]))
                for name, parts in merged.items()
            ],
        )
        return list(merged)
    place = {name: at for at, name in enumerate(names)}
    row_gram = np.fromiter((place[row[0]] for row in rows), np.int64, len(rows))
    row_ids = [row[1] for row in rows]
    docs = np.frombuffer(b"".join(row_ids), IDS)
    weights = np.frombuffer(b"".join([row[2] for row in rows]), WEIGHTS)
    gram = np.repeat(row_gram, [len(blob) // IDS.itemsize for blob in row_ids])
    keep = alive[docs - start]
    _insert_lists(db, names, gram[keep], docs[keep], weights[keep], start)
    return [names[at] for at in np.unique(gram[keep]).tolist()]
