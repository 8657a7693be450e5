"""Continuous batching in time: which requests are decoded, how fast, and when each finishes.

This is the timing model of a continuous-batching server such as vLLM, with no I/O:

* A request costs ``work`` token-units (:meth:`SimModel.work`).
* At most ``max_batch`` requests are *active* (being decoded); the rest wait in FIFO order and
  are admitted as soon as a slot frees, which is where queueing latency comes from.
* Active requests share the accelerator by processor sharing: with ``n`` active requests each one
  progresses at ``min(per_request_tps, aggregate_tps / n)`` token-units per second. A lone request
  is bound by ``per_request_tps`` (memory bandwidth); a full batch by ``aggregate_tps`` (compute),
  so adding concurrency raises throughput until the aggregate limit, then only adds latency.

The scheduler is exact and event-driven: on every admission, completion or departure it advances
all active requests by ``elapsed * rate``, recomputes the rate and arms a single loop timer for
the earliest completion. There is no polling, so simulated durations do not depend on a tick.
It only uses the event loop's clock, timers and futures, so the HTTP server runs it on a real
loop and :mod:`wiki_assets.virtual_time` on a virtual clock.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from wiki_assets.simulator.model import SimModel

__all__ = ["BatchScheduler", "SchedulerStopped"]

# A job whose remaining work would take less than this is finished. It absorbs float rounding
# and asyncio firing a timer up to one clock resolution early, so a timer never re-arms forever.
_TIME_SLACK_S = 1e-6


class SchedulerStopped(Exception):
    """The server is shutting down while a request was waiting."""


class _Job:
    """One request's remaining token-units, and the future its handler awaits."""

    __slots__ = ("remaining", "future")

    def __init__(self, work: float, future: asyncio.Future[None]) -> None:
        self.remaining = work
        self.future = future


class BatchScheduler:
    """Processor-sharing batch of at most ``max_batch`` jobs, FIFO queue behind it.

    Used only from its event loop's thread, so it needs no locking. ``on_active`` hears the
    number of active jobs after every event (the server's peak-batch counter).
    """

    def __init__(
        self, sim: SimModel, loop: asyncio.AbstractEventLoop, on_active: Callable[[int], None]
    ) -> None:
        self._sim = sim
        self._loop = loop
        self._on_active = on_active
        self._active: list[_Job] = []
        self._waiting: deque[_Job] = deque()
        self._rate = 0.0
        self._stamp = loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    async def run(self, work: float) -> None:
        """Return once ``work`` token-units have been served; SchedulerStopped on shutdown."""
        if self._closed:
            raise SchedulerStopped
        job = _Job(work, self._loop.create_future())
        self._waiting.append(job)
        self._update()
        try:
            await job.future
        finally:
            # A cancelled handler (the client went away) must stop taking a share of the batch
            # and free its slot, or every later request would be slowed by a ghost.
            if job in self._active:
                self._active.remove(job)
                self._update()
            elif job in self._waiting:
                self._waiting.remove(job)

    def _update(self) -> None:
        """Advance every active job to now, finish the done ones, admit waiters, re-arm."""
        now = self._loop.time()
        # Everyone active progressed at the same rate since the last event.
        progress = (now - self._stamp) * self._rate
        self._stamp = now
        slack = self._rate * _TIME_SLACK_S
        still_active: list[_Job] = []
        for job in self._active:
            job.remaining -= progress
            if job.remaining <= slack:
                if not job.future.done():
                    job.future.set_result(None)
            else:
                still_active.append(job)
        self._active = still_active
        while self._waiting and len(self._active) < self._sim.max_batch:
            self._active.append(self._waiting.popleft())
        self._rate = self._sim.rate(len(self._active))
        self._on_active(len(self._active))
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._active:
            first = min(job.remaining for job in self._active)
            self._timer = self._loop.call_at(now + max(first, 0.0) / self._rate, self._update)

    def close(self) -> None:
        """Fail every queued and active job so their handlers can finish (server shutdown)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for job in [*self._active, *self._waiting]:
            if not job.future.done():
                job.future.set_exception(SchedulerStopped())
        self._active.clear()
        self._waiting.clear()
        self._on_active(0)
