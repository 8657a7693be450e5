"""What ties a run's child processes to the run's life, however the run dies: a SIGKILL, the OOM
killer or a pod's eviction gives it no chance to stop them, and a child left behind keeps its
memory and its port for good.

- A server (the embedded llama.cpp and e5 servers) is started under a wrapper, this module run
  as a script (:func:`tethered` gives the command line). The wrapper starts the server as its own
  child with ``PR_SET_PDEATHSIG``, so the server gets SIGKILL the moment the wrapper dies; and the
  wrapper watches its own parent, the run: once the run is gone (the wrapper is re-parented), it
  stops the server and its process group. ``PR_SET_PDEATHSIG`` is not set on the wrapper itself
  because it fires when the *thread* that started the process ends, and a run starts its servers
  from whichever thread needs them; the wrapper is single-threaded, so for the server it holds.
  Signals sent to the wrapper reach the server, and the wrapper exits as the server did (its
  code, or the same signal), so a run reads the server's fate from the wrapper's.
- A Python child of the run's own (the extracting processes) calls :func:`exit_with_parent`: a
  thread that ends the process once its parent is gone, even while it is busy in a converter.

Run as a script with ``python -I -S``, so it imports the standard library alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence

POLL_S = 0.2  # how often a child looks whether its parent is still there
STOP_S = 2.0  # for the server to exit after SIGTERM once the run is gone, before SIGKILL
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
# Sent to the wrapper, each is passed on to the server (a run stops its servers with SIGTERM).
_PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_WATCHED = (signal.SIGCHLD, *_PASSED_ON)


def tethered(command: Sequence[str], parent: int | None = None) -> list[str]:
    """The command line that starts ``command`` tied to the life of ``parent`` (this process)."""
    return [
        sys.executable, "-I", "-S", os.path.abspath(__file__),
        str(os.getpid() if parent is None else parent), "--", *command,
    ]  # fmt: skip


def exit_with_parent(parent: int) -> threading.Thread:
    """In a child process: end this process (exit status 1) as soon as ``parent`` is no longer
    its parent. A daemon thread polls every :data:`POLL_S`."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_S)
        os._exit(1)

    thread = threading.Thread(target=watch, name="exit with parent", daemon=True)
    thread.start()
    return thread


def _die_with_this_thread(parent: int) -> None:
    """In the server's process, before its ``exec``: SIGKILL once ``parent`` (the wrapper, whose
    only thread forked it) dies; and at once if it already has."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _exit_as(status: int) -> None:
    """End the wrapper the way its server ended: the same exit code, or the same signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status))


def _stop(server: int) -> None:
    """The run is gone: SIGTERM to the server, then SIGKILL to its whole process group (this
    wrapper's, which anything the server started shares) after :data:`STOP_S`."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(server, signal.SIGTERM)
    deadline = time.monotonic() + STOP_S
    while time.monotonic() < deadline:
        if os.waitpid(server, os.WNOHANG)[0]:
            break
        time.sleep(0.05)
    os.killpg(os.getpgrp(), signal.SIGKILL)  # this wrapper included


def main(argv: Sequence[str]) -> None:
    """``PARENT -- COMMAND...``: run COMMAND while PARENT is this process's parent."""
    parent, separator, *command = argv
    assert separator == "--" and command, "usage: lifeline.py PARENT -- COMMAND..."
    # A core dump would be a file outside the wiki: neither the wrapper nor the server writes one.
    with contextlib.suppress(ImportError, ValueError, OSError):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for number in _WATCHED:  # at their defaults, whatever the run did with them
        signal.signal(number, signal.SIG_DFL)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    wrapper = os.getpid()
    server = os.fork()
    if server == 0:
        _die_with_this_thread(wrapper)
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        try:
            os.execvp(command[0], command)
        except OSError as error:
            print(f"cannot start {command[0]}: {error}", file=sys.stderr, flush=True)
        os._exit(127)
    while True:
        arrived = signal.sigtimedwait(_WATCHED, POLL_S)
        if arrived is not None and arrived.si_signo != signal.SIGCHLD:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server, arrived.si_signo)
        ended, status = os.waitpid(server, os.WNOHANG)
        if ended:
            _exit_as(status)
        if os.getppid() != int(parent):
            _stop(server)


if __name__ == "__main__":
    main(sys.argv[1:])
