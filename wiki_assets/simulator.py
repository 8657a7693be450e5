"""A simulated OpenAI-compatible chat-completions server that behaves like a batching LLM server.

Tests and throughput benchmarks talk to this over real HTTP instead of mocking the client, so
everything between the pipeline and the model (the ``openai`` client, connection pools, timeouts,
retries, concurrency limits) is exercised exactly as in production, in milliseconds and without
a GPU.

The timing model is that of a continuous-batching server such as vLLM:

* A request costs ``work = prompt_tokens / prefill_speedup + output_tokens`` token-units: prefill
  is batched and much cheaper per token than decoding, decoding is one token per step.
* At most ``max_batch`` requests are *active* (being decoded); the rest wait in FIFO order and
  are admitted as soon as a slot frees, which is where queueing latency comes from.
* Active requests share the accelerator by processor sharing: with ``n`` active requests each one
  progresses at ``min(per_request_tps, aggregate_tps / n)`` token-units per second. A lone request
  is bound by ``per_request_tps`` (memory bandwidth); a full batch by ``aggregate_tps`` (compute),
  so adding concurrency raises throughput until the aggregate limit, then only adds latency.

The scheduler is exact and event-driven: on every admission, completion or departure it advances
all active requests by ``elapsed * rate``, recomputes the rate and arms a single loop timer for
the earliest completion. There is no polling, so simulated durations do not depend on a tick.

On top of that there is deterministic fault injection (HTTP 500, 429 with Retry-After, hangs,
non-JSON bodies and a server that "dies" after a number of answers), vLLM/llama.cpp-style context
length errors, and deterministic answers derived from the last user message (a plain summary, or
JSON generated from the requested schema) so tests can check what travelled end to end.

The server runs its own event loop on a daemon thread (:class:`SimServer`), so synchronous code
and other event loops can use it alike; :func:`fleet` starts several at once. Run
``python -m wiki_assets.simulator --port 8001`` to serve one in the foreground.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import json
import math
import random
import signal
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

__all__ = [
    "PRESETS",
    "SimModel",
    "SimServer",
    "SimStats",
    "estimate_tokens",
    "truncate_to_tokens",
    "fleet",
    "main",
]

# Tokens of chat-template overhead per message (role markers, separators), as OpenAI documents.
_TOKENS_PER_MESSAGE = 4
# max_tokens when the request does not say, like llama.cpp's server default.
_DEFAULT_MAX_TOKENS = 256
# How many words of the document the plain-text answer quotes.
_SUMMARY_WORDS = 30
# A job whose remaining work would take less than this is finished. It absorbs float rounding
# and asyncio firing a timer up to one clock resolution early, so a timer never re-arms forever.
_TIME_SLACK_S = 1e-6
# Words for schema strings when the document has none (an empty user message).
_FALLBACK_WORDS = ("lorem", "ipsum", "dolor", "sit", "amet")


@dataclass(frozen=True)
class SimModel:
    """One simulated model endpoint: its speed, its limits and the faults it injects."""

    model: str = "sim-model"  # id served by /v1/models and echoed in responses
    per_request_tps: float = 600.0  # decode tokens/s a single request gets when alone
    aggregate_tps: float = 4800.0  # total decode tokens/s shared by all active requests
    max_batch: int = 16  # active requests at most; more wait FIFO (queueing)
    prefill_speedup: float = 10.0  # a prompt token costs 1/prefill_speedup of an output token
    output_ratio: float = 0.15  # natural output length = prompt_tokens * output_ratio ...
    min_output_tokens: int = 16  # ... at least this, and capped by the request's max_tokens
    context_tokens: int = 8192  # prompt + max_tokens above this -> HTTP 400 like vLLM/llama.cpp
    latency_s: float = 0.0  # fixed extra time per request (network/first-token)
    instant: bool = False  # answer at once, no simulated time (overhead benchmarks)
    # Fault injection: probabilities per request, drawn from random.Random(seed).
    error_rate: float = 0.0  # HTTP 500
    rate_limit_rate: float = 0.0  # HTTP 429 with header Retry-After: retry_after_s
    retry_after_s: float = 1.0
    hang_rate: float = 0.0  # accept, never answer (until the client disconnects/server stops)
    garbage_rate: float = 0.0  # HTTP 200 with a body that is not JSON
    die_after: int | None = None  # after this many answered requests, drop every connection
    seed: int = 0
    json_schema_support: bool = True  # False: reject json_schema with 500 like llama-cpp-python

    def __post_init__(self) -> None:
        # Fail at construction, not as a ZeroDivisionError deep inside the server loop.
        if self.per_request_tps <= 0 or self.aggregate_tps <= 0:
            raise ValueError("per_request_tps and aggregate_tps must be positive")
        if self.max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if self.prefill_speedup <= 0:
            raise ValueError("prefill_speedup must be positive")
        if self.latency_s < 0 or self.retry_after_s < 0:
            raise ValueError("latency_s and retry_after_s must not be negative")
        if self.die_after is not None and self.die_after < 0:
            raise ValueError("die_after must not be negative")

    def rate(self, active: int) -> float:
        """Token-units per second each of ``active`` concurrently decoded requests gets."""
        return min(self.per_request_tps, self.aggregate_tps / active) if active else 0.0

    def output_tokens(self, prompt_tokens: int, max_tokens: int) -> tuple[int, bool]:
        """Completion length for a prompt, and whether ``max_tokens`` cut it short."""
        natural = max(self.min_output_tokens, int(prompt_tokens * self.output_ratio))
        return min(max_tokens, natural), natural > max_tokens

    def work(self, prompt_tokens: int, output_tokens: int) -> float:
        """Token-units a request costs: cheap batched prefill plus one unit per output token."""
        return prompt_tokens / self.prefill_speedup + output_tokens


# Named starting points for the command line and benchmarks.
PRESETS: dict[str, SimModel] = {
    "fast": SimModel(per_request_tps=600.0, aggregate_tps=4800.0, max_batch=16),
    "slow": SimModel(per_request_tps=300.0, aggregate_tps=1200.0, max_batch=8),
    "instant": SimModel(instant=True),
}


@dataclass
class SimStats:
    """Counters of one server since start or the last reset."""

    requests: int = 0  # chat completion requests received
    answered: int = 0  # answered with a well-formed completion
    errors: int = 0  # injected HTTP 500s
    rate_limited: int = 0  # injected HTTP 429s
    hung: int = 0  # requests that were accepted and never answered
    garbage: int = 0  # HTTP 200s with a non-JSON body
    dropped: int = 0  # connections dropped because the server is "dead" (die_after)
    peak_active: int = 0  # most requests simultaneously being decoded (stays 0 when instant)
    peak_in_flight: int = 0  # most requests simultaneously open (what a concurrency limit bounds)
    prompt_tokens: int = 0  # over answered requests
    completion_tokens: int = 0  # over answered requests
    rejected: int = 0  # invalid requests: bad body, context overflow, unsupported json_schema


def estimate_tokens(text: str) -> int:
    """Approximate token count: ASCII at 4 chars/token, other characters at 1.7 tokens each.

    1.7 tokens per character is what SmolLM2's byte-level tokenizer spends on Korean, so
    non-Latin documents cost what they would on the real embedded model.
    """
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    ascii_chars = len(text) - non_ascii
    # Integer arithmetic (1/4 = 5/20, 1.7 = 34/20) so that e.g. 10 Korean characters are exactly
    # 17 tokens rather than ceil(17.000000000000004) = 18.
    return (5 * ascii_chars + 34 * non_ascii + 19) // 20


def truncate_to_tokens(text: str, tokens: int) -> str:
    """Longest prefix of ``text`` whose estimate fits in ``tokens`` (estimate is monotonic)."""
    if estimate_tokens(text) <= tokens:
        return text
    lo, hi = 0, len(text)  # estimate(text[:lo]) fits, estimate(text[:hi]) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid
    return text[:lo].rstrip()


def _content_text(content: Any) -> str:
    """Text of a message content: a string, or a list of parts of which the text ones count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


