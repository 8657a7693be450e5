"""The pages' history: when each page was added, changed or removed, and what it said then.

The journal keeps only the current state of each document; a digest of a past day (a backfill)
needs what happened on that day and what a changed page said before. Each event is appended in
the same transaction as the journal change it records (a page written, a document forgotten), so
the history never disagrees with the journal. A page rendered again only because its links
changed is not an event: only a new result whose page differs from the last event's is.

A store created before this table existed gets an ``existing`` event per page when the table is
created: not a change of that day, but what the page said before, so its first change has an old
description too. An event's description is what a digest may quote of it, as the index lists the
page (:func:`~wiki_assets.engine.quality.sentences.page_line`): the description's sentences a
judge verified or that quote the document, else the document's opening, saying so; for a page the
model did not summarize, the first sentence of the document's opening
(:func:`~wiki_assets.engine.quality.sentences.opening_line`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from wiki_assets.engine.documents.language import language_code
from wiki_assets.engine.quality.sentences import (
    ProseCheck,
    SentenceCheck,
    opening_line,
    page_line,
)
from wiki_assets.engine.state.store import Db

EventKind = Literal["added", "changed", "removed", "existing"]
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)

TABLE = "page_events"

SCHEMA = """
CREATE TABLE IF NOT EXISTS page_events (
    seq {serial},
    at {float} NOT NULL,
    event TEXT NOT NULL,
    collection TEXT NOT NULL,
    path TEXT NOT NULL,
    page TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    verdict TEXT NOT NULL,
    flags TEXT NOT NULL,
    language TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS page_events_by_time ON page_events (at);
CREATE INDEX IF NOT EXISTS page_events_by_path ON page_events (path, seq);
"""

_COLUMNS = (
    "at, event, collection, path, page, content_hash, title, description, verdict, flags, language"
)
# Columns added since the table was first written, with their type: a store from before gains
# them when it is opened (its old events read as "").
ADDED_COLUMNS = {"language": "TEXT NOT NULL DEFAULT ''"}
_CHUNK = 500  # paths per ``IN (...)`` list


def schema(dialect: str) -> str:
    """:data:`SCHEMA` for ``dialect``: events keep their order by an increasing ``seq``."""
    serial = "INTEGER PRIMARY KEY" if dialect == "sqlite" else "BIGSERIAL PRIMARY KEY"
    return SCHEMA.replace("{serial}", serial)


@dataclass(frozen=True, slots=True)
class PageEvent:
    at: float  # epoch seconds
    event: EventKind
    collection: str
    path: str  # the document's path relative to the synced root
    page: str
    content_hash: str
    title: str
    description: str
    verdict: str  # ok, flagged or unchecked, as the page's front matter says
    flags: tuple[str, ...] = ()
    language: str = ""  # the page's, as a code ("ko", "en"); "" for an event from before

    @property
    def live(self) -> bool:
        """Whether the page exists after this event."""
        return self.event != "removed"

    def says(self) -> tuple[str, str, str, str, tuple[str, ...]]:
        """What a reader of the page would see differ: a new event only when this does."""
        return self.content_hash, self.title, self.description, self.verdict, self.flags


def page_event(
    at: float,
    event: EventKind,
    *,
    collection: str,
    path: str,
    page: str,
    content_hash: str,
    result: dict[str, Any],
    prose: Sequence[SentenceCheck] | None = None,
) -> PageEvent:
    """The event of a page written from ``result`` (a journal entry's), its verdict as the page's
    front matter says it (the journaled flags are the verdict's reasons, in order). ``prose``:
    the result's, where the caller has decoded it already."""
    flags = result.get("flags")
    if prose is None:
        prose = ProseCheck.from_json(result.get("prose")).sentences
    verdict = "unchecked" if flags is None else "flagged" if flags else "ok"
    return PageEvent(
        at,
        event,
        collection,
        path,
        page,
        content_hash,
        result.get("title", ""),
        page_line(result.get("description", ""), prose, result.get("opening", ""))
        if result.get("summarized", True)
        else opening_line(result.get("summary", "")),
        verdict,
        tuple(flags or ()),
        language_code(result.get("language", "")),
    )


class PageHistory:
    """The ``page_events`` table on one connection; writes run inside the caller's transaction."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def record_written(
        self,
        paths: Sequence[str],
        at: float,
        *,
        results: Mapping[str, dict[str, Any] | None] | None = None,
        prose: Mapping[str, Sequence[SentenceCheck]] | None = None,
    ) -> list[PageEvent]:
        """Events for the pages of ``paths`` just written: ``added`` for a page that had none (or
        was removed), ``changed`` where it says something else than at its last event.
        ``results``: each path's journaled result, where the caller has it; ``prose``: that
        result's prose, where the caller decoded it (to render the page)."""
        decoded = prose or {}
        last = self.last_events(paths)
        events: list[PageEvent] = []
        for path, collection, page, content_hash, result in self._documents(paths, results):
            before = last.get(path)
            kind: EventKind = "changed" if before is not None and before.live else "added"
            event = page_event(
                at,
                kind,
                collection=collection,
                path=path,
                page=page,
                content_hash=content_hash,
                result=result,
                prose=decoded.get(path),
            )
            if kind == "changed" and before is not None and before.says() == event.says():
                continue  # the same page written again (a resumed run, a repeated answer)
            events.append(event)
        self._insert(events)
        return events

    def record_removed(self, paths: Sequence[str], at: float) -> list[PageEvent]:
        """``removed`` events for the pages of ``paths`` (documents about to be forgotten), with
        what each page last said."""
        events = [
            page_event(
                at,
                "removed",
                collection=collection,
                path=path,
                page=page,
                content_hash=content_hash,
                result=result,
            )
            for path, collection, page, content_hash, result in self._documents(paths)
        ]
        self._insert(events)
        return events

    def record_existing(self) -> int:
        """An ``existing`` event for every written page (a store that predates the table), at
        the time its page was last written: what it has said since."""
        rows = self._db.execute(
            "SELECT path, collection, page, content_hash, result, updated FROM documents"
            " WHERE status = 'written' AND page IS NOT NULL AND result IS NOT NULL ORDER BY path"
        ).fetchall()
        events = [
            page_event(
                float(updated),
                "existing",
                collection=collection,
                path=path,
                page=page,
                content_hash=content_hash,
                result=json.loads(result),
            )
            for path, collection, page, content_hash, result, updated in rows
        ]
        self._insert(events)
        return len(events)

    def between(self, start: float, end: float) -> list[PageEvent]:
        """Events at ``start`` <= at < ``end``, in the order they happened."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM page_events WHERE at >= ? AND at < ? ORDER BY seq",
            (start, end),
        )
        return [_event(row) for row in rows]

    def last_events(
        self, paths: Sequence[str], before: float | None = None
    ) -> dict[str, PageEvent]:
        """The latest event of each of ``paths`` (earlier than ``before``, if given)."""
        found: dict[str, PageEvent] = {}
        for chunk in _chunks(paths):
            marks = ",".join("?" * len(chunk))
            limit, params = ("", chunk) if before is None else (" AND at < ?", [*chunk, before])
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM page_events WHERE seq IN (SELECT MAX(seq) FROM"
                f" page_events WHERE path IN ({marks}){limit} GROUP BY path)",
                params,
            )
            found.update((event.path, event) for event in map(_event, rows))
        return found

    def _documents(
        self,
        paths: Sequence[str],
        results: Mapping[str, dict[str, Any] | None] | None = None,
    ) -> Iterator[tuple[str, str, str, str, Any]]:
        """The written pages of ``paths``, with their results (from ``results`` where it has
        them, else parsed from the journal)."""
        known = results or {}
        for chunk in _chunks(paths):
            marks = ",".join("?" * len(chunk))
            # A result at hand is not read back (a flush has every one of its pages').
            read = "" if all(known.get(path) for path in chunk) else ", result"
            rows = self._db.execute(
                f"SELECT path, collection, page, content_hash{read} FROM documents"
                f" WHERE path IN ({marks}) AND status = 'written' AND page IS NOT NULL"
                " AND result IS NOT NULL ORDER BY path",
                chunk,
            ).fetchall()
            for path, collection, page, content_hash, *stored in rows:
                given = known.get(path)
                yield path, collection, page, content_hash, given or json.loads(stored[0])

    def _insert(self, events: Iterable[PageEvent]) -> None:
        self._db.executemany(
            f"INSERT INTO page_events ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    e.at,
                    e.event,
                    e.collection,
                    e.path,
                    e.page,
                    e.content_hash,
                    e.title,
                    e.description,
                    e.verdict,
                    json.dumps(list(e.flags)),
                    e.language,
                )
                for e in events
            ],
        )


def _event(row: Sequence[Any]) -> PageEvent:
    at, event, collection, path, page, content_hash, title, description, verdict, flags, lang = row
    assert event in EVENT_KINDS, event
    return PageEvent(
        float(at),
        event,
        collection,
        path,
        page,
        content_hash,
        title,
        description,
        verdict,
        tuple(json.loads(flags)),
        lang,
    )


def _chunks(paths: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(paths), _CHUNK):
        yield list(paths[start : start + _CHUNK])
