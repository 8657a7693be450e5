"""The project's exceptions: one base class, so a caller can catch everything wiki_assets raises
on purpose with a single ``except WikiAssetsError`` and tell it from a bug."""

from __future__ import annotations

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
    only when the server sent an ``x-request-id`` header).
    """

    def __init__(
        self,
        message: str,
        kind: ErrorKind,
        *,
        status_code: int | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.status_code = status_code
        self.request_id = request_id


class DocumentError(WikiAssetsError):
    """A document that cannot be summarized; the message is the reason recorded for it."""


class DraftError(WikiAssetsError):
    """An answer that is not a valid page; the message says what is wrong, for a repair request."""


class UnsafePath(WikiAssetsError):
    """A page path that would land outside the wiki root."""


class StateError(WikiAssetsError):
    """A problem with the state store that runs share (journal, locks, model slots)."""


class CollectionBusy(StateError):
    """Another run holds the collection's lock."""


class StateUnavailable(StateError):
    """The state store cannot be reached; the message names it without credentials."""


class EmbeddedModelUnavailable(WikiAssetsError):
    """The embedded model (the ``local`` extra) is not installed."""


__all__ = [
    "CollectionBusy",
    "ConfigurationError",
    "DocumentError",
    "DraftError",
    "EmbeddedModelUnavailable",
    "ErrorKind",
    "ModelError",
    "StateError",
    "StateUnavailable",
    "UnsafePath",
    "WikiAssetsError",
]
