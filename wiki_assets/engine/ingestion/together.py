"""The dispatcher's run with the periodic flush of its pages beside it, in one task group."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from wiki_assets.engine.dispatch import Dispatcher
from wiki_assets.engine.ingestion.flush import Pages


async def dispatch_beside_flushes(
    dispatcher: Dispatcher, pages: Pages, flush_seconds: float, flushed: Callable[[], None]
) -> Exception | None:
    """The dispatcher's run, and beside it, in one task group, the periodic flush of ``pages``
    (every ``flush_seconds``, calling ``flushed`` after each), which ends (cancelled: a flush in
    progress goes on, see :meth:`~.flush.Pages.flush_periodically`) once the dispatcher has. The
    dispatcher's error comes out as it was raised; the flush's is returned (the flush stopped the
    dispatcher itself, letting requests in flight end), with the dispatcher's, if any, as its
    context."""
    flush_failures: list[Exception] = []

    async def flush() -> None:
        try:
            await pages.flush_periodically(dispatcher, flush_seconds, flushed)
        except Exception as error:  # kept out of the group: it would cancel the dispatcher
            flush_failures.append(error)

    dispatch_failure: Exception | None = None
    async with asyncio.TaskGroup() as group:
        flusher = group.create_task(flush())
        try:
            await dispatcher.run()
        except Exception as error:  # raised as it is, after the group, not wrapped in it
            dispatch_failure = error
        finally:
            flusher.cancel()
    if flush_failures:
        if dispatch_failure is not None:
            flush_failures[0].__context__ = dispatch_failure
        return flush_failures[0]
    if dispatch_failure is not None:
        raise dispatch_failure
    return None
