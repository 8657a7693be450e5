"""The dispatcher's run with the periodic flush of its pages beside it, in one task group, and
the wind-down after it (:func:`summarize`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from wiki_assets.engine.dispatch import Dispatcher, Lane
from wiki_assets.engine.ingestion.fleet import wound_down
from wiki_assets.engine.ingestion.flush import Pages
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.state.leases import WorkerLeases


async def summarize(
    dispatcher: Dispatcher,
    pages: Pages,
    lanes: Sequence[Lane],
    leases: WorkerLeases | None,
    report: IngestReport,
    flush_seconds: float,
    flushed: Callable[[], None],
) -> None:
    """The dispatcher's run with the periodic flush beside it (:func:`dispatch_beside_flushes`),
    then the wind-down (:func:`wind_down`), which a failed flush skips: the run ends on the
    flush's error as it is, and the next run finishes what this one left."""
    try:
        flush_failure = await dispatch_beside_flushes(dispatcher, pages, flush_seconds, flushed)
    except BaseException:
        await wind_down(dispatcher, pages, lanes, leases, report)
        raise
    if flush_failure is not None:
        raise flush_failure
    await wind_down(dispatcher, pages, lanes, leases, report)


async def wind_down(
    dispatcher: Dispatcher,
    pages: Pages,
    lanes: Sequence[Lane],
    leases: WorkerLeases | None,
    report: IngestReport,
) -> None:
    """After the dispatcher: worker leases given back, clients closed, its figures and each
    model's last ones taken, what is left for the next run, and every page still waiting written."""
    if leases is not None:
        leases.close()  # gives back every worker lease this run still holds
    pages.writer.close()
    await wound_down(lanes, report.models)
    if report.tally.stopped is not None:
        report.unfinished = dispatcher.remaining()
    pages.final_flush()


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
