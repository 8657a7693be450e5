"""Hedges: which late request of another model an idle worker races, and when one becomes late
(the rule: :mod:`~wiki_assets.engine.dispatch.run_end`; its thresholds:
:mod:`~wiki_assets.engine.dispatch.run_end.hedge_thresholds`).

These functions only choose; the worker that races (``Worker._hedge``) sends the request. A
second opinion cannot be raced by the model that gave the first answer: once it runs far past its
time, an idle worker gives it up (the first answer is journaled), so a hang never holds the end
of the run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from wiki_assets.engine.dispatch.lane import Attempt, Lane
from wiki_assets.engine.dispatch.run_end.hedge_thresholds import (
    HEDGE_BLIND_S,
    HEDGE_CLEARLY_SOONER,
    HEDGE_MIN_SAVING_S,
    HEDGE_WITHOUT_PERCENTILE,
    SECOND_OPINION_PATIENCE,
)


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
            if job.part is not None and job.part.document.failed:
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
        # Its model's expectation now (a request sent before its model had answered has none
        # of its own: the first long documents of a run could otherwise never be raced).
        still = attempt.outlook()[0] - elapsed
        sooner = (
            mine is not None
            and mine < HEDGE_CLEARLY_SOONER * still
            and still - mine >= HEDGE_MIN_SAVING_S
        )
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


def _unraceable(lanes: Sequence[Lane], lane: Lane) -> Iterator[tuple[Attempt, float]]:
    """Second opinions running on other models that ``lane`` may not race (it gave their first
    answer), each with how long it may run before it is given up."""
    for other in lanes:
        if other is lane:
            continue
        for attempt in other.attempts:
            job = attempt.job
            if job.second_opinion and not job.done and not job.may_take(lane.order):
                after = hedge_after_s(attempt, lane)
                if after is not None:
                    yield attempt, SECOND_OPINION_PATIENCE * after


def late_second_opinions(lanes: Sequence[Lane], lane: Lane, now: float) -> list[Attempt]:
    """Second opinions an idle ``lane`` would race were they not on its own answer, run far past
    their time (a hang): the end of the run does not wait for them."""
    return [attempt for attempt, after in _unraceable(lanes, lane) if now - attempt.started > after]


def next_late_at(lanes: Sequence[Lane], lane: Lane, now: float) -> float | None:
    """When the next second opinion of :func:`late_second_opinions` becomes late."""
    times = [
        at for attempt, after in _unraceable(lanes, lane) if (at := attempt.started + after) > now
    ]
    return min(times) + 1e-6 if times else None


def next_idle_change(lanes: Sequence[Lane], lane: Lane, now: float) -> float | None:
    """When an idle ``lane`` should look again: a request it would race, or a second opinion it
    would give up, becomes late."""
    times = [
        at
        for at in (next_hedge_at(lanes, lane, now), next_late_at(lanes, lane, now))
        if at is not None
    ]
    return min(times) if times else None
