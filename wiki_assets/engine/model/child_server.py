"""A local server run as a child process for the length of a ``with`` block: the embedded chat
model (:mod:`~wiki_assets.engine.model.local_server`) and the embedded embeddings model
(:mod:`~wiki_assets.engine.model.local_embeddings`) are both started and stopped this way.

The child runs in its own process group on a free loopback port, so stopping it also stops
anything it started; its output is kept in memory (the last lines explain a failed start)
because nothing may be written outside the wiki.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from wiki_assets.engine.errors import EmbeddedModelUnavailable

LOOPBACK = "127.0.0.1"


def installed(module: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of ``module`` if it is installed, found without importing it."""
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None


def server_threads(threads: int | None) -> int:
    """``threads``, or by default as many as the machine has cores, at most 4."""
    return threads or min(4, os.cpu_count() or 2)


def free_port() -> int:
    """A loopback port no one listens on now."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


@contextmanager
def child_server(
    command: Sequence[str], ready_url: str, label: str, start_timeout_s: float
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command``, wait until a GET of ``ready_url`` answers 200, yield the process, stop
    it. A child that exits first, or does not answer within ``start_timeout_s``, raises
    :class:`EmbeddedModelUnavailable` naming ``label`` (e.g. "llama.cpp server")."""
    process = subprocess.Popen(
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    tail: deque[str] = deque(maxlen=40)
    reader = threading.Thread(target=_drain, args=(process, tail), daemon=True)
    reader.start()
    try:
        _wait_until_ready(process, ready_url, start_timeout_s, tail, label)
        yield process
    finally:
        stop(process)


def _drain(process: subprocess.Popen[bytes], tail: deque[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        tail.append(line.decode("utf-8", "replace").rstrip())


def _wait_until_ready(
    process: subprocess.Popen[bytes], url: str, timeout_s: float, tail: deque[str], label: str
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EmbeddedModelUnavailable(
                f"{label} exited with code {process.returncode}:\n" + "\n".join(tail)
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise EmbeddedModelUnavailable(f"{label} did not answer within {timeout_s:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the child's process group: SIGTERM, then SIGKILL after 10 s; the child is reaped."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass
