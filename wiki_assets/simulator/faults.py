"""Fault injection decisions: which fault, if any, a request meets, from seeded dice."""

from __future__ import annotations

import enum
import random

from wiki_assets.simulator.model import SimModel

__all__ = ["Fault", "FaultDice"]


class Fault(enum.Enum):
    """A fault a request can meet; each value names the :class:`SimStats` counter it bumps."""

    DROP = "dropped"  # the server is "dead" (die_after): close the connection, no answer
    ERROR = "errors"  # HTTP 500
    RATE_LIMIT = "rate_limited"  # HTTP 429 with Retry-After
    HANG = "hung"  # accept, never answer
    GARBAGE = "garbage"  # HTTP 200 with a body that is not JSON


class FaultDice:
    """The fault rates of one model rolled with ``random.Random(sim.seed)``.

    Not thread-safe: the caller serializes :meth:`roll` and :meth:`rewind`.
    """

    def __init__(self, sim: SimModel) -> None:
        self._sim = sim
        self._rng = random.Random(sim.seed)

    def rewind(self) -> None:
        """Start the sequence of draws over, as from a fresh server."""
        self._rng = random.Random(self._sim.seed)

    def roll(self, answered: int) -> Fault | None:
        """The fault the next request meets after ``answered`` answers, or None to answer it."""
        sim = self._sim
        dead = sim.die_after is not None and answered >= sim.die_after
        # Every request draws all four numbers, a dead server's too, so that the sequence of
        # faults for a seed does not depend on which fault rates are switched on.
        draws = [self._rng.random() for _ in range(4)]
        if dead:
            return Fault.DROP
        # In a fixed order: when several draws hit, the first fault in this order wins.
        if draws[0] < sim.error_rate:
            return Fault.ERROR
        if draws[1] < sim.rate_limit_rate:
            return Fault.RATE_LIMIT
        if draws[2] < sim.hang_rate:
            return Fault.HANG
        if draws[3] < sim.garbage_rate:
            return Fault.GARBAGE
        return None
