"""The project's exceptions: one base class, so a caller can catch everything wiki_assets raises
on purpose with a single ``except WikiAssetsError`` and tell it from a bug."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Literal

ErrorKind = Literal["rejected", "timeout", "unavailable", "garbage"]


class WikiAssetsError(Exception):
    """The base of every error wiki_assets raises on purpose; the message is for a person."""


class ConfigurationError(WikiAssetsError):
    """A configuration or settings mistake, e.g. a missing API key environment variable. The
    message names the setting (and the variable), never a secret's value."""


class ModelError(WikiAssetsError):
    """A request that failed after the client's own retries; the message is the recorded reason.

    ``kind`` decides what happens next: ``rejected`` is about this document (it fails),
    ``timeout`` and ``garbage`` send it back to the queue a bounded number of times, and
    ``unavailable`` is about the model (it counts towards the circuit breaker).
    ``status_code`` and ``request_id`` are the HTTP answer's, when there was one (the request id
    only when the server sent an ``x-request-id`` header). ``reason`` is the message without
    the model's name; ``unreachable``: no connection could be made (refused, no such host).
    """

    def __init__(
        self,
        message: str,
        kind: ErrorKind,
        *,
        status_code: int | None = None,
        request_id: str | None = None,
        reason: str | None = None,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.reason = reason if reason is not None else message
        self.unreachable = unreachable
        self.status_code = status_code
        self.request_id = request_id


class EmbeddingsError(WikiAssetsError):
    """An embeddings endpoint that failed: down or failing after the client's own retries, an
    answer that is not vectors, or vectors whose dimension changed. The message names the
    endpoint (its name and base URL) and the reason, never a key; ``reason`` is the reason
    alone. A client that raised it once raises it again at once (its breaker stays open)."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class DocumentError(WikiAssetsError):
    """A document that cannot be summarized; the message is the reason recorded for it."""


class NoText(WikiAssetsError):
    """A file that holds no text to summarize: an image, an archive, a scan without a text
    layer, a password-protected or broken file, a format nothing here reads. Not a failure: it
    is listed with the reason (the message), and looked at again only once it changes."""


class DraftError(WikiAssetsError):
    """An answer that is not a valid page; the message says what is wrong, for a repair request."""


class UnsafePath(WikiAssetsError):
    """A page path that would land outside the wiki root."""


class StateError(WikiAssetsError):
    """A problem with the state store that runs share (journal, locks, worker leases)."""


class CollectionBusy(StateError):
    """Another run holds the collection's lock."""


class StateUnavailable(StateError):
    """The state store cannot be reached; the message names it without credentials."""


class EmbeddedModelUnavailable(WikiAssetsError):
    """The embedded model (the ``local`` extra) is not installed."""


class DiskFull(WikiAssetsError):
    """A write found no space left on its device; the message names the folder
    (:func:`no_space_message`)."""


NO_SPACE = "no space left on device"
_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_POSTGRES_DISK_FULL = "53100"  # SQLSTATE disk_full


def disk_full(error: BaseException) -> BaseException | None:
    """The error under ``error`` that says a disk is full, if one does: an ``OSError`` with
    ``ENOSPC`` or ``EDQUOT``, SQLite's ``database or disk is full`` or PostgreSQL's ``disk_full``.
    Looked for through exception groups (a task group's ``unhandled errors``), causes and the
    errors being handled when another was raised (SQLite's ``cannot rollback - no transaction is
    active`` after a full disk ended the transaction)."""
    seen: set[int] = set()
    stack = [error]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _FULL_ERRNOS:
            return current
        if isinstance(current, sqlite3.Error) and (
            getattr(current, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
            or "database or disk is full" in str(current)
        ):
            return current
        if getattr(current, "pgcode", None) == _POSTGRES_DISK_FULL:
            return current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def no_space_message(error: BaseException, folder: Path | str) -> str | None:
    """``no space left on device: <folder>`` (and what to do) where ``error`` comes of a full
    disk (:func:`disk_full`), else None. ``folder`` is where the caller writes (the wiki); a file
    outside it that the error names has its own folder named instead."""
    found = disk_full(error)
    if found is None:
        return None
    where = Path(folder)
    name = getattr(found, "filename", None)
    if isinstance(name, str | bytes | os.PathLike):
        written = Path(os.fsdecode(name)).absolute()
        if not written.is_relative_to(where.absolute()):
            where = written.parent
    return (
        f"{NO_SPACE}: {where} (free space there and run again: the next run finishes what this "
        "one left)"
    )


__all__ = [
    "NO_SPACE",
    "CollectionBusy",
    "ConfigurationError",
    "DiskFull",
    "DocumentError",
    "DraftError",
    "EmbeddedModelUnavailable",
    "EmbeddingsError",
    "ErrorKind",
    "ModelError",
    "StateError",
    "StateUnavailable",
    "UnsafePath",
    "WikiAssetsError",
    "disk_full",
    "no_space_message",
]
