"""Simulated models in virtual time: the dispatcher's :class:`~wiki_assets.engine.dispatch.Client`
without sockets.

The timing is the simulated HTTP server's own continuous-batching scheduler
(:class:`~wiki_assets.simulator.BatchScheduler`) on the virtual clock; on top of it,
per-request latency noise and the faults the real client turns into :class:`ModelError` after
its retries: HTTP 500 and 429 (retried with backoff, honouring Retry-After, then "unavailable"),
hangs (until the endpoint's timeout), unparsable answers, and a model that dies for a while and
comes back.
A long document comes as parts (notes on each) and then its page from the notes, as the real
client is asked; one longer than this model's own context is taken in parts here, as the real
client does.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.prompting.budget import (
    ASCII_TOKENS_PER_CHAR,
    PROMPT_OVERHEAD_TOKENS,
    estimate_tokens,
)
from wiki_assets.engine.prompting.candidate import PageRequest
from wiki_assets.engine.prompting.page import PageDraft
from wiki_assets.engine.prompting.results import Notes, Summary
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.simulator import BatchScheduler, SimModel

RETRY_BACKOFF_S = 0.5  # the openai client's first backoff, doubled per retry


@dataclass(frozen=True)
class Outage:
    """The model is unreachable from ``start`` for ``seconds`` (inf: it never comes back)."""

    start: float
    seconds: float

    def covers(self, begin: float, end: float) -> bool:
        return begin < self.start + self.seconds and end >= self.start


@dataclass
class Traffic:
    """What one simulated model saw: requests per document, and duplicate requests in flight."""

    requests: int = 0
    answered: int = 0
    in_flight: dict[str, int] = field(default_factory=dict)  # document -> its requests now
    overlapping: dict[str, int] = field(default_factory=dict)  # document -> requests it raced


_DRAFT = PageDraft(title="t", description="d", summary="s")


def simulated_text(tokens: int) -> str:
    """A text the engine's estimate counts as ``tokens`` tokens (only its length matters here)."""
    return "x" * math.ceil(max(0, tokens - 1) / ASCII_TOKENS_PER_CHAR)


