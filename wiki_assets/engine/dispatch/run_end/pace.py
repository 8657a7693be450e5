"""How fast a model answers, learned from its answers: what the end-of-run rule compares and
what tells a late request (:mod:`~wiki_assets.engine.dispatch.run_end`)."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from wiki_assets.engine.dispatch.limits import work_units
from wiki_assets.engine.dispatch.run_end.hedge_thresholds import (
    HEDGE_PERCENTILE,
    LATENCY_SAMPLES,
    MIN_HEDGE_SAMPLES,
)


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
