"""The run's link candidates helper (:mod:`~wiki_assets.engine.related.service`): asked for by the
plan while it still indexes, so that its start-up overlaps the indexing of the rest of the
corpus instead of delaying the first request, and closed with the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from wiki_assets.engine.ingestion.plan import RELATED_CANDIDATES, RunPlan
from wiki_assets.engine.ingestion.progress import Log
from wiki_assets.engine.related.service import CandidatesService


async def plan_beside_helper(
    make_plan: Callable[[Callable[[], None]], RunPlan], db_path: Path, log: Log
) -> tuple[RunPlan, CandidatesService | None]:
    """``make_plan(helper_wanted)`` on a thread (it reads, hashes and indexes the corpus), and the
    link candidates helper of the index at ``db_path`` if the plan started one: the plan calls
    ``helper_wanted()`` as soon as it knows the helper will be wanted, and the event loop starts
    it meanwhile. If the plan fails, a helper it started is closed: the start is always waited
    for, never left running."""
    loop = asyncio.get_running_loop()
    started: list[asyncio.Task[CandidatesService]] = []

    def start_helper() -> None:  # on the event loop
        start = CandidatesService.start(db_path, RELATED_CANDIDATES)
        started.append(asyncio.create_task(start))

    def helper_wanted() -> None:  # on the plan's thread
        loop.call_soon_threadsafe(start_helper)

    try:
        plan = await asyncio.to_thread(make_plan, helper_wanted)
    except BaseException:
        for start in started:  # scheduled before the plan's end: never left running
            await close_helper(await start, log)
        raise
    # The plan's call to start_helper, if any, was queued before its result.
    return plan, (await started[0] if started else None)


async def close_helper(service: CandidatesService, log: Log) -> None:
    failure = await service.close()
    if failure is not None:
        log.warning(f"link candidates helper failed ({failure}); the run answered them")
