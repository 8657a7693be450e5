"""The end of a run: who starts the last documents, and when an idle model races a slow request.

Early in a run every model works: the others could never do everything left before a slow model
finished one document. At the end it is different. A slow model that starts the last long
document can finish it long after a fast model would have done it and everything else, and then
the whole run waits for it. So a model leaves a document to the others when both hold:

* another model would finish *this very document* sooner (its own expected time for it, plus the
  wait for one of its workers to come free), and
* the others together would do everything else nobody has started before this model finished it.

The comparison is like with like (every model's time for the same document, from its measured
pace) and totally ordered (expected finish, then the model's place in the fleet), so for any
document one model is first, and the first model never leaves a document: a document cannot be
left by every model. What a model would finish first it starts.

Once nothing is left unstarted, an idle model may *hedge* ("The Tail at Scale", Dean and Barroso):
take a document whose request on another model has run past that model's 95th-percentile time
for it. The first answer wins and the other request is cancelled. A document gets another
request only while every request for it is late (so a hedge that hangs is raced in turn), each
model races a document at most once, and a model whose last request failed races nothing: the
extra load is bounded by the tail itself.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from wiki_assets.engine.dispatch.limits import work_units

LATENCY_SAMPLES = 64  # recent answers a model's latency percentile is taken over
HEDGE_PERCENTILE = 0.95
MIN_HEDGE_SAMPLES = 4  # fewer answers say too little about a model's tail
HEDGE_WITHOUT_PERCENTILE = 2.0  # no tail known for the slow model: hedge at twice my own time
HEDGE_BLIND_S = 2.0  # neither model has answered yet: race a request once it has run this long


@dataclass
class Pace:
    """How fast a model answers at its current load, learned from its answers (moving averages):
    seconds per unit of work, seconds per request, how long its answers are, and the spread of
    its latency (recent seconds per unit, for percentiles)."""

    smoothing: float = 0.2
    seconds_per_unit: float | None = None
    seconds_per_request: float | None = None
    completion_tokens: float = 0.0
    samples: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_SAMPLES))

    def observe(self, latency_s: float, prompt_tokens: int, completion_tokens: int) -> None:
        units = work_units(prompt_tokens, completion_tokens)
        self.samples.append(latency_s / units)
        if self.seconds_per_unit is None or self.seconds_per_request is None:
            self.seconds_per_unit, self.seconds_per_request = latency_s / units, latency_s
            self.completion_tokens = completion_tokens
            return
        a = self.smoothing
        self.seconds_per_unit += a * (latency_s / units - self.seconds_per_unit)
        self.seconds_per_request += a * (latency_s - self.seconds_per_request)
        self.completion_tokens += a * (completion_tokens - self.completion_tokens)

    def _units(self, prompt_tokens: int) -> float:
        return work_units(prompt_tokens, round(self.completion_tokens))

    def expected_s(self, prompt_tokens: int) -> float | None:
        """Seconds a request with this prompt would take now, or None before any answer."""
        if self.seconds_per_unit is None:
            return None
        return self.seconds_per_unit * self._units(prompt_tokens)

    def percentile_s(self, prompt_tokens: int, q: float = HEDGE_PERCENTILE) -> float | None:
        """The ``q`` quantile of this model's recent time for such a request, or None while it
        has answered too few requests to tell."""
        if len(self.samples) < MIN_HEDGE_SAMPLES:
            return None
        ordered = sorted(self.samples)
        rank = min(len(ordered) - 1, math.ceil(q * len(ordered)) - 1)
        return ordered[rank] * self._units(prompt_tokens)

    def docs_per_s(self, limit: int) -> float:
        """Documents per second at ``limit`` in flight, from the time per request."""
        if not self.seconds_per_request:
            return 0.0
        return limit / self.seconds_per_request


@dataclass(frozen=True, slots=True)
class Prospect:
    """One model's outlook for one document."""

    order: int  # the model's place in the fleet: the tie-break
    finish_s: float  # seconds from now until it would have the document done
    docs_per_s: float  # its pace over everything, at its current limit


def first(prospects: Sequence[Prospect]) -> Prospect:
    """The model that would finish the document first; ties go to the earlier model."""
    return min(prospects, key=lambda p: (p.finish_s, p.order))


def should_start(mine: Prospect, others: Sequence[Prospect], unstarted_elsewhere: int) -> bool:
    """Whether a free model should start a document now rather than leave it to ``others``
    (the models that could take it: in service, with a known pace), when ``unstarted_elsewhere``
    other documents are still unstarted.

    It leaves the document only when another model would finish it first *and* the others would
    also do every other unstarted document before this model finished this one. The first model
    always starts: no document is ever left by everyone.
    """
    if not others:
        return True
    best = first(others)
    if (mine.finish_s, mine.order) <= (best.finish_s, best.order):
        return True
    rate = sum(p.docs_per_s for p in others)
    if rate <= 0:
        return True
    return mine.finish_s < unstarted_elsewhere / rate + best.finish_s


def remaining_s(elapsed_s: float, expected_s: float, give_up_s: float | None) -> float:
    """How long a request already running is still expected to take: what its model's pace
    predicts, or forever once it has run past ``give_up_s`` (its model's tail percentile; such a
    request is presumed stuck, and its model does not count as coming free)."""
    if give_up_s is not None and elapsed_s > give_up_s:
        return math.inf
    return max(0.0, expected_s - elapsed_s)
