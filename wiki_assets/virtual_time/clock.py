"""An asyncio event loop on a virtual clock: time jumps to the next timer instead of passing.

Everything that waits on the loop (``asyncio.sleep``, ``asyncio.timeout``, ``call_later``) runs
at once in wall-clock terms, in the same order as it would in real time, so an hour of a run's
waiting takes milliseconds and every run of a seed is the same. Nothing may use real I/O or
threads: the selector never reports a file ready. If nothing is ready and no timer is set, every
task waits for another forever, and if tasks keep running without time ever passing, they wake
each other forever: either way the loop raises :class:`Stuck` rather than hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

T = TypeVar("T")
SPIN_LIMIT = 20_000  # loop iterations at one instant: tasks that wake each other forever


class Stuck(RuntimeError):
    """Every task waits and no timer will wake any of them: a deadlock."""


class _VirtualSelector(selectors.BaseSelector):
    """Registers files (the loop's own wake-up pipe) but never waits on them; ``select`` moves
    the clock forward by its timeout instead."""

    def __init__(self) -> None:
        self._keys: dict[int, selectors.SelectorKey] = {}
        self.loop: VirtualClockLoop | None = None

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        key = selectors.SelectorKey(fileobj, fd, events, data)
        self._keys[fd] = key
        return key

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
        return self._keys.pop(fd)

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            raise Stuck("nothing is ready and no timer is set: every task waits forever")
        assert self.loop is not None
        self.loop.advance(max(0.0, timeout))
        return []

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._keys

    def close(self) -> None:
        self._keys.clear()


class VirtualClockLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        selector = _VirtualSelector()
        self._virtual_now = 0.0
        self._spins = 0
        super().__init__(selector)
        selector.loop = self

    def time(self) -> float:
        return self._virtual_now

    def reset_spins(self) -> None:
        self._spins = 0

    def advance(self, seconds: float) -> None:
        if seconds > 0:
            self._virtual_now += seconds
            self._spins = 0
            return
        self._spins += 1
        if self._spins > SPIN_LIMIT:
            raise Stuck(
                f"{SPIN_LIMIT} loop iterations at t={self._virtual_now:.3f} s without time "
                "passing: tasks wake each other forever (a livelock)"
            )


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a virtual clock."""
    loop = VirtualClockLoop()
    try:
        return loop.run_until_complete(main)
    finally:
        try:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            # A livelock's count of spins is spent: reset, or the cancelled tasks would be
            # declared stuck at their first step and left pending on a closed loop.
            loop.reset_spins()
            if pending:
                with contextlib.suppress(Stuck):  # tasks that ignore their cancellation
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        finally:
            loop.close()