class VirtualModel:
    """One simulated endpoint. ``tokens`` gives each document's prompt tokens (the text itself is
    not simulated); ``shared`` is the fleet's traffic per document, to see races."""

    def __init__(
        self,
        sim: SimModel,
        endpoint: Endpoint,
        max_tokens: int,
        tokens: Callable[[str], int],
        *,
        noise: float = 0.0,
        outages: Sequence[Outage] = (),
        seed: int = 0,
        shared: dict[str, int] | None = None,
    ) -> None:
        self.sim = sim
        self.endpoint = endpoint
        self.max_tokens = endpoint.max_tokens or max_tokens
        self.tokens = tokens
        self.noise = noise
        self.outages = list(outages)
        self.rng = random.Random(seed)
        self.traffic = Traffic()
        self.shared = shared if shared is not None else {}
        self.on_overload: Callable[[], None] | None = None
        self._scheduler: BatchScheduler | None = None

    async def close(self) -> None:
        return None

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _down(self, begin: float, end: float) -> bool:
        return any(outage.covers(begin, end) for outage in self.outages)

    async def summarize(self, request: PageRequest) -> Summary:
        with self._racing(request.path):
            return await self._summarize(request.path, request.notes, request.parts)

    async def notes(self, path: str, text: str, part: int, parts: int, language: str) -> Notes:
        # A part is known by its place and length: a later round of notes on the notes has
        # parts of other lengths, which may start the instant the last one's loser stops.
        with self._racing(f"{path}#{part}/{parts}:{len(text)}"):
            prompt = estimate_tokens(text) + PROMPT_OVERHEAD_TOKENS
            out, _ = await self._request(prompt)
            return Notes(simulated_text(out), self.endpoint.model, prompt, out, 1)

    async def judge(self, text: str, sentences: Sequence[str]) -> Judgement:
        """A judge's request on a page: its document and sentences in, a verdict per sentence
        out (the simulation counts the request's time, not what it says)."""
        prompt = estimate_tokens(text) + PROMPT_OVERHEAD_TOKENS
        out, _ = self.sim.output_tokens(prompt, self.max_tokens)
        # Served like any request, but drawing none of the model's random numbers: a scenario's
        # faults and jitter stay what they are with or without judges.
        await self._serve(self.sim.work(prompt, out))
        return Judgement((), self.endpoint.model, prompt, out)

    @contextlib.contextmanager
    def _racing(self, key: str) -> Iterator[None]:
        """Counts requests for the same document (or part) in flight at once, fleet-wide."""
        racing = self.shared.get(key, 0)
        self.shared[key] = racing + 1
        if racing:
            self.traffic.overlapping[key] = self.traffic.overlapping.get(key, 0) + 1
        try:
            yield
        finally:
            self.shared[key] -= 1

    async def _summarize(self, path: str, notes: str | None, noted: int) -> Summary:
        if notes is not None:  # a long document's page, from the notes on its parts
            page_prompt = estimate_tokens(notes) + PROMPT_OVERHEAD_TOKENS
            out, capped = await self._request(page_prompt)
            return Summary(
                draft=_DRAFT,
                model=self.endpoint.model,
                prompt_tokens=page_prompt,
                completion_tokens=out,
                finish_reason="length" if capped else "stop",
                parts=noted,
                requests=1,
            )
        budget = max(64, self.endpoint.context_tokens - self.max_tokens - PROMPT_OVERHEAD_TOKENS)
        tokens = self.tokens(path) - PROMPT_OVERHEAD_TOKENS
        parts = max(1, math.ceil(tokens / budget))
        prompt = completion = 0
        if parts > 1:
            # Notes on each part, then the page from the notes (one level is enough here).
            for _ in range(parts):
                part_prompt = min(budget, tokens) + PROMPT_OVERHEAD_TOKENS
                out, _ = await self._request(part_prompt)
                prompt, completion = prompt + part_prompt, completion + out
            tokens = min(budget, parts * self.max_tokens)
        page_prompt = tokens + PROMPT_OVERHEAD_TOKENS
        out, capped = await self._request(page_prompt)
        return Summary(
            draft=_DRAFT,
            model=self.endpoint.model,
            prompt_tokens=prompt + page_prompt,
            completion_tokens=completion + out,
            finish_reason="length" if capped else "stop",
            parts=parts,
            requests=parts + (parts > 1),
        )

    async def _request(self, prompt_tokens: int) -> tuple[int, bool]:
        """One chat completion with the client's retries; returns its completion tokens."""
        sim = self.sim
        for retry in range(self.endpoint.max_retries + 1):
            self.traffic.requests += 1
            begin = self._now()
            if self._down(begin, begin):
                await asyncio.sleep(0.001)  # connection refused
                raise ModelError(f"model {self.endpoint.name}: connection failed", "unavailable")
            # Every request draws every number, so a seed's faults do not depend on the rates.
            error, limited, hang, garbage, jitter = (self.rng.random() for _ in range(5))
            if error < sim.error_rate or limited < sim.rate_limit_rate:
                if self.on_overload is not None:
                    self.on_overload()
                last = "HTTP 500" if error < sim.error_rate else "HTTP 429"
                wait = sim.retry_after_s if last == "HTTP 429" else RETRY_BACKOFF_S * 2**retry
                if retry < self.endpoint.max_retries:
                    await asyncio.sleep(wait)
                    continue
                raise ModelError(f"model {self.endpoint.name}: {last}", "unavailable")
            out, capped = sim.output_tokens(prompt_tokens, self.max_tokens)
            work = sim.work(prompt_tokens, out)
            if self.noise:
                work *= math.exp(self.noise * (2 * jitter - 1))
            try:
                # The client's timeout covers the whole request; openai retries a timeout too.
                async with asyncio.timeout(self.endpoint.timeout_s):
                    if hang < sim.hang_rate:
                        await asyncio.Event().wait()  # accepted, never answered
                    if sim.latency_s:
                        await asyncio.sleep(sim.latency_s)
                    await self._serve(work)
            except TimeoutError:
                if retry < self.endpoint.max_retries:
                    await asyncio.sleep(RETRY_BACKOFF_S * 2**retry)
                    continue
                raise ModelError(f"model {self.endpoint.name}: timed out", "timeout") from None
            if self._down(begin, self._now()):
                raise ModelError(f"model {self.endpoint.name}: connection failed", "unavailable")
            if garbage < sim.garbage_rate:
                raise ModelError(f"model {self.endpoint.name}: unparsable answer", "garbage")
            self.traffic.answered += 1
            return out, capped
        raise AssertionError("unreachable")

    async def _serve(self, work: float) -> None:
        if self._scheduler is None:
            self._scheduler = BatchScheduler(self.sim, asyncio.get_running_loop(), _ignore)
        await self._scheduler.run(work)


def _ignore(active: int) -> None:
    return None
