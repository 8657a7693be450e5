"""A local server run as a child process for the length of a ``with`` block: the embedded chat
model (:mod:`~wiki_assets.engine.llm.local_server`) and the embedded embeddings model
(:mod:`~wiki_assets.engine.llm.embedded_embeddings`) are both started and stopped this way.

The child runs in its own process group on a free loopback port, so stopping it also stops
anything it started. It runs under a wrapper that stops it when this process dies, however it
dies (:mod:`wiki_assets.engine.lifeline`), passes signals on to it and exits as it did. Its output
is kept in memory (the last lines explain a failed start or a crash) because nothing may be
written outside the wiki. A run watches the child while it uses it
(:meth:`ChildServer.exit_notice`): a server that dies mid-run is named, with its exit code or
signal and its last lines, instead of surfacing as refused connections.
"""

from __future__ import annotations

import contextlib
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
from dataclasses import dataclass, field

from wiki_assets.engine.errors import EmbeddedModelUnavailable
from wiki_assets.engine.lifeline import tethered
from wiki_assets.engine.llm.leftovers import ServerRecords

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


TAIL_LINES = 40  # of the child's output, kept to explain a failed start or a crash
SHOWN_LINES = 8  # of those, shown when it dies mid-run
# Signals by which native code dies of itself: an instruction the CPU refuses (SIGILL), a bad
# address or a general protection fault (SIGSEGV), a bad memory access (SIGBUS).
CRASH_SIGNALS = frozenset({signal.SIGILL, signal.SIGSEGV, signal.SIGBUS})
STOP_WAIT_S = 10.0  # for the child to exit after SIGTERM, before SIGKILL
OUTPUT_JOIN_S = 5.0  # for the reader of a stopped child's output to see it close


@dataclass(eq=False)
class ChildServer:
    """A server child process while a ``with`` block uses it: its label (e.g. "llama.cpp
    server"), the process, the last lines of its output, and what to tell a user when it
    crashes (``crash_hint``, e.g. how to rebuild it)."""

    label: str
    process: subprocess.Popen[bytes]
    crash_hint: str | None = None
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    reader: threading.Thread | None = None  # reads its output into ``tail``
    stopping: bool = False  # it is being stopped on purpose: its exit is no news

    def exit_notice(self) -> str | None:
        """None while it runs (or while it is being stopped); once it has exited on its own, one
        message naming it, its exit code or signal and its last lines, and for a crash by a
        signal ``crash_hint``. Cheap enough to poll (one ``waitpid`` with ``WNOHANG``)."""
        if self.stopping or self.process.poll() is None:
            return None
        return exit_message(
            f"{self.label} (pid {self.process.pid})",
            self.process.returncode,
            list(self.tail),
            self.crash_hint,
        )


def exit_message(
    who: str, returncode: int, tail: Sequence[str], crash_hint: str | None = None, when: str = ""
) -> str:
    """``who`` died (``when``, e.g. "before it answered"): how (``exited with code 1``, ``was
    killed by SIGSEGV (signal 11)``) and, when native code crashed by a signal, ``crash_hint``,
    on the first line; then its last lines of output."""
    if returncode < 0:
        number = -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        how = f"was killed by {name} (signal {number})"
    else:
        how = f"exited with code {returncode}"
    message = f"{who} {how}{' ' + when if when else ''}"
    if crash_hint and returncode < 0 and -returncode in CRASH_SIGNALS:
        message += f". {crash_hint}"
    lines = [line for line in tail if line.strip()][-SHOWN_LINES:]
    if not lines:
        return message + " (no output)"
    return message + "\n  its last output:\n" + "\n".join(f"  | {line}" for line in lines)


@contextmanager
def child_server(
    command: Sequence[str],
    ready_url: str,
    label: str,
    start_timeout_s: float,
    crash_hint: str | None = None,
    records: ServerRecords | None = None,
) -> Iterator[ChildServer]:
    """Start ``command``, wait until a GET of ``ready_url`` answers 200, yield the server, stop
    it. A child that exits first, or does not answer within ``start_timeout_s``, raises
    :class:`EmbeddedModelUnavailable` naming ``label`` (e.g. "llama.cpp server"), with how it
    exited and its last lines. The server dies with this process however it dies
    (:func:`~wiki_assets.engine.lifeline.tethered`), and while it runs it is in ``records`` (the
    wiki's), so that a later run stops it should that tie fail."""
    process = subprocess.Popen(
        tethered(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    server = ChildServer(label, process, crash_hint)
    record = records.add(process.pid, label) if records is not None else None
    try:
        # Ends when the child's output closes, which stopping it (below) makes happen.
        server.reader = threading.Thread(
            target=_drain, args=(process, server.tail), name=f"{label} output", daemon=True
        )
        server.reader.start()
        _wait_until_ready(server, ready_url, start_timeout_s)
        yield server
    finally:
        server.stopping = True
        try:
            stop(process)
        finally:
            ServerRecords.remove(record)
            _join(server)


def _drain(process: subprocess.Popen[bytes], tail: deque[str]) -> None:
    stdout = process.stdout
    assert stdout is not None
    try:
        for line in stdout:
            tail.append(line.decode("utf-8", "replace").rstrip())
    except (OSError, ValueError):
        pass  # the pipe was closed under it: the child is gone
    finally:
        stdout.close()  # here: closed by another thread, it would wait for this one's read


def _join(server: ChildServer) -> None:
    """Wait for the reader of a stopped child's output: it ends as the output closes, at once
    unless something the child started outlived it (it ignored the SIGTERM, or left the process
    group) and holds the output open; then, after ``OUTPUT_JOIN_S``, the reader is left to end
    with it (a daemon thread, which closes the output itself)."""
    reader = server.reader
    if reader is not None and reader.ident is not None:
        reader.join(timeout=OUTPUT_JOIN_S)
    elif server.process.stdout is not None:
        server.process.stdout.close()  # (no reader ever started)


def _wait_until_ready(server: ChildServer, url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    process = server.process
    while time.monotonic() < deadline:
        if process.poll() is not None:
            time.sleep(0.1)  # the last lines it wrote, through the drain
            raise EmbeddedModelUnavailable(
                exit_message(
                    server.label,
                    process.returncode,
                    list(server.tail),
                    server.crash_hint,
                    when="before it answered",
                )
            )
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise EmbeddedModelUnavailable(f"{server.label} did not answer within {timeout_s:.0f} s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the child's process group: SIGTERM, then SIGKILL after ``STOP_WAIT_S``, or at once
    if the wait is cut short (Ctrl-C while it stops); the child is reaped either way."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=STOP_WAIT_S)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        pass
    finally:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
