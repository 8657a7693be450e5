"""Models that leave a run for good: a model served by a child process of the run (the embedded
model) whose process died.

Such a model is not down for a while, as the breaker (:class:`~.limits.Breaker`) assumes of a
model whose requests fail: nothing will answer on its port again. So the run watches the process
and, the moment it has died, takes the model out for the rest of the run with the process's own
account of its death (exit code or signal, last lines), instead of letting its requests fail one
by one and its breaker probe it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from wiki_assets.engine.dispatch import retry
from wiki_assets.engine.dispatch.lane import Lane

SERVER_WATCH_S = 0.25  # how often the run looks whether a model's server process has died


class Departures:
    """Watches the lanes whose model has a ``gone`` check, and retires those that die."""

    def __init__(
        self,
        lanes: Sequence[Lane],
        *,
        stop: Callable[[str], None],
        wake: Callable[[], None],
        log: Any = None,
    ) -> None:
        self.lanes = lanes
        self.stop = stop  # ends the run, cancelling its requests in flight
        self.wake = wake  # every waiting worker looks again
        self.log = log

    @property
    def watched(self) -> bool:
        return any(lane.gone is not None for lane in self.lanes)

    async def watch(self) -> None:
        """Until cancelled (once every worker has ended): a model whose server died leaves the
        run within :data:`SERVER_WATCH_S`."""
        watched = [lane for lane in self.lanes if lane.gone is not None]
        while watched:
            await asyncio.sleep(SERVER_WATCH_S)
            for lane in list(watched):
                assert lane.gone is not None
                notice = lane.gone()
                if notice is not None:
                    watched.remove(lane)
                    self.retire(lane, notice)

    def retire(self, lane: Lane, reason: str) -> None:
        """``lane``'s model is gone for good (``reason``: its server died, how, its last lines):
        its requests in flight stop and their documents go back to the queue for the other
        models; with no model left, the run stops and leaves them for the next run."""
        if lane.breaker.retired:
            return
        lane.breaker.retire()
        lane.tally.gone = reason
        if self.log is not None:
            self.log.error(f"model {lane.endpoint.name} is out for the rest of the run: {reason}")
        for attempt in lane.attempts:
            if attempt.task is not None:
                attempt.task.cancel()
        if all(other.breaker.retired for other in self.lanes):
            self.stop(retry.all_down_reason(self.lanes))
        self.wake()
