"""The aiohttp application of one simulated model: its routes, thin handlers and listening site."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator

from aiohttp import web

from wiki_assets.simulator.answers import error_response
from wiki_assets.simulator.chat import ChatCompletions
from wiki_assets.simulator.embeddings import Embeddings
from wiki_assets.simulator.model import SimModel
from wiki_assets.simulator.request import Rejected
from wiki_assets.simulator.scheduler import BatchScheduler, SchedulerStopped
from wiki_assets.simulator.stats import Ledger

__all__ = ["SimApp"]


class SimApp:
    """Serves one model over HTTP on the running event loop, from :meth:`start` to :meth:`stop`.

    Routes: ``GET /v1/models``, ``POST /v1/chat/completions``, ``POST /v1/embeddings``, and for
    tests ``GET /sim/stats``
    and ``POST /sim/reset``. The ledger and the completion ids outlive the app (a restarted
    server keeps counting).
    """

    def __init__(self, sim: SimModel, ledger: Ledger, ids: Iterator[int]) -> None:
        self._sim = sim
        self._ledger = ledger
        self._ids = ids
        self._runner: web.AppRunner | None = None
        self._scheduler: BatchScheduler | None = None
        self._stopping: asyncio.Event | None = None
        self._completions: ChatCompletions | None = None
        self._embeddings: Embeddings | None = None

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host``:``port`` (0 picks a free port); returns the bound port."""
        self._stopping = asyncio.Event()
        self._scheduler = BatchScheduler(
            self._sim, asyncio.get_running_loop(), self._ledger.note_active
        )
        self._completions = ChatCompletions(
            self._sim, self._ledger, self._scheduler, self._stopping, self._ids
        )
        self._embeddings = Embeddings(self._sim, self._ledger, self._stopping)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embed)
        app.router.add_get("/sim/stats", self._stats)
        app.router.add_post("/sim/reset", self._reset)
        # handler_cancellation: a client that disconnects cancels its handler, which is how a
        # request leaves the batch (and how a timed-out hang ends) like on a real server.
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        return int(runner.addresses[0][1])

    async def stop(self) -> None:
        """Answer every waiting request 503, then close the site."""
        assert self._stopping is not None and self._scheduler is not None
        # Release everything that waits first, so the runner's graceful shutdown (which waits
        # for open handlers) finishes at once instead of after its timeout.
        self._stopping.set()
        self._scheduler.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _models(self, request: web.Request) -> web.Response:
        model = {"id": self._sim.model, "object": "model", "created": 0, "owned_by": "sim"}
        return web.json_response({"object": "list", "data": [model]})

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(dataclasses.asdict(self._ledger.snapshot()))

    async def _reset(self, request: web.Request) -> web.Response:
        self._ledger.reset()
        return web.json_response(dataclasses.asdict(self._ledger.snapshot()))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        assert self._completions is not None
        self._ledger.open_request()
        try:
            return await self._completions.answer(request)
        except Rejected as reject:
            self._ledger.count_rejected()
            return reject.response
        except SchedulerStopped:
            return error_response(503, "the simulated server is shutting down", "server_error")
        finally:
            self._ledger.close_request()

    async def _embed(self, request: web.Request) -> web.StreamResponse:
        assert self._embeddings is not None
        try:
            return await self._embeddings.answer(request)
        except Rejected as reject:
            self._ledger.count_rejected()
            return reject.response
        except SchedulerStopped:
            return error_response(503, "the simulated server is shutting down", "server_error")
