"""How many workers each model gets (a worker has one request in flight at a time): a fixed
number, or found automatically.

The automatic limit follows TCP Vegas. A model's *normalized latency* (seconds per unit of work,
where work is prompt tokens / 10 + completion tokens, so long and short documents compare) stays at
its floor while the server has spare capacity, and grows in proportion to the excess once requests
share a saturated accelerator or queue for a batch slot. From the two, Little's law estimates how
many of our requests are waiting rather than being served:

    queued ≈ limit × (1 − floor / current)

Every round (as many completions as the limit) the limit doubles while nothing queues (slow start),
then moves by one to keep ``alpha``–``beta`` requests queued: enough to keep the server's batch
full, few enough not to add latency. A 429 or 5xx halves it (multiplicative decrease), so a model
that pushes back is not hammered.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Protocol

from wiki_assets.engine.config import AUTO, Dials, Endpoint

AUTO_START = 4  # workers an automatic limit starts from
PREFILL_DISCOUNT = 10.0  # a prompt token costs about a tenth of a generated one on batching servers


def work_units(prompt_tokens: int, completion_tokens: int) -> float:
    return max(1.0, prompt_tokens / PREFILL_DISCOUNT + completion_tokens)


@dataclass
class FixedWorkers:
    """The configured number of workers, except right after push-back: a 429 or 5xx halves it,
    and each run of ``limit`` successes adds one back, up to the configured number."""

    configured: int
    limit: int = field(default=0, init=False)
    auto: bool = field(default=False, init=False)
    peak: int = field(default=0, init=False)
    _successes: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.limit = self.peak = self.configured

    @property
    def most(self) -> int:
        return self.configured

    def on_success(self, latency_s: float, units: float) -> None:
        if self.limit < self.configured:
            self._successes += 1
            if self._successes >= self.limit:
                self.limit += 1
                self._successes = 0

    def on_overload(self) -> None:
        self.limit = max(1, self.limit // 2)
        self._successes = 0


@dataclass
class AdaptiveWorkers:
    """As many workers as keep the model's batch full without queueing (see the module
    docstring), between 1 and ``ceiling``."""

    ceiling: int = 64
    limit: int = 2
    alpha: float = 2.0
    beta: float = 4.0
    auto: bool = field(default=True, init=False)
    peak: int = field(default=0, init=False)
    slow_start: bool = field(default=True, init=False)
    floor: float | None = field(default=None, init=False)  # best round median seen, s per unit
    _round: list[float] = field(default_factory=list, init=False)
    history: list[int] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        if not 1 <= self.limit <= self.ceiling:
            raise ValueError(f"initial limit {self.limit} must be within 1..{self.ceiling}")
        self.peak = self.limit

    @property
    def most(self) -> int:
        return self.ceiling

    def on_success(self, latency_s: float, units: float) -> None:
        self._round.append(latency_s / units)
        # A round is as many completions as requests in flight (at least 4 for a stable median).
        if len(self._round) >= max(4, self.limit):
            self._end_round(statistics.median(self._round))
            self._round.clear()

    def on_overload(self) -> None:
        self.slow_start = False
        self._set(max(1, self.limit // 2))
        self._round.clear()

    def _end_round(self, current: float) -> None:
        self.floor = current if self.floor is None else min(self.floor, current)
        queued = self.limit * (1.0 - self.floor / current)
        if queued < self.alpha:
            self._set(self.limit * 2 if self.slow_start else self.limit + 1)
        elif queued > self.beta:
            self.slow_start = False
            self._set(self.limit - 1)
        else:
            self.slow_start = False

    def _set(self, limit: int) -> None:
        self.limit = max(1, min(self.ceiling, limit))
        self.peak = max(self.peak, self.limit)
        self.history.append(self.limit)


class Workers(Protocol):
    """A model's workers: how many may have a request in flight, adjusted from its answers (the
    dials ``workers_per_model`` and ``max_workers``, and an endpoint's ``workers``, set them)."""

    limit: int  # workers allowed to send now
    peak: int  # the highest limit reached
    auto: bool  # found automatically rather than configured

    @property
    def most(self) -> int:
        """Worker tasks to start: the most workers this can ever allow."""
        ...

    def on_success(self, latency_s: float, units: float) -> None: ...
    def on_overload(self) -> None: ...


@dataclass
class Breaker:
    """Takes a model out after ``threshold`` consecutive model-level failures (connection refused,
    5xx or 429 after the client's retries, timeouts). While open, its workers hand their claims
    back to the queue for the other models; after ``cooldown_s`` one probe request is let through
    (half-open): a success closes the breaker, a failure reopens it for twice as long. A model
    whose server is gone for good (:meth:`retire`) stays out: no probe, no recovery."""

    threshold: int = 3
    cooldown_s: float = 2.0
    max_cooldown_s: float = 30.0
    failures: int = field(default=0, init=False)  # consecutive
    open_until: float = field(default=0.0, init=False)
    trips: int = field(default=0, init=False)
    retired: bool = field(default=False, init=False)  # out for the rest of the run
    _cooldown: float = field(default=0.0, init=False)

    @property
    def tripped(self) -> bool:
        return self.failures >= self.threshold

    def allows(self, worker: int, now: float) -> bool:
        """Whether the model's ``worker``-th worker may send. Closed: every worker. Tripped: only
        worker 0, once the cooldown is over (the probe); retired: none."""
        return not self.tripped or (not self.retired and worker == 0 and now >= self.open_until)

    def retire(self) -> None:
        """Out for the rest of the run (its server died): nothing brings it back."""
        self.retired = True
        self.failures = max(self.failures, self.threshold)
        self.open_until = math.inf

    def on_success(self) -> None:
        if self.retired:
            return  # an answer that was already on its way: the server is gone all the same
        self.failures = 0
        self._cooldown = 0.0

    def on_failure(self, now: float) -> None:
        if self.retired:
            return
        self.failures += 1
        if self.tripped:
            self._cooldown = min(
                self.max_cooldown_s, self._cooldown * 2 if self._cooldown else self.cooldown_s
            )
            self.open_until = now + self._cooldown
            self.trips += 1


def workers_for(endpoint: Endpoint, dials: Dials) -> Workers:
    setting = endpoint.workers if endpoint.workers is not None else dials.workers_per_model
    if setting == AUTO:
        # Slow start from 4 in flight (TCP starts from 10 segments): any server worth a fleet
        # takes 4 at once, and each doubling round costs a few request latencies at part load.
        return AdaptiveWorkers(ceiling=dials.max_workers, limit=min(AUTO_START, dials.max_workers))
    return FixedWorkers(int(setting))
