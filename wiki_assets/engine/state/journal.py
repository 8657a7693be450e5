"""Per-document state, recorded durably the moment a result returns.

Every result is committed (with its links) before its page is written, so a run killed at any point
keeps every summary that had already returned, and the next run writes those pages without asking a
model again. The tables live in the state store: SQLite in WAL mode in the wiki's state folder (a
commit costs well under a millisecond), or PostgreSQL when several machines share the wiki.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from wiki_assets.engine.quality.sentences import SentenceCheck
from wiki_assets.engine.state import meaning_links, page_events
from wiki_assets.engine.state.entries import (
    BARE_COLUMNS,
    COLUMNS,
    FAILED,
    NO_TEXT,
    RESULT_AT,
    SUMMARIZED,
    TABLE_COLUMNS,
    UPSERT,
    WRITTEN,
    Entry,
    from_row,
    stored_json,
    to_row,
)
from wiki_assets.engine.state.meaning_links import MEANING, MODEL, MeaningLinks
from wiki_assets.engine.state.page_events import PageHistory
from wiki_assets.engine.state.store import JOURNAL_FILE, Db, StateStore

__all__ = ["FAILED", "JOURNAL_FILE", "NO_TEXT", "SUMMARIZED", "WRITTEN", "Entry", "Journal"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    {documents_columns}
);
CREATE INDEX IF NOT EXISTS documents_by_collection ON documents (collection);
CREATE INDEX IF NOT EXISTS documents_by_page ON documents (page);
-- Related-document links of each summarized document (source -> target, both source paths).
CREATE TABLE IF NOT EXISTS links (
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    reason TEXT NOT NULL,{link_order_column}
    PRIMARY KEY (source, target)
);
CREATE INDEX IF NOT EXISTS links_by_target ON links (target);
"""


_IN_CHUNK = 500  # paths per ``IN (...)`` list, well under SQLite's bound-parameter limit


