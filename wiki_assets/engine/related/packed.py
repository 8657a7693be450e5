"""Packed posting lists: every gram's documents and weights as two blobs a query reads whole.

A candidates query sums, for each of its grams, the weights of every document posting that gram.
Read row by row from ``postings`` that is thousands of rows per query, which SQLite joins and
groups at about a microsecond a row; read as one blob per gram it is a few dozen rows, and numpy
adds them up. The packed lists are a snapshot: documents indexed after it (ids above
``packed_upto``) are read from ``postings``, and documents removed or changed since (a changed
document gets a new id) are dropped when the candidates are described. The snapshot is rebuilt
when those two together pass :data:`REPACK_SHARE` of it (and :data:`REPACK_MIN` documents), so
every posting is packed a bounded number of times however the corpus grows.
"""

from __future__ import annotations

import itertools
import operator
import sqlite3
from collections.abc import Sequence

import numpy as np

from wiki_assets.engine.related.storage import chunks, get_meta, set_meta

REPACK_MIN = 256
"""Documents outside the snapshot (new, removed or changed) below which it is never rebuilt."""
REPACK_SHARE = 0.1
"""...and the share of the snapshot's documents they must reach for a rebuild."""

IDS = np.dtype("<i4")
WEIGHTS = np.dtype("<f4")
_INSERT = "INSERT INTO packed (gram, ids, weights) VALUES (?, ?, ?)"


def stale(db: sqlite3.Connection) -> bool:
    """Whether enough has changed since the last snapshot to rebuild it."""
    upto = get_meta(db, "packed_upto")
    (newer,) = db.execute("SELECT count(*) FROM docs WHERE id > ?", (upto,)).fetchone()
    outside = int(newer) + get_meta(db, "packed_dead")
    return outside >= max(REPACK_MIN, REPACK_SHARE * get_meta(db, "packed_docs"))


def repack(db: sqlite3.Connection) -> None:
    """Rebuild the snapshot from ``postings`` (inside the caller's write transaction).

    Streams the postings in ``(gram, doc)`` order, so one gram's list is in memory at a time.
    """
    (upto,) = db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()
    db.execute("DELETE FROM packed")
    batch: list[tuple[str, bytes, bytes]] = []
    cursor = db.execute(
        "SELECT p.gram, p.doc, p.weight / max(d.norm, 1e-9)"
        " FROM postings p JOIN docs d ON d.id = p.doc ORDER BY p.gram, p.doc"
    )
    writer = db.cursor()
    for gram, group in itertools.groupby(cursor, key=operator.itemgetter(0)):
        postings = list(group)
        ids = np.fromiter(map(operator.itemgetter(1), postings), IDS, len(postings))
        weights = np.fromiter(map(operator.itemgetter(2), postings), WEIGHTS, len(postings))
        batch.append((gram, ids.tobytes(), weights.tobytes()))
        if len(batch) >= 1024:
            writer.executemany(_INSERT, batch)
            batch = []
    writer.executemany(_INSERT, batch)
    (docs,) = db.execute("SELECT count(*) FROM docs").fetchone()
    set_meta(db, "packed_upto", int(upto))
    set_meta(db, "packed_docs", int(docs))
    set_meta(db, "packed_dead", 0)


def posting_lists(
    db: sqlite3.Connection, grams: Sequence[str], upto: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every posting of ``grams``, gram after gram: how many each gram has, then all their
    document ids and weights (``weight / norm``, as float64) end to end. A gram's list is the
    snapshot's, then the postings of documents indexed after it (ids above ``upto``), in id
    order either way."""
    ids: dict[str, bytes] = {}
    weights: dict[str, bytes] = {}
    for chunk in chunks(list(grams)):
        marks = ",".join("?" * len(chunk))
        for gram, gram_ids, gram_weights in db.execute(
            f"SELECT gram, ids, weights FROM packed WHERE gram IN ({marks})", chunk
        ):
            ids[gram], weights[gram] = gram_ids, gram_weights
    (newest,) = db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()
    if newest > upto:
        _add_newer(db, grams, upto, ids, weights)
    # One blob of all the lists and one conversion, not one per gram: a batch of documents asks
    # for a few thousand grams.
    lengths = np.array([len(ids.get(gram, b"")) // IDS.itemsize for gram in grams], np.int64)
    all_ids = np.frombuffer(b"".join([ids.get(gram, b"") for gram in grams]), IDS)
    all_weights = np.frombuffer(b"".join([weights.get(gram, b"") for gram in grams]), WEIGHTS)
    return lengths, all_ids, all_weights.astype(np.float64)


def _add_newer(
    db: sqlite3.Connection,
    grams: Sequence[str],
    upto: int,
    ids: dict[str, bytes],
    weights: dict[str, bytes],
) -> None:
    """Append the postings of documents indexed after the snapshot to the lists' blobs, their
    weights rounded to float32 as if packed, so an answer does not depend on when it was packed."""
    for chunk in chunks(list(grams)):
        marks = ",".join("?" * len(chunk))
        newer = db.execute(
            "SELECT p.gram, p.doc, p.weight / max(d.norm, 1e-9) FROM postings p"
            f" JOIN docs d ON d.id = p.doc WHERE p.gram IN ({marks}) AND p.doc > ?"
            " ORDER BY p.gram, p.doc",
            [*chunk, upto],
        ).fetchall()
        for gram, group in itertools.groupby(newer, key=operator.itemgetter(0)):
            postings = list(group)
            new_ids = np.fromiter(map(operator.itemgetter(1), postings), IDS, len(postings))
            new_weights = np.fromiter(map(operator.itemgetter(2), postings), WEIGHTS, len(postings))
            ids[gram] = ids.get(gram, b"") + new_ids.tobytes()
            weights[gram] = weights.get(gram, b"") + new_weights.tobytes()
