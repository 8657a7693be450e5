"""Ending tasks for good: what an owner of tasks calls on its way out.

A task that is only cancelled has been asked to end, not ended: it still runs its cleanup (a
request closes its connection, a reader sees its pipe close) on a later turn of the loop, after
its owner has moved on. Each owner of tasks in the engine ends them through
:func:`cancel_and_wait` (or waits for them to end of themselves, :func:`ended`) on every path
out (done, failed, cancelled), as ``asyncio.TaskGroup`` does for its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until each has ended (see :func:`ended`). A task cancelled
    already is only waited for: a second cancel would cut its cleanup short."""
    pending = _pending(tasks)
    for task in pending:
        if not (isinstance(task, asyncio.Task) and task.cancelling()):
            task.cancel()
    await ended(pending)


async def ended(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Wait until each of ``tasks`` has ended. A caller cancelled meanwhile still waits for them,
    as a task group does, and its cancellation is raised once they have ended."""
    pending = set(_pending(tasks))
    interrupted: asyncio.CancelledError | None = None
    while pending:
        try:
            await asyncio.wait(pending)
        except asyncio.CancelledError as error:
            interrupted = error
        pending = {task for task in pending if not task.done()}
    if interrupted is not None:
        raise interrupted


def _pending(tasks: Iterable[asyncio.Future[Any]]) -> list[asyncio.Future[Any]]:
    """The tasks not ended yet. One whose event loop is closed is left out: it never runs again
    (its owner is being closed with it, as garbage, maybe while another loop runs), and there
    is nothing to wait for."""
    return [task for task in tasks if not task.done() and not task.get_loop().is_closed()]
