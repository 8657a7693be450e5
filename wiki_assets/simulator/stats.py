"""What a server has seen: its counters, its request logs and its fault dice, behind one lock.

The counters are written from the server's event loop thread and read from any thread (tests,
benchmarks), hence the lock; the fault dice sit behind it too because resetting the counters
rewinds them, and the "dead" check reads the answered count.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass

from wiki_assets.simulator.faults import Fault, FaultDice
from wiki_assets.simulator.model import SimModel

__all__ = ["Ledger", "SimStats"]


@dataclass
class SimStats:
    """Counters of one server since start or the last reset."""

    requests: int = 0  # chat completion requests received
    answered: int = 0  # answered with a well-formed completion
    errors: int = 0  # injected HTTP 500s
    rate_limited: int = 0  # injected HTTP 429s
    hung: int = 0  # requests that were accepted and never answered
    garbage: int = 0  # HTTP 200s with a non-JSON body
    dropped: int = 0  # connections dropped because the server is "dead" (die_after)
    peak_active: int = 0  # most requests simultaneously being decoded (stays 0 when instant)
    peak_in_flight: int = 0  # most requests simultaneously open (what a concurrency limit bounds)
    prompt_tokens: int = 0  # over answered requests
    completion_tokens: int = 0  # over answered requests
    rejected: int = 0  # invalid requests: bad body, context overflow, unsupported json_schema
    embedding_requests: int = 0  # /v1/embeddings requests received (valid or not)
    embedded_inputs: int = 0  # inputs of the embeddings requests answered with vectors
    first_request_at: float | None = None  # time.monotonic() of the first chat request


class Ledger:
    """One server's :class:`SimStats`, request logs and fault dice; safe from any thread."""

    def __init__(self, sim: SimModel) -> None:
        self._lock = threading.Lock()
        self._stats = SimStats()
        self._dice = FaultDice(sim)
        self._in_flight = 0  # chat requests open right now
        self._active = 0  # requests being decoded right now
        # First line of each request's last user message, in arrival order, and the bearer
        # tokens seen: tests check which documents were asked for and that a key travelled.
        self._request_log: list[str] = []
        self._request_texts: list[str] = []
        self._bearer_tokens: set[str] = set()

    # -- written by the server ------------------------------------------------------------

    def open_request(self) -> None:
        """A chat request arrived (it stays in flight until :meth:`close_request`)."""
        with self._lock:
            self._stats.requests += 1
            self._in_flight += 1
            self._stats.peak_in_flight = max(self._stats.peak_in_flight, self._in_flight)

    def close_request(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def note_active(self, active: int) -> None:
        """The batch now decodes ``active`` requests (the scheduler's callback)."""
        with self._lock:
            self._active = active
            self._stats.peak_active = max(self._stats.peak_active, active)

    def log_request(self, document: str, authorization: str) -> None:
        """Remember a valid request's document and the bearer token of its Authorization header."""
        with self._lock:
            if self._stats.first_request_at is None:
                self._stats.first_request_at = time.monotonic()
            self._request_log.append(document.split("\n", 1)[0])
            self._request_texts.append(document)
            if authorization.startswith("Bearer "):
                self._bearer_tokens.add(authorization.removeprefix("Bearer "))

    def roll_fault(self) -> Fault | None:
        """Roll the dice for the next request, counting the fault it meets, if any."""
        with self._lock:
            fault = self._dice.roll(self._stats.answered)
            if fault is not None:
                field = fault.value
                setattr(self._stats, field, getattr(self._stats, field) + 1)
            return fault

    def open_embeddings(self, authorization: str) -> int:
        """An embeddings request arrived; returns its number (1 for the first since a reset)."""
        with self._lock:
            self._stats.embedding_requests += 1
            if authorization.startswith("Bearer "):
                self._bearer_tokens.add(authorization.removeprefix("Bearer "))
            return self._stats.embedding_requests

    def count_embedded(self, inputs: int) -> None:
        with self._lock:
            self._stats.embedded_inputs += inputs

    def count_rejected(self) -> None:
        with self._lock:
            self._stats.rejected += 1

    def count_answer(self, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self._stats.answered += 1
            self._stats.prompt_tokens += prompt_tokens
            self._stats.completion_tokens += completion_tokens

    # -- read by anyone -------------------------------------------------------------------

    def snapshot(self) -> SimStats:
        """A consistent copy of the counters."""
        with self._lock:
            return dataclasses.replace(self._stats)

    def request_log(self) -> list[str]:
        with self._lock:
            return list(self._request_log)

    def request_texts(self) -> list[str]:
        with self._lock:
            return list(self._request_texts)

    def bearer_tokens(self) -> set[str]:
        with self._lock:
            return set(self._bearer_tokens)

    def reset(self) -> None:
        """Zero the counters, clear the request logs and rewind the fault dice.

        The bearer tokens seen are kept.
        """
        with self._lock:
            # Peaks restart from what is open right now, not from zero, so requests still
            # running across a reset are not forgotten.
            self._stats = SimStats(peak_active=self._active, peak_in_flight=self._in_flight)
            self._dice.rewind()
            self._request_log.clear()
            self._request_texts.clear()
