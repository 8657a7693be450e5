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
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every posting of ``grams`` as ``(document ids, weight / norm)`` per gram: the snapshot's
    list, then the postings of documents indexed after it (ids above ``upto``)."""
    lists: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for chunk in chunks(list(grams)):
        marks = ",".join("?" * len(chunk))
        for gram, ids, weights in db.execute(
            f"SELECT gram, ids, weights FROM packed WHERE gram IN ({marks})", chunk
        ):
            lists[gram] = (
                np.frombuffer(ids, IDS),
                np.frombuffer(weights, WEIGHTS).astype(np.float64),
            )
    (newest,) = db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()
    if newest <= upto:
        return lists
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
            ids = np.fromiter(map(operator.itemgetter(1), postings), IDS, len(postings))
            # Rounded to float32 as if packed, so an answer does not depend on when it was packed.
            weights = np.fromiter(map(operator.itemgetter(2), postings), WEIGHTS, len(postings))
            old_ids, old_weights = lists.get(gram, (ids[:0], weights[:0].astype(np.float64)))
            lists[gram] = (
                np.concatenate([old_ids, ids]),
                np.concatenate([old_weights, weights.astype(np.float64)]),
            )
    return lists
