"""One chat completion from request to response: parse, meet a fault or queue, then answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from aiohttp import web

from wiki_assets.simulator.answers import answer_text, completion_body, error_response
from wiki_assets.simulator.faults import Fault
from wiki_assets.simulator.judge import judge_answer
from wiki_assets.simulator.model import SimModel
from wiki_assets.simulator.pages import page_answer
from wiki_assets.simulator.request import Rejected, parse_request
from wiki_assets.simulator.scheduler import BatchScheduler, SchedulerStopped
from wiki_assets.simulator.stats import Ledger
from wiki_assets.simulator.tokens import estimate_tokens

__all__ = ["ChatCompletions"]


class ChatCompletions:
    """Answers ``/v1/chat/completions`` for one model on its server's event loop.

    :meth:`answer` raises :class:`Rejected` for an invalid request and
    :class:`SchedulerStopped` when the server stops first; the HTTP handler turns both into
    responses. ``stopping`` is set by the server's shutdown and ends every wait here.
    """

    def __init__(
        self,
        sim: SimModel,
        ledger: Ledger,
        scheduler: BatchScheduler,
        stopping: asyncio.Event,
        ids: Iterator[int],
    ) -> None:
        self._sim = sim
        self._ledger = ledger
        self._scheduler = scheduler
        self._stopping = stopping
        self._ids = ids  # completion ids, shared across restarts of the server

    async def answer(self, request: web.Request) -> web.StreamResponse:
        """The response to one chat completion request."""
        sim = self._sim
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError) as exc:
            raise Rejected(error_response(400, f"request body is not valid JSON: {exc}")) from None
        parsed = parse_request(sim, body)
        self._ledger.log_request(parsed.document, request.headers.get("Authorization", ""))
        if self._stopping.is_set():
            raise SchedulerStopped

        fault = self._ledger.roll_fault()
        if fault is not None:
            return await self._inject(fault, request)

        # The text first, so the reported completion tokens are exactly the simulated ones.
        written = judge_answer(sim.judge, parsed.document, parsed.schema) or page_answer(
            sim.behaviour, parsed.document, parsed.schema, parsed.max_tokens
        )
        if written is None:
            output_tokens, capped = sim.output_tokens(parsed.prompt_tokens, parsed.max_tokens)
            content = answer_text(parsed.document, parsed.schema, parsed.as_json, output_tokens)
        else:
            # A behaviour's page is real text: its own length counts, cut (only in the count,
            # like structured answers) where max_tokens is shorter.
            natural = estimate_tokens(written)
            content, output_tokens = written, min(natural, parsed.max_tokens)
            capped = natural > parsed.max_tokens
        if not sim.instant:
            if sim.latency_s > 0:
                await self._pause(sim.latency_s)
            await self._scheduler.run(sim.work(parsed.prompt_tokens, output_tokens))

        self._ledger.count_answer(parsed.prompt_tokens, output_tokens)
        return web.json_response(
            completion_body(
                next(self._ids), sim.model, content, parsed.prompt_tokens, output_tokens, capped
            )
        )

    async def _inject(self, fault: Fault, request: web.Request) -> web.StreamResponse:
        """Act out ``fault`` (already counted by the ledger) on ``request``."""
        match fault:
            case Fault.DROP:
                return await self._drop(request)
            case Fault.ERROR:
                return error_response(500, "simulated internal server error", "server_error")
            case Fault.RATE_LIMIT:
                response = error_response(429, "simulated rate limit", "rate_limit_error")
                response.headers["Retry-After"] = f"{self._sim.retry_after_s:g}"
                return response
            case Fault.HANG:
                await self._stopping.wait()  # until stop(), or cancelled when the client leaves
                raise SchedulerStopped
            case Fault.GARBAGE:
                # A truncated body with a JSON content type, like a proxy cutting a response.
                return web.Response(
                    status=200,
                    text='{"id": "chatcmpl-garbage", "choices": [',
                    content_type="application/json",
                )

    async def _drop(self, request: web.Request) -> web.StreamResponse:
        """Close the connection without an answer, like a crashed server process."""
        transport = request.transport
        if transport is not None:
            transport.abort()
        # The lost connection cancels this handler within a loop iteration (handler_cancellation).
        # Waiting for that, rather than returning, keeps aiohttp from writing a response into a
        # closed socket; the pause only bounds the wait should the cancellation never come.
        await self._pause(1.0)
        raise SchedulerStopped

    async def _pause(self, delay: float) -> None:
        """Sleep ``delay`` seconds, but raise SchedulerStopped at once if the server stops.

        Every wait in a handler must end on stop(): the runner's graceful shutdown waits for
        open handlers, so one sleeping handler would hold stop() up for as long as it sleeps.
        """
        try:
            await asyncio.wait_for(self._stopping.wait(), delay)
        except TimeoutError:
            return
        raise SchedulerStopped
