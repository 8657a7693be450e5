"""The daily digest: what the wiki learned on one day, from the pages' history.

- :mod:`.build`: the day's window in a timezone and what it did to each page (:class:`Digest`).
- :mod:`.render`: ``digest/YYYY-MM-DD.md`` and ``.json``.
- :mod:`.webhook`: the optional Block Kit message to a Slack-compatible incoming webhook.

:func:`write_digest` builds and writes a day's files; any day can be written again later (a
backfill), since the history keeps every event.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from wiki_assets.engine.digest.build import (
    DayWindow,
    Digest,
    PageChange,
    build_digest,
    prose_by_model,
)
from wiki_assets.engine.digest.render import digest_files, render_json, render_markdown
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.files import Wiki

__all__ = [
    "DayWindow",
    "Digest",
    "DigestFiles",
    "PageChange",
    "build_digest",
    "write_changed_digest",
    "write_digest",
]

DEFAULT_TIMEZONE = "UTC"


@dataclass(frozen=True, slots=True)
class DigestFiles:
    digest: Digest
    markdown: str  # paths relative to the wiki root
    json: str


def write_digest(
    wiki_root: Path, day: date, timezone: str = DEFAULT_TIMEZONE, store: StateStore | None = None
) -> DigestFiles:
    """Build ``day``'s digest (a calendar day in ``timezone``) from ``store``'s history (default:
    SQLite in the wiki's state folder) and write its two files atomically; a day with no change
    gets files that say so."""
    wiki = Wiki(wiki_root)
    return _write(wiki, day, _built(wiki, day, timezone, store))


def write_changed_digest(
    wiki_root: Path, day: date, timezone: str = DEFAULT_TIMEZONE, store: StateStore | None = None
) -> DigestFiles | None:
    """:func:`write_digest` for a day that saw a change; None, and no file, for one that saw
    none (a run over many days writes only the days that have something to say)."""
    wiki = Wiki(wiki_root)
    digest = _built(wiki, day, timezone, store)
    return _write(wiki, day, digest) if any(digest.counts().values()) else None


def _built(wiki: Wiki, day: date, timezone: str, store: StateStore | None) -> Digest:
    store = store or StateStore(wiki.state_dir)
    window = DayWindow.of(day, timezone)
    if not store.has_state():
        return Digest(window)  # nothing ever ingested (reading must not create the store)
    with Journal(store) as journal:
        digest = build_digest(journal.history, window)
        written = [change.source for change in (*digest.added, *digest.changed)]
        return replace(digest, prose=prose_by_model(journal.get_many(written).values()))


def _write(wiki: Wiki, day: date, digest: Digest) -> DigestFiles:
    markdown, data = digest_files(day)
    wiki.write(markdown, render_markdown(digest))
    wiki.write(data, render_json(digest))
    return DigestFiles(digest, markdown, data)
