"""Fleet-wide worker limits: one model's workers across every run stay under its limit.

Parallel runs (a backfill of many collections, several machines) each drive the same endpoints.
A model that serves 16 requests well does not serve 16 per run, so its limit is held in the state
store as numbered worker leases: a worker takes one before it starts a request and gives it back
when it parks or ends. A lease has an expiry that the holding run renews while it lives, so a run
that is killed (no ``finally`` runs) frees its leases after ``ttl_s`` instead of leaking them.

Leases are taken per worker, not per request: a busy worker keeps its lease from one document to
the next, so the store is touched when a worker starts and stops, not on every request.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid

from wiki_assets.engine.state.store import Db, StateStore

DEFAULT_TTL_S = 60.0

# The persisted names are older than the word "workers": a worker lease is a row of the table
# model_slots, its number the column slot. Stores hold them already; they keep these names.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_slots (
    model TEXT NOT NULL,
    slot INTEGER NOT NULL,
    holder TEXT,
    expires {float},
    PRIMARY KEY (model, slot)
)
"""


class WorkerLeases:
    """This run's worker leases. Thread-safe: calls go through one connection, one at a time."""

    def __init__(self, store: StateStore, ttl_s: float = DEFAULT_TTL_S) -> None:
        self.ttl_s = ttl_s
        self.holder = f"{socket.gethostname()} pid {os.getpid()} {uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._seeded: set[tuple[str, int]] = set()  # (model, limit) whose lease rows exist
        self._db: Db = store.connect()
        self._db.create_tables(_SCHEMA)

    def try_acquire(self, model: str, limit: int) -> int | None:
        """A free lease number below ``limit`` for ``model``, now held by this run; or None when
        ``limit`` workers of that model already hold one, from any run."""
        with self._lock:
            if (model, limit) not in self._seeded:
                # Each lease is a row; its number is what limits, so create them once per model.
                self._db.executemany(
                    "INSERT INTO model_slots (model, slot) VALUES (?, ?) ON CONFLICT DO NOTHING",
                    [(model, slot) for slot in range(limit)],
                )
                self._seeded.add((model, limit))
            with self._db.transaction():
                # SKIP LOCKED: two runs racing for leases each take a different one; none waits.
                lock = " FOR UPDATE SKIP LOCKED" if self._db.dialect == "postgres" else ""
                row = self._db.execute(
                    "SELECT slot FROM model_slots WHERE model = ? AND slot < ?"
                    " AND (holder IS NULL OR expires < {now}) ORDER BY slot LIMIT 1" + lock,
                    (model, limit),
                ).fetchone()
                if row is None:
                    return None
                self._db.execute(
                    "UPDATE model_slots SET holder = ?, expires = {now} + ?"
                    " WHERE model = ? AND slot = ?",
                    (self.holder, self.ttl_s, model, row[0]),
                )
                return int(row[0])

    def release(self, model: str, number: int) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE model_slots SET holder = NULL, expires = NULL"
                " WHERE model = ? AND slot = ? AND holder = ?",
                (model, number, self.holder),
            )

    def renew(self) -> int:
        """Extends every lease this run holds; returns how many it holds."""
        with self._lock:
            cursor = self._db.execute(
                "UPDATE model_slots SET expires = {now} + ? WHERE holder = ?",
                (self.ttl_s, self.holder),
            )
            return int(cursor.rowcount)

    def in_use(self, model: str) -> int:
        """Leases of ``model`` held by any run right now."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM model_slots WHERE model = ? AND holder IS NOT NULL"
                " AND expires >= {now}",
                (model,),
            ).fetchone()
            return int(row[0])

    def close(self) -> None:
        """Frees every lease this run still holds."""
        with self._lock:
            try:
                self._db.execute(
                    "UPDATE model_slots SET holder = NULL, expires = NULL WHERE holder = ?",
                    (self.holder,),
                )
            finally:
                self._db.close()