# ---------------------------------------------------------------------------------------------
# Answers


class _SchemaFiller:
    """Builds a deterministic value that validates against a JSON schema (the pydantic subset).

    Strings are made of words from the document, so a test can see the document reached the
    model; enums are picked by a checksum of the document so different documents differ.
    """

    def __init__(self, root: dict[str, Any], text: str) -> None:
        self._root = root
        self._words = text.split() or list(_FALLBACK_WORDS)
        self._cursor = 0
        self._seed = zlib.crc32(text.encode("utf-8"))

    def _resolve(self, schema: Any) -> dict[str, Any]:
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < 32:
            ref = schema["$ref"]
            target: Any = None
            if isinstance(ref, str) and ref.startswith("#/"):
                target = self._root
                for part in ref[2:].split("/"):
                    target = target.get(part) if isinstance(target, dict) else None
            if not isinstance(target, dict):
                raise ValueError(f"unresolvable $ref {ref!r}")
            # Keywords next to a $ref (a description, a default) apply alongside the target.
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            seen += 1
        return schema if isinstance(schema, dict) else {}

    def _take_words(self, count: int) -> str:
        words = [self._words[(self._cursor + i) % len(self._words)] for i in range(count)]
        self._cursor += count
        return " ".join(words)

    def _pick(self, options: Sequence[Any]) -> Any:
        choice = options[(self._seed + self._cursor) % len(options)]
        self._cursor += 1
        return choice

    def value(self, schema: Any, depth: int = 0) -> Any:
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._pick(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                options = [self._resolve(option) for option in schema[key]]
                useful = [option for option in options if option.get("type") != "null"]
                return self.value(useful[0], depth) if useful else None
        if isinstance(schema.get("allOf"), list):
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self._resolve(part))
            merged.update({k: v for k, v in schema.items() if k != "allOf"})
            return self.value(merged, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else ""
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            return self._array(schema, depth)
        if kind == "integer":
            return int(self._number(schema, integer=True))
        if kind == "number":
            return self._number(schema, integer=False)
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        return self._string(schema)

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        properties = schema.get("properties")
        if not isinstance(properties, dict):
            return {}
        required = schema.get("required")
        names = required if isinstance(required, list) and required else list(properties)
        return {name: self.value(properties.get(name, {}), depth + 1) for name in names}

    def _array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        low = int(schema.get("minItems", 0))
        high = int(schema.get("maxItems", max(low, 3)))
        items = self._resolve(schema.get("items", {}))
        enum = items.get("enum")
        if isinstance(enum, list) and enum:
            # Distinct enum members (a "tags" list), as many as allowed up to three.
            count = max(low, min(high, 3, len(enum)))
            start = (self._seed + self._cursor) % len(enum)
            self._cursor += 1
            return [enum[(start + i) % len(enum)] for i in range(count)]
        # Deep or recursive schemas stop growing at the minimum so generation terminates.
        count = low if depth > 6 else max(low, min(high, 2))
        return [self.value(items, depth + 1) for _ in range(count)]

    @staticmethod
    def _number(schema: dict[str, Any], integer: bool) -> float:
        step = 1 if integer else 0.5
        low = schema.get("minimum")
        if low is None and schema.get("exclusiveMinimum") is not None:
            low = schema["exclusiveMinimum"] + step
        high = schema.get("maximum")
        if high is None and schema.get("exclusiveMaximum") is not None:
            high = schema["exclusiveMaximum"] - step
        if low is not None and high is not None:
            value = (low + high) / 2
        elif low is not None:
            value = low
        elif high is not None:
            value = min(high, step)
        else:
            value = step
        return math.floor(value) if integer else float(value)

    def _string(self, schema: dict[str, Any]) -> str:
        fmt = schema.get("format")
        if fmt == "date":
            return "2024-01-01"
        if fmt == "date-time":
            return "2024-01-01T00:00:00Z"
        if fmt == "email":
            return "sim@example.com"
        if fmt in ("uri", "url"):
            return "https://example.com/sim"
        text = self._take_words(6)
        min_length = int(schema.get("minLength", 0))
        while len(text) < min_length:
            text = f"{text} {self._take_words(6)}"
        max_length = schema.get("maxLength")
        if isinstance(max_length, int):
            text = text[:max_length].rstrip() or text[:max_length]
        return text


def _answer_text(document: str, schema: dict[str, Any] | None, as_json: bool, tokens: int) -> str:
    """The assistant message content (only its token count is simulated, not the text)."""
    if as_json:
        if schema is None:
            words = " ".join(document.split()[:_SUMMARY_WORDS])
            return json.dumps({"summary": truncate_to_tokens(words, tokens)}, ensure_ascii=False)
        # Structured answers stay valid JSON even when max_tokens "cut" them: servers with
        # grammar-constrained decoding are what the pipeline relies on, and tests want to
        # validate the payload; finish_reason still reports the cut.
        return json.dumps(_SchemaFiller(schema, document).value(schema), ensure_ascii=False)
    words = " ".join(document.split()[:_SUMMARY_WORDS])
    return truncate_to_tokens(f"Summary: {words}", tokens)


# ---------------------------------------------------------------------------------------------
# Scheduling


class _Job:
    __slots__ = ("remaining", "future")

    def __init__(self, work: float, future: asyncio.Future[None]) -> None:
        self.remaining = work
        self.future = future


class BatchScheduler:
    """Processor-sharing batch of at most ``max_batch`` jobs, FIFO queue behind it.

    Used only from the server's event loop, so it needs no locking.
    """

    def __init__(
        self, sim: SimModel, loop: asyncio.AbstractEventLoop, on_active: Callable[[int], None]
    ) -> None:
        self._sim = sim
        self._loop = loop
        self._on_active = on_active
        self._active: list[_Job] = []
        self._waiting: deque[_Job] = deque()
        self._rate = 0.0
        self._stamp = loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    async def run(self, work: float) -> None:
        """Return once ``work`` token-units have been served; SchedulerStopped on shutdown."""
        if self._closed:
            raise SchedulerStopped
        job = _Job(work, self._loop.create_future())
        self._waiting.append(job)
        self._update()
        try:
            await job.future
        finally:
            # A cancelled handler (the client went away) must stop taking a share of the batch
            # and free its slot, or every later request would be slowed by a ghost.
            if job in self._active:
                self._active.remove(job)
                self._update()
            elif job in self._waiting:
                self._waiting.remove(job)

    def _update(self) -> None:
        now = self._loop.time()
        # Everyone active progressed at the same rate since the last event.
        progress = (now - self._stamp) * self._rate
        self._stamp = now
        slack = self._rate * _TIME_SLACK_S
        still_active: list[_Job] = []
        for job in self._active:
            job.remaining -= progress
            if job.remaining <= slack:
                if not job.future.done():
                    job.future.set_result(None)
            else:
                still_active.append(job)
        self._active = still_active
        while self._waiting and len(self._active) < self._sim.max_batch:
            self._active.append(self._waiting.popleft())
        self._rate = self._sim.rate(len(self._active))
        self._on_active(len(self._active))
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._active:
            first = min(job.remaining for job in self._active)
            self._timer = self._loop.call_at(now + max(first, 0.0) / self._rate, self._update)

    def close(self) -> None:
        """Fail every queued and active job so their handlers can finish (server shutdown)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for job in [*self._active, *self._waiting]:
            if not job.future.done():
                job.future.set_exception(SchedulerStopped())
        self._active.clear()
        self._waiting.clear()
        self._on_active(0)


class SchedulerStopped(Exception):
    """The server is shutting down while a request was waiting."""


class _Reject(Exception):
    """An invalid request; carries the HTTP response to send."""

    def __init__(self, response: web.Response) -> None:
        super().__init__(response.status)
        self.response = response


def _error(status: int, message: str, kind: str = "invalid_request_error") -> web.Response:
    """An OpenAI-style error body, which the openai client turns into a typed exception."""
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return web.json_response(body, status=status)


@dataclass(frozen=True)
class _Request:
    """The parts of a chat completion request the simulator uses."""

    prompt_tokens: int
    max_tokens: int
    document: str
    as_json: bool
    schema: dict[str, Any] | None


def _parse(sim: SimModel, body: Any) -> _Request:
    if not isinstance(body, dict):
        raise _Reject(_error(400, "request body must be a JSON object"))
    if body.get("stream"):
        raise _Reject(_error(400, "stream=true is not supported by the simulator"))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _Reject(_error(400, "'messages' must be a non-empty list"))
    if not all(isinstance(m, dict) for m in messages):
        raise _Reject(_error(400, "every message must be an object"))

    max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
    if max_tokens is None:
        max_tokens = _DEFAULT_MAX_TOKENS
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise _Reject(_error(400, "'max_tokens' must be a positive integer"))

    as_json, schema = False, None
    response_format = body.get("response_format")
    if response_format is not None:
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        if kind == "json_schema":
            if not sim.json_schema_support:
                # llama-cpp-python validates response_format with pydantic and answers its
                # validation error as a 500 with a FastAPI-style "detail" body.
                detail = (
                    "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
                    "'ctx': {'expected': \"'text' or 'json_object'\"}}]"
                )
                raise _Reject(web.json_response({"detail": detail}, status=500))
            spec = response_format.get("json_schema")
            found = spec.get("schema") if isinstance(spec, dict) else None
            as_json, schema = True, found if isinstance(found, dict) else None
        elif kind == "json_object":
            found = response_format.get("schema")
            as_json, schema = True, found if isinstance(found, dict) else None
        elif kind != "text":
            raise _Reject(_error(400, f"unsupported response_format type {kind!r}"))

    texts = [_content_text(m.get("content")) for m in messages]
    prompt_tokens = sum(estimate_tokens(t) + _TOKENS_PER_MESSAGE for t in texts)
    users = [t for m, t in zip(messages, texts, strict=True) if m.get("role") == "user"]
    document = users[-1] if users else texts[-1]

    requested = prompt_tokens + max_tokens
    if requested > sim.context_tokens:
        # vLLM's wording, which clients (and the pipeline) match on to shrink the prompt.
        message = (
            f"This model's maximum context length is {sim.context_tokens} tokens. However, you "
            f"requested {requested} tokens ({prompt_tokens} in the messages, {max_tokens} in the "
            "completion). Please reduce the length of the messages or completion."
        )
        raise _Reject(_error(400, message))
    return _Request(prompt_tokens, max_tokens, document, as_json, schema)


# ---------------------------------------------------------------------------------------------
# Server


class SimServer:
    """One simulated model served over HTTP from its own event loop on a daemon thread."""

    def __init__(self, sim: SimModel | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sim = sim if sim is not None else SimModel()
        self.host = host
        self.port = port  # the bound port once started (port 0 picks a free one)
        self._lock = threading.Lock()  # guards the counters below, read from other threads
        self._stats = SimStats()
        self._rng = random.Random(self.sim.seed)
        self._in_flight = 0  # chat requests open right now
        self._active = 0  # requests being decoded right now
        self._ids = itertools.count(1)
        # First line of each request's last user message, in arrival order, and the bearer
        # tokens seen: tests check which documents were asked for and that a key travelled.
        self._request_log: list[str] = []
        self._request_texts: list[str] = []
        self._bearer_tokens: set[str] = set()
        self._lifecycle = threading.Lock()  # serializes start/stop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._scheduler: BatchScheduler | None = None
        self._stopping: asyncio.Event | None = None
        self._started = False

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        if not self._started:
            raise RuntimeError("SimServer is not running; call start() first")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def start(self) -> SimServer:
        """Serve on a fresh event loop in a daemon thread; returns once the port listens."""
        with self._lifecycle:
            if self._started:
                return self
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name=f"sim-{self.sim.model}", daemon=True
            )
            thread.start()
            try:
                asyncio.run_coroutine_threadsafe(self._astart(loop), loop).result(timeout=30)
            except BaseException:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(timeout=5)
                loop.close()
                raise
            self._loop, self._thread, self._started = loop, thread, True
            return self

    def stop(self) -> None:
        """Stop serving; idempotent. Hanging and queued requests are answered 503 first."""
        with self._lifecycle:
            if not self._started or self._loop is None or self._thread is None:
                return
            loop, thread = self._loop, self._thread
            try:
                asyncio.run_coroutine_threadsafe(self._astop(), loop).result(timeout=30)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(timeout=10)
                if not thread.is_alive():
                    loop.close()
                self._started = False
                self._loop = self._thread = None

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def _astart(self, loop: asyncio.AbstractEventLoop) -> None:
        self._stopping = asyncio.Event()
        self._scheduler = BatchScheduler(self.sim, loop, self._note_active)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/sim/stats", self._stats_endpoint)
        app.router.add_post("/sim/reset", self._reset_endpoint)
        # handler_cancellation: a client that disconnects cancels its handler, which is how a
        # request leaves the batch (and how a timed-out hang ends) like on a real server.
        runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.port = int(runner.addresses[0][1])

    async def _astop(self) -> None:
        assert self._stopping is not None and self._scheduler is not None
        # Release everything that waits first, so the runner's graceful shutdown (which waits
        # for open handlers) finishes at once instead of after its timeout.
        self._stopping.set()
        self._scheduler.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- stats ----------------------------------------------------------------------------

    @property
    def stats(self) -> SimStats:
        """A consistent copy of the counters (safe from any thread)."""
        return self.snapshot()

    def snapshot(self) -> SimStats:
        with self._lock:
            return dataclasses.replace(self._stats)

    def request_log(self) -> list[str]:
        """The first line of every chat request's last user message, in arrival order."""
        with self._lock:
            return list(self._request_log)

    def request_texts(self) -> list[str]:
        """The whole last user message of every chat request, in arrival order."""
        with self._lock:
            return list(self._request_texts)

    def bearer_tokens(self) -> set[str]:
        with self._lock:
            return set(self._bearer_tokens)

    def reset_stats(self) -> None:
        """Zero the counters and rewind the fault dice (a "dead" server comes back alive)."""
        with self._lock:
            # Peaks restart from what is open right now, not from zero, so requests still
            # running across a reset are not forgotten.
            self._stats = SimStats(peak_active=self._active, peak_in_flight=self._in_flight)
            self._rng = random.Random(self.sim.seed)
            self._request_log.clear()
            self._request_texts.clear()

    def _note_active(self, active: int) -> None:
        with self._lock:
            self._active = active
            self._stats.peak_active = max(self._stats.peak_active, active)

    def _count(self, field: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self._stats, field, getattr(self._stats, field) + amount)

    # -- endpoints ------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        model = {"id": self.sim.model, "object": "model", "created": 0, "owned_by": "sim"}
        return web.json_response({"object": "list", "data": [model]})

    async def _stats_endpoint(self, request: web.Request) -> web.Response:
        return web.json_response(dataclasses.asdict(self.snapshot()))

    async def _reset_endpoint(self, request: web.Request) -> web.Response:
        self.reset_stats()
        return web.json_response(dataclasses.asdict(self.snapshot()))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        with self._lock:
            self._stats.requests += 1
            self._in_flight += 1
            self._stats.peak_in_flight = max(self._stats.peak_in_flight, self._in_flight)
        try:
            return await self._complete(request)
        except _Reject as reject:
            self._count("rejected")
            return reject.response
        except SchedulerStopped:
            return _error(503, "the simulated server is shutting down", "server_error")
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        sim = self.sim
        assert self._stopping is not None and self._scheduler is not None
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError) as exc:
            raise _Reject(_error(400, f"request body is not valid JSON: {exc}")) from None
        parsed = _parse(sim, body)
        with self._lock:
            self._request_log.append(parsed.document.split("\n", 1)[0])
            self._request_texts.append(parsed.document)
            authorization = request.headers.get("Authorization", "")
            if authorization.startswith("Bearer "):
                self._bearer_tokens.add(authorization.removeprefix("Bearer "))
        if self._stopping.is_set():
            raise SchedulerStopped

        # Faults, in a fixed order. Every request draws all four numbers so that the sequence
        # of faults for a seed does not depend on which fault rates are switched on.
        with self._lock:
            dead = sim.die_after is not None and self._stats.answered >= sim.die_after
            draws = [self._rng.random() for _ in range(4)]
        if dead:
            return await self._drop(request)
        if draws[0] < sim.error_rate:
            self._count("errors")
            return _error(500, "simulated internal server error", "server_error")
        if draws[1] < sim.rate_limit_rate:
            self._count("rate_limited")
            response = _error(429, "simulated rate limit", "rate_limit_error")
            response.headers["Retry-After"] = f"{sim.retry_after_s:g}"
            return response
        if draws[2] < sim.hang_rate:
            self._count("hung")
            await self._stopping.wait()  # until stop(), or cancelled when the client leaves
            raise SchedulerStopped
        if draws[3] < sim.garbage_rate:
            self._count("garbage")
            # A truncated body with a JSON content type, like a proxy cutting a response.
            return web.Response(
                status=200,
                text='{"id": "chatcmpl-garbage", "choices": [',
                content_type="application/json",
            )

        # The text first, so the reported completion tokens are exactly the simulated ones.
        output_tokens, capped = sim.output_tokens(parsed.prompt_tokens, parsed.max_tokens)
        content = _answer_text(parsed.document, parsed.schema, parsed.as_json, output_tokens)
        if not sim.instant:
            if sim.latency_s > 0:
                await self._pause(sim.latency_s)
            await self._scheduler.run(sim.work(parsed.prompt_tokens, output_tokens))

        with self._lock:
            self._stats.answered += 1
            self._stats.prompt_tokens += parsed.prompt_tokens
            self._stats.completion_tokens += output_tokens
        return web.json_response(
            {
                "id": f"chatcmpl-sim-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": sim.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "logprobs": None,
                        "finish_reason": "length" if capped else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": parsed.prompt_tokens,
                    "completion_tokens": output_tokens,
                    "total_tokens": parsed.prompt_tokens + output_tokens,
                },
            }
        )

    async def _drop(self, request: web.Request) -> web.StreamResponse:
        """Close the connection without an answer, like a crashed server process."""
        self._count("dropped")
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
        assert self._stopping is not None
        try:
            await asyncio.wait_for(self._stopping.wait(), delay)
        except TimeoutError:
            return
        raise SchedulerStopped


