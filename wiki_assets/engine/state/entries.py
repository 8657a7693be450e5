"""A document's row in the journal: its status, what a run reads of it (:class:`Entry`), and how
it is written (:data:`UPSERT`, with :func:`to_row`'s parameters) and read back
(:func:`from_row`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SUMMARIZED = "summarized"  # the model answered; the page is not on disk yet
WRITTEN = "written"  # the page is on disk
FAILED = "failed"
NO_TEXT = "no_text"  # the file holds no text (the reason says why): looked at again once it changes

COLUMNS = "path, collection, content_hash, fingerprint, status, page, model, result, reason"


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
    reason: str | None = None


UPSERT = (
    "INSERT INTO documents"
    " (path, collection, content_hash, fingerprint, status, page, model, result, reason,"
    "  updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (path) DO UPDATE SET collection = excluded.collection,"
    " content_hash = excluded.content_hash, fingerprint = excluded.fingerprint,"
    " status = excluded.status, page = excluded.page, model = excluded.model,"
    " result = excluded.result, reason = excluded.reason, updated = excluded.updated"
)
"""A document's row, new or replacing the one it had: the parameters of :func:`to_row`."""


def to_row(
    path: str,
    collection: str,
    content_hash: str,
    fingerprint: str,
    status: str,
    page: str | None,
    model: str | None,
    result: dict[str, Any] | None,
    reason: str | None,
    updated: float,
) -> tuple[Any, ...]:
    """The parameters of :data:`UPSERT` (``updated``: epoch seconds)."""
    text = None if result is None else json.dumps(result, ensure_ascii=False)
    return (path, collection, content_hash, fingerprint, status, page, model, text, reason, updated)


def from_row(row: tuple[Any, ...]) -> Entry:
    path, collection, content_hash, fingerprint, status, page, model, result, reason = row
    return Entry(
        path,
        collection,
        content_hash,
        fingerprint,
        status,
        page,
        model,
        None if result is None else json.loads(result),
        reason,
    )
