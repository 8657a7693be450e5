"""Hedges: which late request of another model an idle worker races, and when one becomes late.

The rule is in :mod:`~wiki_assets.engine.dispatch.tail` ("The Tail at Scale"): once nothing is
left unstarted, an idle model may race a document whose request on another model has run past
that model's tail time for it, or that it would clearly finish sooner itself. These functions
only choose; the worker that races (``Dispatcher._hedge``) sends the request.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wiki_assets.engine.dispatch.lane import Attempt, Lane
from wiki_assets.engine.dispatch.tail import HEDGE_BLIND_S, HEDGE_WITHOUT_PERCENTILE

HEDGE_CLEARLY_SOONER = 0.5  # or hedge when I would finish in half the time it still needs


def hedge_after_s(attempt: Attempt, hedger: Lane) -> float | None:
    """How long ``attempt`` may run before ``hedger`` races it."""
    if attempt.give_up_s is not None:
        return attempt.give_up_s
    prepared = attempt.job.prepared
    mine = hedger.pace.expected_s(prepared.prompt_tokens) if prepared else None
    if mine is not None:
        return HEDGE_WITHOUT_PERCENTILE * mine
    # Nothing is known of either model yet (the start of a run with fewer documents than
    # workers): an idle model finds out by racing, once per document.
    return HEDGE_BLIND_S


def hedgeable(lanes: Sequence[Lane], lane: Lane) -> Iterator[Attempt]:
    """For each document running only on other models, and not yet raced by ``lane``, its
    latest request: a race starts only once even that one runs long (so a hedge that hangs
    is raced in turn, and a document has a second request only while the first is late)."""
    seen: set[int] = set()
    for other in lanes:
        if other is lane:
            continue
        for attempt in other.attempts:
            job = attempt.job
            if id(job) in seen:
                continue
            seen.add(id(job))
            if job.done or job.prepared is None or lane.order in job.raced_by:
                continue
            if not job.may_take(lane.order):  # a second opinion on this model's own answer
                continue
            if any(running.lane is lane for running in job.running):
                continue
            yield max(job.running, key=lambda running: running.started)


def hedge_target(lanes: Sequence[Lane], lane: Lane, now: float) -> Attempt | None:
    """The longest-running request of another model that ``lane`` should race now, if any."""
    if lane.breaker.failures:
        # A model whose last request failed (a dead port, a flaky server) is no one to race
        # with: its hedge would fail too, and it would only have cost the time it took.
        return None
    best: tuple[float, Attempt] | None = None
    for attempt in hedgeable(lanes, lane):
        elapsed = now - attempt.started
        after = hedge_after_s(attempt, lane)
        overdue = after is not None and elapsed > after
        assert attempt.job.prepared is not None
        mine = lane.pace.expected_s(attempt.job.prepared.prompt_tokens)
        still = attempt.expected_s - elapsed
        sooner = mine is not None and mine < HEDGE_CLEARLY_SOONER * still
        if (overdue or sooner) and (best is None or elapsed > best[0]):
            best = (elapsed, attempt)
    return best[1] if best else None


def next_hedge_at(lanes: Sequence[Lane], lane: Lane, now: float) -> float | None:
    """When the next request of another model becomes one ``lane`` would race."""
    if lane.breaker.failures:
        return None
    times = [
        at
        for attempt in hedgeable(lanes, lane)
        if (after := hedge_after_s(attempt, lane)) is not None
        and (at := attempt.started + after + 1e-6) > now
    ]
    return min(times) if times else None