@contextlib.contextmanager
def fleet(*sims: SimModel) -> Iterator[list[SimServer]]:
    """Start one server per model on free loopback ports; stop them all on exit."""
    servers: list[SimServer] = []
    try:
        for sim in sims:
            servers.append(SimServer(sim).start())
        yield servers
    finally:
        for server in reversed(servers):
            server.stop()


# ---------------------------------------------------------------------------------------------
# Command line


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one simulated model in the foreground until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python -m wiki_assets.simulator",
        description="Serve a simulated OpenAI-compatible chat completions endpoint.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="fast")
    parser.add_argument("--model", help="model id to serve")
    parser.add_argument("--per-request-tps", type=float)
    parser.add_argument("--aggregate-tps", type=float)
    parser.add_argument("--max-batch", type=int)
    parser.add_argument("--latency-s", type=float)
    parser.add_argument("--context-tokens", type=int)
    args = parser.parse_args(argv)

    overrides = {
        name: value
        for name, value in (
            ("model", args.model),
            ("per_request_tps", args.per_request_tps),
            ("aggregate_tps", args.aggregate_tps),
            ("max_batch", args.max_batch),
            ("latency_s", args.latency_s),
            ("context_tokens", args.context_tokens),
        )
        if value is not None
    }
    sim = dataclasses.replace(PRESETS[args.preset], **overrides)

    done = threading.Event()

    def _on_signal(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    with SimServer(sim, args.host, args.port) as server:
        print(f"simulator: serving {sim.model!r} at {server.base_url} ({sim})", flush=True)
        # Wake up now and then: signal handlers only run in the main thread between waits.
        while not done.wait(0.5):
            pass
    print("simulator: stopped", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
