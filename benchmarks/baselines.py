"""The dispatch designs wiki_assets is compared against, sending exactly the engine's requests.

Every design here replays request bodies the engine itself sent (recorded by
:class:`benchmarks.recording.RecordingServer` during one of the engine's rows): the same messages
(system prompt, page prompt with the document's language and related-document candidates), the
same ``response_format``, ``max_tokens`` and ``temperature``; only ``model`` is set per target.
So the simulated servers see identical requests whichever design sends them (the benchmark
checks this by comparing the prompt tokens the servers counted), and they stay identical as the
engine's prompts evolve. Clients use the engine's timeout and retry settings.

* :func:`lockstep` — the seed design: batches of 32, each split evenly across the models, each
  model working through its share with ``workers`` requests in flight; the next batch starts only
  when every share has returned, so the fast model idles while the slow one finishes.
* :func:`static_split` — documents pre-assigned round-robin; each model works through its own
  list with ``workers`` in flight; done when the slower model is.
* :func:`litellm_router` — LiteLLM's Router over both deployments, with ``in_flight`` requests
  open in total (an ``asyncio.Semaphore`` around ``router.acompletion``).
* :func:`bare_loop` — one model, a fixed number of worker tasks pulling from an ``asyncio.Queue``
  with ``openai.AsyncOpenAI``: nothing but the requests (the overhead floor).

Each returns a :class:`DesignResult` with its makespan, measured from just before the first
request to the last answer (client construction excluded).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai

# How wiki_assets.engine.llm.client.ModelClient configures its client.
TIMEOUT_S = 120.0
MAX_RETRIES = 2
API_KEY = "x"

Body = dict[str, Any]  # a recorded chat completion request body
Send = Callable[[Body], Awaitable[Any]]

# Body fields both clients take as keyword arguments; anything else travels as extra_body.
_KNOWN = ("messages", "max_tokens", "temperature", "response_format")


def request_kwargs(body: Body) -> dict[str, Any]:
    """Keyword arguments that send ``body`` again (without its ``model``)."""
    kwargs = {key: body[key] for key in _KNOWN if key in body}
    extra = {k: v for k, v in body.items() if k not in _KNOWN and k not in ("model", "stream")}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


@dataclass(frozen=True, slots=True)
class Target:
    """One OpenAI-compatible model endpoint."""

    model: str
    base_url: str


@dataclass
class DesignResult:
    ok: int = 0
    failed: int = 0
    makespan_s: float = 0.0
    finished_s: dict[str, float] = field(default_factory=dict)  # model -> its last answer
    errors: list[str] = field(default_factory=list)  # the first few failures
    started: float = field(default_factory=time.perf_counter)

    def start(self) -> None:
        self.started = time.perf_counter()

    def answered(self, model: str) -> None:
        self.ok += 1
        self.finished_s[model] = time.perf_counter() - self.started

    def fail(self, error: BaseException) -> None:
        self.failed += 1
        if len(self.errors) < 3:
            self.errors.append(f"{type(error).__name__}: {error}"[:200])

    def finish(self) -> DesignResult:
        self.makespan_s = time.perf_counter() - self.started
        return self


def _client(target: Target, aiohttp: bool = False) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=target.base_url,
        api_key=API_KEY,
        timeout=TIMEOUT_S,
        max_retries=MAX_RETRIES,
        http_client=openai.DefaultAioHttpClient() if aiohttp else None,
    )


def _openai_send(client: openai.AsyncOpenAI, model: str) -> Send:
    async def send(body: Body) -> Any:
        return await client.chat.completions.create(model=model, **request_kwargs(body))

    return send


def _model_of(response: Any, fallback: str) -> str:
    """The model that answered, as the server named it (LiteLLM may prefix its provider)."""
    model = getattr(response, "model", None)
    return model.rsplit("/", 1)[-1] if isinstance(model, str) and model else fallback


async def _one(send: Send, body: Body, result: DesignResult, fallback: str) -> None:
    try:
        response = await send(body)
        if not response.choices or not (response.choices[0].message.content or "").strip():
            raise ValueError("empty answer")
    except Exception as error:  # a failed request is counted, not fatal
        result.fail(error)
        return
    result.answered(_model_of(response, fallback))


async def _drain(
    send: Send, items: Sequence[Body], workers: int, result: DesignResult, label: str
) -> None:
    """Work through ``items`` with ``workers`` requests in flight."""
    queue: asyncio.Queue[Body] = asyncio.Queue()
    for body in items:
        queue.put_nowait(body)

    async def worker() -> None:
        while not queue.empty():
            await _one(send, queue.get_nowait(), result, label)

    await asyncio.gather(*(worker() for _ in range(min(workers, len(items)))))


async def lockstep(
    targets: Sequence[Target], requests: Sequence[Body], workers: int, batch_size: int = 32
) -> DesignResult:
    clients = [_client(t) for t in targets]
    result = DesignResult()
    try:
        result.start()
        for first in range(0, len(requests), batch_size):
            batch = requests[first : first + batch_size]
            shares = [batch[i :: len(targets)] for i in range(len(targets))]
            await asyncio.gather(
                *(
                    _drain(_openai_send(c, t.model), share, workers, result, t.model)
                    for c, t, share in zip(clients, targets, shares, strict=True)
                )
            )
        return result.finish()
    finally:
        for client in clients:
            await client.close()


async def static_split(
    targets: Sequence[Target], requests: Sequence[Body], workers: int
) -> DesignResult:
    clients = [_client(t) for t in targets]
    result = DesignResult()
    try:
        shares = [requests[i :: len(targets)] for i in range(len(targets))]
        result.start()
        await asyncio.gather(
            *(
                _drain(_openai_send(c, t.model), share, workers, result, t.model)
                for c, t, share in zip(clients, targets, shares, strict=True)
            )
        )
        return result.finish()
    finally:
        for client in clients:
            await client.close()


async def bare_loop(
    target: Target, requests: Sequence[Body], in_flight: int, aiohttp: bool = False
) -> DesignResult:
    """``chat.completions.create`` in ``in_flight`` loops; ``aiohttp``: on openai's aiohttp
    transport instead of its default httpx one."""
    client = _client(target, aiohttp)
    result = DesignResult()
    try:
        result.start()
        await _drain(_openai_send(client, target.model), requests, in_flight, result, target.model)
        return result.finish()
    finally:
        await client.close()


# --------------------------------------------------------------------------------------------
# LiteLLM


def import_litellm() -> tuple[Any | None, str]:
    """``(litellm, version)``, or ``(None, reason)`` when it cannot be imported."""
    # LiteLLM fetches its model cost map from the internet at import unless told not to.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    try:
        import litellm
    except Exception as error:  # ImportError or anything its import raises
        return None, f"litellm not importable ({type(error).__name__}: {error})"[:200]
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    from importlib.metadata import version

    return litellm, version("litellm")


async def litellm_router(
    litellm: Any,
    targets: Sequence[Target],
    requests: Sequence[Body],
    in_flight: int,
    routing_strategy: str,
) -> DesignResult:
    """LiteLLM's Router with one deployment per target, ``in_flight`` requests open in total."""
    router = litellm.Router(
        model_list=[
            {
                "model_name": "bench",
                "litellm_params": {
                    "model": f"openai/{t.model}",
                    "api_base": t.base_url,
                    "api_key": API_KEY,
                },
            }
            for t in targets
        ],
        routing_strategy=routing_strategy,
        num_retries=MAX_RETRIES,
        timeout=TIMEOUT_S,
    )

    async def send(body: Body) -> Any:
        return await router.acompletion(model="bench", **request_kwargs(body))

    limit = asyncio.Semaphore(in_flight)

    async def one(body: Body) -> None:
        async with limit:
            await _one(send, body, result, "?")

    result = DesignResult()
    result.start()
    await asyncio.gather(*(one(b) for b in requests))
    return result.finish()
