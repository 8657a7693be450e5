"""Contract of the simulated OpenAI-compatible server in ``wiki_assets.simulator``.

Everything here talks to a started :class:`SimServer` over real HTTP with the real ``openai``
client (or ``httpx`` where the client would hide what is checked), so the tests pin down what the
pipeline and the benchmarks rely on: the OpenAI wire format (model listing, usage, finish_reason,
OpenAI-style errors), structured output that validates against the requested JSON schema (and the
llama-cpp-python style rejection of ``json_schema``), vLLM's context-length error, the
processor-sharing timing model with its batch limit and FIFO queue (checked against the formula,
with a generous tolerance since it is a model check and not a speed benchmark), the departure of
disconnected clients from the batch, every injected fault, and a prompt, clean shutdown.
"""

from __future__ import annotations

import concurrent.futures
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import openai
import pydantic
import pytest
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

try:  # recent openai releases are built on the httpx2 fork, older ones on httpx itself
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef, import-not-found, unused-ignore]

from wiki_assets.simulator import PRESETS, SimModel, SimServer, estimate_tokens, fleet

DOC = (
    "The quick brown fox jumps over the lazy dog near the river bank while the old miller "
    "counts sacks of flour and the children of the village watch the geese fly south. "
) * 12


_clients: list[openai.OpenAI] = []


def client(server: SimServer, timeout: float = 10.0) -> openai.OpenAI:
    api = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=timeout)
    _clients.append(api)
    return api


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def ask(api: openai.OpenAI, text: str = DOC, **kwargs: Any) -> ChatCompletion:
    messages: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "Summarize."},
        {"role": "user", "content": text},
    ]
    reply: ChatCompletion = api.chat.completions.create(model="sim", messages=messages, **kwargs)
    return reply


def content(reply: ChatCompletion) -> str:
    text = reply.choices[0].message.content
    assert text is not None
    return text


def usage(reply: ChatCompletion) -> CompletionUsage:
    assert reply.usage is not None
    return reply.usage


@pytest.fixture
def instant() -> Iterator[SimServer]:
    with SimServer(SimModel(model="sim-a", instant=True)) as server:
        yield server


def test_estimate_tokens_ascii_and_korean() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    # 1.7 tokens per Korean character, computed exactly (not 17.000000000000004 -> 18).
    assert estimate_tokens("한국어한국어한국어한") == 17
    assert estimate_tokens("ab 안녕") == math.ceil(3 / 4 + 2 * 1.7)


def test_models_lists_the_served_id(instant: SimServer) -> None:
    assert instant.base_url.startswith("http://127.0.0.1:")
    models = client(instant).models.list()
    assert [m.id for m in models.data] == ["sim-a"]


def test_completion_usage_and_finish_reason(instant: SimServer) -> None:
    api = client(instant)
    prompt_tokens = estimate_tokens("Summarize.") + estimate_tokens(DOC) + 2 * 4

    short = ask(api, max_tokens=5)
    assert short.model == "sim-a"
    assert short.choices[0].finish_reason == "length"
    assert usage(short).prompt_tokens == prompt_tokens
    assert usage(short).completion_tokens == 5
    assert estimate_tokens(content(short)) <= 5

    full = ask(api)
    natural = max(16, int(prompt_tokens * 0.15))
    assert full.choices[0].finish_reason == "stop"
    assert usage(full).completion_tokens == natural
    assert usage(full).total_tokens == prompt_tokens + natural
    # The answer quotes the last user message, so a test can see the document travelled.
    assert content(full).startswith("Summary: The quick brown fox")

    stats = instant.stats
    assert (stats.requests, stats.answered) == (2, 2)
    assert stats.prompt_tokens == 2 * prompt_tokens
    assert stats.completion_tokens == 5 + natural


class Source(pydantic.BaseModel):
    name: str
    year: int | None = pydantic.Field(ge=1900, le=2100)


class Page(pydantic.BaseModel):
    title: str = pydantic.Field(max_length=40)
    summary: str
    topics: list[Literal["history", "science", "art", "sport", "food"]] = pydantic.Field(
        min_length=1, max_length=3
    )
    source: Source


def _schema_format() -> dict[str, object]:
    schema = Page.model_json_schema()
    return {"type": "json_schema", "json_schema": {"name": "Page", "schema": schema}}


def test_json_schema_answer_validates(instant: SimServer) -> None:
    reply = ask(client(instant), response_format=_schema_format())
    page = Page.model_validate_json(content(reply))
    assert len(set(page.topics)) == len(page.topics) >= 1
    assert set(page.title.split()) <= set(DOC.split())
    assert 1900 <= (page.source.year or 0) <= 2100


