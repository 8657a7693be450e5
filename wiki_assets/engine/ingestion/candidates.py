"""The run's link candidates helper (:mod:`~wiki_assets.engine.related.service`): asked for by the
plan while it still indexes, so that its start-up overlaps the indexing of the rest of the
corpus instead of delaying the first request, and closed with the run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from wiki_assets.engine.ending_tasks import cancel_and_wait, ended
from wiki_assets.engine.ingestion.plan import RELATED_CANDIDATES, RunPlan
from wiki_assets.engine.ingestion.progress import Log
from wiki_assets.engine.related.service import CandidatesService


async def plan_beside_helper(
    make_plan: Callable[[Callable[[], None]], RunPlan], db_path: Path, log: Log
) -> tuple[RunPlan, CandidatesService | None]:
    """``make_plan(helper_wanted)`` on a thread (it reads, hashes and indexes the corpus), and the
    link candidates helper of the index at ``db_path`` if the plan started one: the plan calls
    ``helper_wanted()`` as soon as it knows the helper will be wanted, and the event loop starts
    it meanwhile. The plan's thread and the helper's start end before this returns or raises:
    cancelled, it waits for the plan still (a thread cannot be cancelled, and the plan uses the
    run's journal and index, which its caller closes next); failed or cancelled, it cancels
    the helper's start, or closes the helper started, and none is left running."""
    loop = asyncio.get_running_loop()
    starts: list[asyncio.Task[CandidatesService]] = []

    def start_helper() -> None:  # on the event loop
        starts.append(asyncio.create_task(CandidatesService.start(db_path, RELATED_CANDIDATES)))

    def helper_wanted() -> None:  # on the plan's thread
        loop.call_soon_threadsafe(start_helper)

    planning = asyncio.ensure_future(asyncio.to_thread(make_plan, helper_wanted))
    try:
        await ended([planning])
        # The plan's call to start_helper, if any, was queued before its result.
        return planning.result(), (await starts[0] if starts else None)
    except BaseException:
        if planning.done() and not planning.cancelled():
            planning.exception()  # (retrieved: what is raised here says why the run stopped)
        await cancel_and_wait(starts)
        for start in starts:
            if not start.cancelled() and start.exception() is None:
                await close_helper(start.result(), log)
        raise


async def helper_for_plan(
    plan: RunPlan,
    helper: CandidatesService | None,
    db_path: Path,
    cleanup: contextlib.AsyncExitStack,
    log: Log,
) -> CandidatesService | None:
    """The helper that answers the plan's candidates beside its requests, told the plan (started
    now if the plan did not start one), and closed with the run by ``cleanup``; None when the
    plan's candidates are not answered by one (a helper it started is closed then too)."""
    if helper is not None:
        cleanup.push_async_callback(close_helper, helper, log)
    if not plan.answers_beside:
        return None
    if helper is None:
        helper = await CandidatesService.start(db_path, RELATED_CANDIDATES)
        cleanup.push_async_callback(close_helper, helper, log)
    helper.send_plan(plan.answers_beside)
    return helper


async def close_helper(service: CandidatesService, log: Log) -> None:
    failure = await service.close()
    if failure is not None:
        log.warning(f"link candidates helper failed ({failure}); the run answered them")