class Journal:
    def __init__(self, store: StateStore) -> None:
        self._db: Db = store.connect()
        sqlite = self._db.dialect == "sqlite"
        # Links keep the model's order: SQLite's rowid does that; PostgreSQL needs a sequence.
        self._link_order = "rowid" if sqlite else "seq"
        history_is_new = not self._db.has_table(page_events.TABLE)
        self._db.create_tables(
            _SCHEMA.replace("{documents_columns}", TABLE_COLUMNS).replace(
                "{link_order_column}", "" if sqlite else "\n    seq BIGSERIAL,"
            )
            + page_events.schema(self._db.dialect)
            + meaning_links.SCHEMA
        )
        for column, ddl in page_events.ADDED_COLUMNS.items():
            self._db.add_column(page_events.TABLE, column, ddl)
        self._db.add_column("links", *meaning_links.KIND_COLUMN)
        self.history = PageHistory(self._db)  # appended to with the journal changes it records
        self.by_meaning = MeaningLinks(self._db)  # the links by meaning, and the pages due them
        if history_is_new:
            # A store from before the history: what each page says now is its starting point.
            # (Two runs opening such a store at once may both record it; one more "existing"
            # event changes nothing a digest shows.)
            with self._db.transaction():
                self.history.record_existing()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, path: str) -> Entry | None:
        row = self._db.execute(
            f"SELECT {COLUMNS} FROM documents WHERE path = ?",
            (path,),
        ).fetchone()
        return from_row(row) if row else None

    def get_many(self, paths: Sequence[str], *, results: bool = True) -> dict[str, Entry]:
        """:meth:`get` of each of ``paths`` that has an entry, in a few queries; with
        ``results`` False, each without its result (None: for a caller that reads none)."""
        found: dict[str, Entry] = {}
        columns = COLUMNS if results else BARE_COLUMNS
        for start in range(0, len(paths), _IN_CHUNK):
            chunk = list(paths[start : start + _IN_CHUNK])
            marks = ",".join("?" * len(chunk))
            for row in self._db.execute(
                f"SELECT {columns} FROM documents WHERE path IN ({marks})", chunk
            ):
                found[row[0]] = from_row(row)
        return found

    def page_owner(self, page: str) -> str | None:
        row = self._db.execute("SELECT path FROM documents WHERE page = ?", (page,)).fetchone()
        return row[0] if row else None

    def paths_in(self, collections: Iterable[str]) -> Iterator[str]:
        for collection in collections:
            rows = self._db.execute(
                "SELECT path FROM documents WHERE collection = ? ORDER BY path", (collection,)
            )
            yield from (row[0] for row in rows)

    def failures(self, collections: Iterable[str]) -> list[Entry]:
        """The documents of ``collections`` whose last attempt failed (with its reason), by path."""
        found: list[Entry] = []
        for collection in sorted(set(collections)):
            rows = self._db.execute(
                f"SELECT {COLUMNS} FROM documents WHERE collection = ? AND status = ? "
                "ORDER BY path",
                (collection, FAILED),
            )
            found += (from_row(row) for row in rows)
        return found

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
        entry = Entry(path, collection, content_hash, fingerprint, SUMMARIZED, page, model, result)
        self.record_summaries([entry])

    def record_summaries(self, entries: Sequence[Entry]) -> list[str]:
        """Several results and their links in one transaction (one commit for all); each
        result's JSON text as journaled, in order (for :meth:`mark_written`'s ``journaled``)."""
        assert all(entry.result is not None for entry in entries)
        now = time.time()
        # Encoded before the transaction: the write lock is held for the statements alone.
        rows = [to_row(_summarized(entry), now) for entry in entries]
        with self._db.transaction():
            self._db.executemany(UPSERT, rows)
            paths = [(entry.path,) for entry in entries]
            self._db.executemany("DELETE FROM links WHERE source = ?", paths)
            self._db.executemany(
                "INSERT INTO links (source, target, reason) VALUES (?, ?, ?)"
                " ON CONFLICT (source, target) DO UPDATE SET reason = excluded.reason",
                [
                    (entry.path, link["path"], link["reason"])
                    for entry in entries
                    for link in (entry.result or {}).get("related", [])
                ],
            )
        return [row[RESULT_AT] for row in rows]

    def links_from(self, path: str) -> list[tuple[str, str]]:
        """(target, reason) of a document's related links, in the order the model gave them
        (its links by meaning: :attr:`by_meaning`)."""
        rows = self._db.execute(
            f"SELECT target, reason FROM links WHERE source = ? AND kind = '{MODEL}'"
            f" ORDER BY {self._link_order}",
            (path,),
        )
        return [(row[0], row[1]) for row in rows]

    def links_of(
        self, paths: Sequence[str]
    ) -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[str]], dict[str, list[str]]]:
        """:meth:`links_from`, :meth:`links_to` and the links by meaning of many documents in a
        few queries (a flush renders hundreds of pages): ``(links from, backlinks, links by
        meaning)``, keyed by path, absent when none."""
        from_: dict[str, list[tuple[str, str]]] = {}
        to: dict[str, list[str]] = {}
        by_meaning: dict[str, list[str]] = {}
        for start in range(0, len(paths), _IN_CHUNK):
            chunk = list(paths[start : start + _IN_CHUNK])
            marks = ",".join("?" * len(chunk))
            for source, target, reason, kind in self._db.execute(
                f"SELECT source, target, reason, kind FROM links WHERE source IN ({marks})"
                f" ORDER BY source, {self._link_order}",
                chunk,
            ):
                if kind == MEANING:
                    by_meaning.setdefault(source, []).append(target)
                else:
                    from_.setdefault(source, []).append((target, reason))
            for source, target in self._db.execute(
                f"SELECT source, target FROM links WHERE target IN ({marks})"
                " ORDER BY target, source",
                chunk,
            ):
                to.setdefault(target, []).append(source)
        return from_, to, by_meaning

    def links_to(self, path: str) -> list[str]:
        """Documents that link to ``path``, by their model or by meaning: its backlinks."""
        rows = self._db.execute(
            "SELECT source FROM links WHERE target = ? ORDER BY source", (path,)
        )
        return [row[0] for row in rows]

    def pages(self) -> Iterator[Entry]:
        """Every document that has a page (or a result waiting to be written), by path."""
        rows = self._db.execute(
            f"SELECT {COLUMNS} FROM documents WHERE status IN (?, ?) ORDER BY path",
            (SUMMARIZED, WRITTEN),
        )
        yield from (from_row(row) for row in rows)

    def written_pages(self) -> Iterator[str]:
        """The page of every document whose page is on disk, as far as the journal knows (no
        result is read: a check of a large wiki's files asks this)."""
        rows = self._db.execute(
            "SELECT page FROM documents WHERE status = ? AND page IS NOT NULL ORDER BY page",
            (WRITTEN,),
        )
        yield from (row[0] for row in rows)

    def record_failure(
        self, *, path: str, collection: str, content_hash: str, fingerprint: str, reason: str
    ) -> None:
        with self._db.transaction():
            entry = Entry(
                path, collection, content_hash, fingerprint, FAILED, None, None, None, reason
            )
            row = to_row(entry, time.time())
            self._db.execute(UPSERT, row)
            self._db.execute("DELETE FROM links WHERE source = ?", (path,))

    def record_no_text(
        self, *, path: str, collection: str, content_hash: str, reason: str, at: float | None = None
    ) -> str | None:
        """The file at ``path`` holds no text (``reason``): it has no page, until it changes. A
        page it had (from text it held before) is no longer its page: its removed event is in the
        same transaction, and its name is returned for the caller to remove."""
        now = time.time() if at is None else at
        entry = self.get(path)
        page = entry.page if entry is not None and entry.status == WRITTEN else None
        with self._db.transaction():
            if page is not None:
                self.history.record_removed([path], now)
            row = to_row(
                Entry(path, collection, content_hash, "", NO_TEXT, None, None, None, reason), now
            )
            self._db.execute(UPSERT, row)
            self._db.execute("DELETE FROM links WHERE source = ?", (path,))
        return page

    def mark_written(
        self,
        paths: Iterable[str],
        at: float | None = None,
        *,
        results: Mapping[str, dict[str, Any] | None] | None = None,
        journaled: Mapping[str, str | None] | None = None,
        prose: Mapping[str, Sequence[SentenceCheck]] | None = None,
    ) -> list[str]:
        """The pages of ``paths`` are on disk (at ``at``, epoch seconds, default now): their
        history's added and changed events in the same transaction. With ``results`` (the
        result each page was rendered from), a document whose journaled result is another one
        by now (a second opinion recorded while its first page was being written) stays
        unwritten, so its own page is written next, also after a crash. ``journaled``: a
        result's JSON text as :meth:`record_summaries` returned it, where the caller has it (no
        second encoding; None: not at hand); ``prose``: a result's prose as decoded for its
        page (see :meth:`PageHistory.record_written`). The paths marked."""
        now = time.time() if at is None else at
        paths = list(paths)
        with self._db.transaction():
            if results is not None:
                paths = self._still_recorded(paths, results, journaled or {})
            self._db.executemany(
                "UPDATE documents SET status = ?, updated = ? WHERE path = ?",
                [(WRITTEN, now, path) for path in paths],
            )
            # The results kept are the journaled ones: the history need not read them back.
            self.history.record_written(paths, now, results=results, prose=prose)
        return paths

    def _still_recorded(
        self,
        paths: list[str],
        results: Mapping[str, dict[str, Any] | None],
        journaled: Mapping[str, str | None],
    ) -> list[str]:
        kept = []
        for start in range(0, len(paths), _IN_CHUNK):
            chunk = paths[start : start + _IN_CHUNK]
            rows = self._db.execute(
                f"SELECT path, result FROM documents WHERE path IN ({', '.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            stored = dict(rows)
            for path in chunk:
                result = results.get(path)
                text = journaled.get(path)
                if text is None and result is not None:
                    text = stored_json(result)
                if path in stored and stored[path] == text:
                    kept.append(path)
        return kept

    def forget(self, paths: Iterable[str], at: float | None = None) -> None:
        """Drop ``paths`` and their links; their pages' removed events in the same transaction."""
        paths = list(paths)
        rows = [(path,) for path in paths]
        with self._db.transaction():
            self.history.record_removed(paths, time.time() if at is None else at)
            self._db.executemany("DELETE FROM documents WHERE path = ?", rows)
            self._db.executemany("DELETE FROM links WHERE source = ?", rows)


def _summarized(entry: Entry) -> Entry:
    """``entry`` as a recorded summary: its status summarized, without a failure's reason (a
    run's entries are made so: no copy for them)."""
    if entry.status == SUMMARIZED and entry.reason is None:
        return entry
    return replace(entry, status=SUMMARIZED, reason=None)