def test_json_schema_rejected_like_llama_cpp_python() -> None:
    with SimServer(SimModel(instant=True, json_schema_support=False)) as server:
        api = client(server)
        with pytest.raises(openai.InternalServerError) as caught:
            ask(api, response_format=_schema_format())
        assert caught.value.status_code == 500
        assert "'text' or 'json_object'" in caught.value.response.json()["detail"]

        schema = Page.model_json_schema()
        reply = ask(api, response_format={"type": "json_object", "schema": schema})
        Page.model_validate_json(content(reply))
        plain = ask(api, response_format={"type": "json_object"})
        summary = pydantic.TypeAdapter(dict[str, str]).validate_json(content(plain))
        assert list(summary) == ["summary"] and "quick brown fox" in summary["summary"]
        assert (server.stats.rejected, server.stats.answered) == (1, 2)


def test_context_overflow_is_a_400() -> None:
    with SimServer(SimModel(instant=True, context_tokens=300)) as server:
        with pytest.raises(openai.BadRequestError) as caught:
            ask(client(server), max_tokens=100)
        assert "maximum context length is 300 tokens" in str(caught.value)
        assert (server.stats.rejected, server.stats.answered) == (1, 0)


def test_invalid_requests_get_openai_style_errors(instant: SimServer) -> None:
    url = f"{instant.base_url}/chat/completions"
    missing = httpx.post(url, json={"model": "sim"})
    assert missing.status_code == 400
    assert missing.json()["error"]["type"] == "invalid_request_error"
    streamed = httpx.post(url, json={"messages": [{"role": "user", "content": "hi"}], "stream": 1})
    assert streamed.status_code == 400


def _timed_burst(
    server: SimServer, count: int, text: str, max_tokens: int
) -> tuple[float, list[ChatCompletion]]:
    """Send ``count`` requests at the same instant; return the makespan and the replies."""
    barrier = threading.Barrier(count + 1)

    def one() -> tuple[float, ChatCompletion]:
        api = client(server)
        api.models.list()  # open the connection before the clock starts
        barrier.wait()
        reply = ask(api, text, max_tokens=max_tokens)
        return time.perf_counter(), reply

    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        futures = [pool.submit(one) for _ in range(count)]
        barrier.wait()
        start = time.perf_counter()
        results = [f.result() for f in futures]
    return max(t for t, _ in results) - start, [r for _, r in results]


@pytest.mark.parametrize(
    ("per_request_tps", "aggregate_tps", "max_batch", "count", "output_tokens"),
    [
        # Batch-limited: two run at once, two queue FIFO behind them.
        (1000.0, 2000.0, 2, 4, 480),
        # Compute-limited: both run at once but share the aggregate rate, so each is halved.
        (1000.0, 1000.0, 4, 2, 240),
    ],
)
def test_processor_sharing_timing(
    per_request_tps: float, aggregate_tps: float, max_batch: int, count: int, output_tokens: int
) -> None:
    sim = SimModel(
        per_request_tps=per_request_tps,
        aggregate_tps=aggregate_tps,
        max_batch=max_batch,
        output_ratio=0.0,
        min_output_tokens=output_tokens,
    )
    with SimServer(sim) as server:
        makespan, replies = _timed_burst(server, count, "word " * 200, output_tokens)
        stats = server.stats

    tokens = usage(replies[0])
    assert all(usage(r) == tokens for r in replies)
    assert tokens.completion_tokens == output_tokens
    work = tokens.prompt_tokens / sim.prefill_speedup + tokens.completion_tokens
    # Equal jobs: they go through in rounds of max_batch, each round at the shared rate.
    expected = 0.0
    for done in range(0, count, max_batch):
        in_round = min(max_batch, count - done)
        expected += work / min(per_request_tps, aggregate_tps / in_round)
    assert 0.7 * expected <= makespan <= 1.6 * expected, (makespan, expected)
    assert stats.peak_active == min(count, max_batch)
    assert stats.peak_in_flight == count


def test_disconnected_client_leaves_the_batch() -> None:
    sim = SimModel(per_request_tps=100.0, aggregate_tps=100.0, max_batch=1, min_output_tokens=999)
    with SimServer(sim) as server:
        with pytest.raises(openai.APITimeoutError):
            ask(client(server, timeout=0.3), "hello", max_tokens=150)  # ~1.5 s of the only slot
        start = time.perf_counter()
        reply = ask(client(server), "hello", max_tokens=10)  # ~0.1 s if the slot was freed
        elapsed = time.perf_counter() - start
        assert usage(reply).completion_tokens == 10
        assert elapsed < 0.6, elapsed
        assert server.stats.answered == 1


