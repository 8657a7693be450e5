"""Per-document state, recorded durably the moment a result returns.

SQLite in WAL mode inside the wiki's hidden state folder: a commit per result costs well under a
millisecond, and a run killed at any point keeps every summary that had already returned, so the
next run writes those pages without asking a model again.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

JOURNAL_FILE = "journal.sqlite"  # in the wiki's state folder

SUMMARIZED = "summarized"  # the model answered; the page is not on disk yet
WRITTEN = "written"  # the page is on disk
FAILED = "failed"

_COLUMNS = "path, collection, content_hash, fingerprint, status, page, model, result, reason"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    path TEXT PRIMARY KEY,
    collection TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status TEXT NOT NULL,
    page TEXT,
    model TEXT,
    result TEXT,
    reason TEXT,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_by_collection ON documents (collection);
CREATE INDEX IF NOT EXISTS documents_by_page ON documents (page);
-- Related-document links of each summarized document (source -> target, both source paths).
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (source, target)
);
CREATE INDEX IF NOT EXISTS links_by_target ON links (target);
"""


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    collection: str
    content_hash: str
    fingerprint: str
    status: str
    page: str | None
    model: str | None
    result: dict[str, Any] | None
    reason: str | None


class Journal:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL keeps every commit across a process crash (only power loss may drop the last one).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str) -> Entry | None:
        row = self._db.execute(
            f"SELECT {_COLUMNS} FROM documents WHERE path = ?",
            (path,),
        ).fetchone()
        return _entry(row) if row else None

    def page_owner(self, page: str) -> str | None:
        row = self._db.execute("SELECT path FROM documents WHERE page = ?", (page,)).fetchone()
        return row[0] if row else None

    def paths_in(self, collections: Iterable[str]) -> Iterator[str]:
        for collection in collections:
            rows = self._db.execute(
                "SELECT path FROM documents WHERE collection = ? ORDER BY path", (collection,)
            )
            yield from (row[0] for row in rows)

    def collections(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT DISTINCT collection FROM documents")}

    def record_summary(
        self,
        *,
        path: str,
        collection: str,
        content_hash: str,
        fingerprint: str,
        page: str,
        model: str,
        result: dict[str, Any],
    ) -> None:
        """The result and its links, in one transaction: committed before the page is written."""
        with self._transaction():
            self._upsert(
                path, collection, content_hash, fingerprint, SUMMARIZED, page, model, result
            )
            self._db.execute("DELETE FROM links WHERE source = ?", (path,))
            self._db.executemany(
                "INSERT OR REPLACE INTO links (source, target, reason) VALUES (?, ?, ?)",
                [(path, link["path"], link["reason"]) for link in result.get("related", [])],
            )

    def links_from(self, path: str) -> list[tuple[str, str]]:
        """(target, reason) of a document's related links, in the order the model gave them."""
        rows = self._db.execute(
            "SELECT target, reason FROM links WHERE source = ? ORDER BY rowid", (path,)
        )
        return [(row[0], row[1]) for row in rows]

    def links_to(self, path: str) -> list[str]:
        """Documents that link to ``path``: its backlinks."""
        rows = self._db.execute(
            "SELECT source FROM links WHERE target = ? ORDER BY source", (path,)
        )
        return [row[0] for row in rows]

    def pages(self) -> Iterator[Entry]:
        """Every document that has a page (or a result waiting to be written), by path."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM documents WHERE status IN (?, ?) ORDER BY path",
            (SUMMARIZED, WRITTEN),
        )
        yield from (_entry(row) for row in rows)

    def record_failure(
        self, *, path: str, collection: str, content_hash: str, fingerprint: str, reason: str
    ) -> None:
        with self._transaction():
            self._upsert(
                path, collection, content_hash, fingerprint, FAILED, None, None, None, reason
            )
            self._db.execute("DELETE FROM links WHERE source = ?", (path,))

    def mark_written(self, paths: Iterable[str]) -> None:
        now = time.time()
        with self._transaction():
            self._db.executemany(
                "UPDATE documents SET status = ?, updated = ? WHERE path = ?",
                [(WRITTEN, now, path) for path in paths],
            )

    def forget(self, paths: Iterable[str]) -> None:
        paths = [(path,) for path in paths]
        with self._transaction():
            self._db.executemany("DELETE FROM documents WHERE path = ?", paths)
            self._db.executemany("DELETE FROM links WHERE source = ?", paths)

    def _upsert(
        self,
        path: str,
        collection: str,
        content_hash: str,
        fingerprint: str,
        status: str,
        page: str | None,
        model: str | None,
        result: dict[str, Any] | None,
        reason: str | None = None,
    ) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO documents"
            " (path, collection, content_hash, fingerprint, status, page, model, result, reason,"
            "  updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                path,
                collection,
                content_hash,
                fingerprint,
                status,
                page,
                model,
                None if result is None else json.dumps(result, ensure_ascii=False),
                reason,
                time.time(),
            ),
        )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # With isolation_level=None the connection autocommits; group bulk updates explicitly.
        self._db.execute("BEGIN")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")


def _entry(row: tuple[Any, ...]) -> Entry:
    *head, result, reason = row  # in the order of _COLUMNS
    return Entry(*head, None if result is None else json.loads(result), reason)
