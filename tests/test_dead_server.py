"""A server the run starts as a child process (the embedded chat model, the embedded embeddings
model) that dies is named: the run stops its requests to it at once, says which server died, its
exit code or signal and its last lines, and for a crash by a signal how to rebuild; a server that
exits before it answers fails the start the same way.

The run's metadata says so too (``models_out``, the models table's ``service``). The servers
here are real child processes: the project's simulated OpenAI-compatible server,
started by the same :func:`child_server` the embedded models use and killed by a real signal; the
last test kills the real llama.cpp server.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from wiki_assets.defs.metadata.run_figures import run_metadata
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.documents.corpus import ROOT_COLLECTION
from wiki_assets.engine.errors import EmbeddedModelUnavailable
from wiki_assets.engine.llm.child_server import ChildServer, child_server, free_port
from wiki_assets.engine.llm.local_server import REBUILD_HINT, embedded_server
from wiki_assets.simulator import SimModel, SimServer

HINT = "rebuild it: a test's hint"
# Long enough that a run which waited for the give-up rule, rather than noticing the death,
# could not pass the tests below.
PATIENT = Dials(workers_per_model=2, claim_size=2, flush_seconds=1, give_up_after_s=600)


@contextmanager
def simulator_process(*flags: str) -> Iterator[tuple[ChildServer, str]]:
    """The simulator as a child server of this process: (the server, its /v1 base URL)."""
    port = free_port()
    command = [sys.executable, "-m", "wiki_assets.simulator", "--port", str(port), *flags]
    base_url = f"http://127.0.0.1:{port}/v1"
    with child_server(command, f"{base_url}/models", "simulated server", 60, HINT) as server:
        yield server, base_url


def corpus(root: Path, count: int) -> Path:
    synced = root / "synced"
    synced.mkdir()
    for i in range(count):
        lines = "\n".join(f"Line {j} of note {i} on topic {i % 7}." for j in range(12))
        (synced / f"note-{i:03d}.md").write_text(f"# Note {i}\n\n{lines}\n", encoding="utf-8")
    return synced


def kill_in(server: ChildServer, signum: int, delay_s: float) -> threading.Thread:
    """Kill the server's process with ``signum`` ``delay_s`` seconds from now."""

    def kill() -> None:
        time.sleep(delay_s)
        os.kill(server.process.pid, signum)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_exit_notice_names_the_server_its_signal_and_its_last_lines() -> None:
    with simulator_process("--preset", "instant", "--model", "m") as (server, _):
        assert server.exit_notice() is None
        os.kill(server.process.pid, signal.SIGSEGV)
        server.process.wait(10)
        time.sleep(0.2)  # its output's last lines, drained
        notice = server.exit_notice()
    assert notice is not None
    assert notice.startswith(f"simulated server (pid {server.process.pid}) was killed by SIGSEGV")
    assert "simulator: serving 'm'" in notice  # its own last line
    assert notice.splitlines()[0].endswith(HINT)


def test_an_exit_with_a_code_gives_no_rebuild_hint() -> None:
    with simulator_process("--preset", "instant") as (server, _):
        os.kill(server.process.pid, signal.SIGTERM)  # the simulator stops and exits 0
        server.process.wait(10)
        notice = server.exit_notice()
    assert notice is not None and "exited with code 0" in notice and HINT not in notice


def test_a_server_stopped_on_purpose_is_no_news() -> None:
    with simulator_process("--preset", "instant") as (server, _):
        pass
    assert server.process.returncode is not None
    assert server.exit_notice() is None


def test_a_server_that_exits_at_start_fails_the_start_with_its_code_and_output() -> None:
    command = [sys.executable, "-c", "print('loading model'); print('bad magic'); exit(3)"]
    with pytest.raises(EmbeddedModelUnavailable) as caught:
        with child_server(command, "http://127.0.0.1:9/v1/models", "test server", 30, HINT):
            pytest.fail("a server that exited must not be yielded")
    message = str(caught.value)
    assert message.startswith("test server exited with code 3 before it answered")
    assert "| bad magic" in message and HINT not in message


def test_a_server_that_crashes_at_start_gets_the_rebuild_hint() -> None:
    command = [
        sys.executable,
        "-c",
        "import os, signal; print('ggml: using AVX512', flush=True); "
        "os.kill(os.getpid(), signal.SIGILL)",
    ]
    with pytest.raises(EmbeddedModelUnavailable) as caught:
        with child_server(command, "http://127.0.0.1:9/v1/models", "llama.cpp server", 30, HINT):
            pass
    message = str(caught.value)
    assert "was killed by SIGILL (signal 4) before it answered" in message
    assert "| ggml: using AVX512" in message and message.splitlines()[0].endswith(HINT)