def test_latency_comes_before_the_compute() -> None:
    sim = SimModel(per_request_tps=1000.0, latency_s=0.2, output_ratio=0.0, min_output_tokens=100)
    with SimServer(sim) as server:
        start = time.perf_counter()
        reply = ask(client(server), "hello")
        elapsed = time.perf_counter() - start
    tokens = usage(reply)
    expected = 0.2 + (tokens.prompt_tokens / sim.prefill_speedup + tokens.completion_tokens) / 1000
    assert expected <= elapsed <= expected + 0.3, (elapsed, expected)


def test_injected_faults() -> None:
    sims = (
        SimModel(instant=True, error_rate=1.0),
        SimModel(instant=True, rate_limit_rate=1.0, retry_after_s=2.5),
        SimModel(instant=True, garbage_rate=1.0),
    )
    with fleet(*sims) as (failing, limited, garbled):
        assert len({failing.port, limited.port, garbled.port}) == 3
        with pytest.raises(openai.InternalServerError):
            ask(client(failing))
        with pytest.raises(openai.RateLimitError) as caught:
            ask(client(limited))
        assert caught.value.response.headers["Retry-After"] == "2.5"
        body = {"model": "sim", "messages": [{"role": "user", "content": DOC}]}
        raw = httpx.post(f"{garbled.base_url}/chat/completions", json=body)
        assert raw.status_code == 200
        with pytest.raises(ValueError):
            raw.json()
        assert failing.stats.errors == 1
        assert limited.stats.rate_limited == 1
        assert garbled.stats.garbage == 1
        assert failing.stats.answered + limited.stats.answered + garbled.stats.answered == 0
    with pytest.raises(RuntimeError):
        failing.base_url  # noqa: B018 - stopped servers have no URL


def test_die_after_drops_connections() -> None:
    with SimServer(SimModel(instant=True, die_after=2)) as server:
        api = client(server)
        ask(api)
        ask(api)
        with pytest.raises(openai.APIConnectionError):
            ask(api)
        with pytest.raises(openai.APIConnectionError):
            ask(client(server))
        stats = server.stats
        assert (stats.answered, stats.dropped) == (2, 2)
        # Resetting revives it, which benchmarks use to reuse one server.
        httpx.post(f"{server.base_url.removesuffix('/v1')}/sim/reset").raise_for_status()
        ask(api)
        assert httpx.get(f"{server.base_url.removesuffix('/v1')}/sim/stats").json()["answered"] == 1


def test_hang_times_out_and_stop_releases_hangers() -> None:
    server = SimServer(SimModel(instant=True, hang_rate=1.0)).start()
    try:
        with pytest.raises(openai.APITimeoutError):
            ask(client(server, timeout=0.5))
        assert server.stats.hung == 1

        outcome: list[BaseException] = []

        def patient() -> None:
            try:
                ask(client(server, timeout=30.0))
            except openai.APIError as exc:
                outcome.append(exc)

        waiter = threading.Thread(target=patient)
        waiter.start()
        deadline = time.monotonic() + 5
        while server.stats.hung < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.stats.hung == 2
    finally:
        start = time.perf_counter()
        server.stop()
        server.stop()  # idempotent
        stopped_in = time.perf_counter() - start
    waiter.join(timeout=5)
    assert stopped_in < 2.0, stopped_in
    assert not waiter.is_alive()
    # The hanging request was answered (503) rather than left open.
    assert len(outcome) == 1 and isinstance(outcome[0], openai.InternalServerError), outcome
    assert outcome[0].status_code == 503


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_command_line_serves_until_sigterm() -> None:
    assert PRESETS["slow"].max_batch == 8 and PRESETS["instant"].instant
    port = _free_port()
    root = Path(__file__).resolve().parents[1]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "wiki_assets.simulator", "--port", str(port),
         "--preset", "instant", "--model", "cli-model", "--behaviour", "faithful"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                models = httpx.get(f"http://127.0.0.1:{port}/v1/models").json()
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.05)
        assert models["data"][0]["id"] == "cli-model"
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=10)
        assert proc.returncode == 0, output
        assert "serving 'cli-model'" in output and "stopped" in output
        assert "behaviour='faithful'" in output
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
