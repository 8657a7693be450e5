"""Fleet-wide workers: a model's limit on workers across every run that shares it.

A model with ``max_in_flight`` (its setting's name: the most workers of every run together) lets
a worker send only while it holds one of that model's worker leases in the state store
(:class:`~wiki_assets.engine.state.leases.WorkerLeases`); without a limit, or without a store,
every worker may send. A worker keeps its lease while it works and gives it back whenever it
waits, so that another run can use it meanwhile.
"""

from __future__ import annotations

import asyncio
from typing import Any

from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.state.leases import WorkerLeases


class FleetWorkers:
    """The workers' fleet-wide leases (see the module docstring)."""

    def __init__(self, leases: WorkerLeases | None) -> None:
        self.leases = leases

    async def take(self, lane: Lane, worker: int) -> bool:
        """Whether ``lane``'s ``worker``-th worker may send a request: always, unless the model
        has a fleet-wide limit, in which case the worker must hold one of its leases in the
        state store."""
        limit = lane.endpoint.max_in_flight
        if self.leases is None or limit is None or worker in lane.leased:
            return True
        held = await asyncio.to_thread(self.leases.try_acquire, lane.endpoint.identity, limit)
        lane.lease_blocked = held is None
        if held is None:
            return False
        lane.leased[worker] = held
        return True

    async def release(self, lane: Lane, worker: int) -> None:
        held = lane.leased.pop(worker, None)
        if held is not None and self.leases is not None:
            await asyncio.to_thread(self.leases.release, lane.endpoint.identity, held)

    async def renew(self, log: Any = None) -> None:
        """Keep every lease held alive, until cancelled. A renewal that fails ends the renewal,
        not the run: the leases then expire after their time to live, as those of a run that
        died do."""
        assert self.leases is not None
        try:
            while True:
                await asyncio.sleep(self.leases.ttl_s / 3)
                await asyncio.to_thread(self.leases.renew)
        except Exception as error:
            if log is not None:
                # (log text users know: it keeps the word "slots")
                log.warning(f"fleet-wide model slots no longer renewed: {error}")
