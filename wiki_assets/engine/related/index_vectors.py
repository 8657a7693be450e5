"""The index's vectors as its callers use them: ``RelatedIndex.vectors``
(:class:`IndexVectors`), on the index's own connections (:mod:`.vectors` holds what they do)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence

import numpy as np

from wiki_assets.engine.related import vectors
from wiki_assets.engine.related.storage import Transaction, chunks
from wiki_assets.engine.related.stored_answers import ids_of

Near = list[tuple[str, float]]  # (path, centred cosine), best first


class IndexVectors:
    """Writes go through the index's connection under its lock; :meth:`nearest` reads through
    the calling thread's own connection, as candidates queries do."""

    def __init__(
        self,
        db: sqlite3.Connection,
        lock: threading.RLock,
        reader: Callable[[], sqlite3.Connection],
    ) -> None:
        self._db = db
        self._lock = lock
        self._reader = reader

    def use_model(self, name: str) -> str | None:
        """Make ``name`` the model of the index's vectors; returns why every vector must be
        embedded again, if it must."""
        with self._lock, Transaction(self._db):
            return vectors.use_model(self._db, name)

    def missing(self, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` documents without a vector, ids above ``after``: ``(id, path)``."""
        with self._lock:
            return vectors.missing(self._db, after, limit)

    def count_missing(self) -> int:
        """Indexed documents without a vector."""
        with self._lock:
            return vectors.count_missing(self._db)

    def missing_among(self, paths: Sequence[str]) -> list[tuple[int, str]]:
        """The indexed documents of ``paths`` without a vector, in the order of ``paths``:
        ``(id, path)``."""
        with self._lock:
            ids = ids_of(self._db, paths)
            have: set[int] = set()
            for chunk in chunks(list(ids.values())):
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT doc FROM vectors WHERE doc IN ({marks})", chunk)
                have.update(row[0] for row in rows)
        return [(ids[path], path) for path in paths if path in ids and ids[path] not in have]

    def store(
        self, name: str, endpoint: str, docs: Sequence[tuple[int, str]], array: np.ndarray
    ) -> None:
        """Store the vectors of ``docs`` (``(id, script)``) that ``name`` embedded at
        ``endpoint``."""
        with self._lock, Transaction(self._db):
            vectors.store(self._db, name, endpoint, docs, array)

    def nearest(self, paths: Sequence[str], k: int) -> dict[str, Near]:
        """The ``k`` documents nearest in meaning to each of ``paths`` that has a vector, best
        first (:func:`~.vectors.nearest_many`), in one snapshot."""
        db = self._reader()
        db.execute("BEGIN")
        try:
            ids = ids_of(db, paths)
            found = vectors.nearest_many(db, list(ids.values()), k)
            others = sorted({other for near in found.values() for other, _ in near})
            named: dict[int, str] = {}
            for chunk in chunks(others):
                marks = ",".join("?" * len(chunk))
                named.update(db.execute(f"SELECT id, path FROM docs WHERE id IN ({marks})", chunk))
        finally:
            db.execute("COMMIT")
        return {
            path: [(named[other], score) for other, score in found[doc] if other in named]
            for path, doc in ids.items()
            if doc in found
        }
