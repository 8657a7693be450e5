"""The retry policy: what a failed request means for its model and for its document.

Timeouts and outages count against the model's breaker. While another request for the document
is still out, its outcome decides. Otherwise a refusal (``rejected``) fails the document; an
unparsable answer is tried at most :data:`MAX_GARBAGE` times and a timeout at most
:data:`MAX_ATTEMPTS` times across the fleet; an outage is the model's fault, not the document's,
and uses up none of its tries. When every model is out and none has answered for
``give_up_after_s``, the run stops and the documents stay for the next run. A second opinion is
asked once: if its request fails, the document's first answer (journaled) stands. These functions
decide; the workers (:mod:`~wiki_assets.engine.dispatch.worker`) put documents back, fail them
or stop the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from wiki_assets.engine.dispatch.lane import Attempt, Lane
from wiki_assets.engine.dispatch.queue import Job
from wiki_assets.engine.errors import ModelError

MAX_ATTEMPTS = 3  # tries per document across the fleet for timeouts and outages
MAX_GARBAGE = 2  # an unparsable answer is retried once

# What becomes of a document after a failed request: nothing yet (another request for it is
# still out), failed, put back for the next run (not its fault), put back to be tried again, or,
# for a second opinion, dropped (its first answer stands).
Next = Literal["wait", "fail", "leave", "retry", "drop"]


def blame(attempt: Attempt, error: ModelError, now: float, log: Any = None) -> None:
    """Count the failure against the request's model (figures, breaker) and, unless it is the
    model's fault, against its document's tries."""
    job, lane, tally = attempt.job, attempt.lane, attempt.lane.tally
    lane.last_error = error
    tally.last_error = error.reason
    tally.errors += 1
    tally.timeouts += error.kind == "timeout"
    tally.garbage += error.kind == "garbage"
    if error.kind in ("timeout", "unavailable"):
        was_tripped = lane.breaker.tripped
        lane.breaker.on_failure(now)
        if lane.breaker.tripped and not was_tripped and log is not None:
            log.warning(
                f"model {lane.endpoint.name} taken out for {lane.breaker.open_until - now:.0f} s "
                f"after {lane.breaker.failures} failures in a row: {error}"
            )
    if error.kind == "unavailable" and not attempt.hedge:
        job.attempts -= 1  # the model's fault, not the document's: no try is used up


def next_step(job: Job, error: ModelError, *, all_down: bool) -> Next:
    """What becomes of ``job`` after a request for it failed with ``error``."""
    if job.done or job.running:
        return "wait"  # another request for this document is still out: its outcome decides
    if job.second_opinion:
        return "drop"
    if error.kind == "rejected":
        return "fail"
    if all_down:
        return "leave"  # not this document's fault: leave it for the next run
    if job.attempts < (MAX_GARBAGE if error.kind == "garbage" else MAX_ATTEMPTS):
        return "retry"
    return "fail"


def all_models_down(
    lanes: Sequence[Lane], now: float, last_success: float, give_up_after_s: float
) -> bool:
    """Every model is out, and none has answered for ``give_up_after_s``, or none could ever be
    reached (no answer in this run, connections refused; or its server died): the run stops. A
    model that refuses connections from the start is misconfigured or not running; waiting does
    not bring it up."""
    if not all(lane.breaker.tripped for lane in lanes):
        return False
    return now - last_success >= give_up_after_s or all(
        unreachable(lane) or lane.breaker.retired for lane in lanes
    )


def unreachable(lane: Lane) -> bool:
    """``lane`` has not answered in this run and its last request could not connect."""
    error = lane.last_error
    return not lane.answered and error is not None and error.unreachable


def all_down_reason(lanes: Sequence[Lane]) -> str:
    """One line per model: its name, the URL tried and its last error."""
    return "every model is down:" + "".join(f"\n  {_down(m)}" for m in lanes)


def _down(lane: Lane) -> str:
    where = f"{lane.endpoint.name} at {shown_url(lane.endpoint.base_url)}"
    if lane.tally.gone is not None:
        # Its first line says how it died; its last lines of output were logged when it did.
        return f"{where}: {lane.tally.gone.splitlines()[0]}"
    error = lane.last_error
    return f"{where}: {error.reason if error else 'no answer'} ({lane.breaker.failures} failures)"


def shown_url(url: str) -> str:
    """``url`` without any user name, password or query (which may hold a key)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, host + port, parts.path, "", ""))