def test_a_run_whose_only_server_is_killed_ends_at_once_naming_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    synced = corpus(tmp_path, 40)
    # About a second a request: the run is mid-way when the server dies.
    with simulator_process("--preset", "slow", "--latency-s", "1.0", "--model", "m") as (
        server,
        base_url,
    ):
        endpoint = Endpoint(name="local", base_url=base_url, model="m", max_retries=1)
        kill_in(server, signal.SIGSEGV, 2.5)
        started = time.monotonic()
        with caplog.at_level(logging.INFO, logger="wiki_assets"):
            report = ingest(
                corpus=Corpus(synced, [ROOT_COLLECTION]),
                wiki_root=tmp_path / "wiki",
                fleet=Fleet([endpoint], servers={"local": server.exit_notice}),
                dials=PATIENT,
            )
        ended_s = time.monotonic() - started
    assert report.tally.stopped is not None and report.tally.stopped.startswith(
        "every model is down"
    )
    assert (
        "simulated server" in report.tally.stopped and "SIGSEGV (signal 11)" in report.tally.stopped
    )
    assert HINT in report.tally.stopped
    assert 0 < report.count < 40 and report.unfinished == 40 - report.count - len(report.failed)
    assert report.failed == []  # a dead server is no document's fault
    assert report.models[0].tally.gone is not None and "SIGSEGV" in report.models[0].tally.gone
    named = [r for r in caplog.records if "is out for the rest of the run" in r.getMessage()]
    assert len(named) == 1 and named[0].levelno == logging.ERROR
    assert "model local" in named[0].getMessage()
    # Not the breaker's story: no "taken out for 2 s after 3 failures" line.
    assert not [r for r in caplog.records if "taken out for" in r.getMessage()]
    assert ended_s < PATIENT.give_up_after_s / 10


def test_the_other_model_finishes_what_the_dead_servers_model_held(tmp_path: Path) -> None:
    synced = corpus(tmp_path, 30)
    with (
        simulator_process("--preset", "slow", "--latency-s", "0.5", "--model", "dies") as (
            server,
            base_url,
        ),
        SimServer(SimModel(model="stays", latency_s=0.2, per_request_tps=5000.0)) as other,
    ):
        dying = Endpoint(name="local", base_url=base_url, model="dies", max_retries=1)
        staying = Endpoint(name="stays", base_url=other.base_url, model="stays")
        kill_in(server, signal.SIGKILL, 1.5)
        report = ingest(
            corpus=Corpus(synced, [ROOT_COLLECTION]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([dying, staying], servers={"local": server.exit_notice}),
            dials=PATIENT,
        )
    assert report.tally.stopped is None and report.failed == [] and report.count == 30
    dead, alive = report.models
    assert dead.tally.gone is not None and "SIGKILL (signal 9)" in dead.tally.gone
    assert HINT not in dead.tally.gone  # killed from outside: not a crash of its own
    assert alive.tally.gone is None and alive.tally.docs == 30 - dead.tally.docs > 0
    # The run's page says so beyond a log line: its metadata's headline and models table.
    figures = run_metadata(report)
    assert figures["models_out"].value.startswith("local: simulated server (pid ")
    assert "SIGKILL" in figures["models_out"].value and "\n" not in figures["models_out"].value
    service = {row.data["name"]: row.data["service"] for row in figures["models"].value.records}
    assert service == {"local": "server died", "stays": "ok"}


def test_a_dead_embeddings_server_is_named_and_the_run_links_by_ngrams(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    synced = corpus(tmp_path, 6)
    with (
        simulator_process("--preset", "instant", "--model", "e5") as (server, base_url),
        SimServer(SimModel(model="chat", instant=True)) as chat,
    ):
        os.kill(server.process.pid, signal.SIGSEGV)
        server.process.wait(10)
        embeddings = EmbeddingsEndpoint(
            name="local-e5", base_url=base_url, model="e5", max_retries=1
        )
        with caplog.at_level(logging.WARNING, logger="wiki_assets"):
            report = ingest(
                corpus=Corpus(synced, [ROOT_COLLECTION]),
                wiki_root=tmp_path / "wiki",
                fleet=Fleet(
                    [Endpoint(name="chat", base_url=chat.base_url, model="chat")],
                    embeddings=embeddings,
                    servers={"local-e5": server.exit_notice},
                ),
                dials=PATIENT,
            )
    assert report.count == 6 and report.failed == [] and report.embedded == 0
    warnings = "\n".join(r.getMessage() for r in caplog.records)
    assert "simulated server" in warnings and "killed by SIGSEGV" in warnings


@pytest.mark.llm
def test_the_embedded_llama_server_killed_mid_run_is_named_with_the_rebuild_line(
    tmp_path: Path,
) -> None:
    synced = corpus(tmp_path, 6)
    with embedded_server(threads=2) as (endpoint, server):
        # The first request is in flight (prompt processing takes seconds on a CPU).
        kill_in(server, signal.SIGSEGV, 1.0)
        started = time.monotonic()
        report = ingest(
            corpus=Corpus(synced, [ROOT_COLLECTION]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint], servers={endpoint.name: server.exit_notice}),
            dials=PATIENT,
        )
        ended_s = time.monotonic() - started
    assert report.tally.stopped is not None
    assert "llama.cpp server" in report.tally.stopped and "SIGSEGV" in report.tally.stopped
    assert (
        REBUILD_HINT in report.tally.stopped and "--force-reinstall --no-cache-dir" in REBUILD_HINT
    )
    assert report.unfinished == 6 - report.count
    assert ended_s < 30  # a request to it takes seconds; waiting for a give-up would take 600
