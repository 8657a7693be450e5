"""The page writer process: ``python -m wiki_assets.engine.wiki.writer SCRATCH``.

A flush renders its pages on its own thread, and this process writes them. Writing a page is
file-system calls (create, write, close, rename over the old page); in the run's process each of
them lets go of the GIL and then waits to take it back from the event loop, so the writes cost the
run's one core. Here they run on another core while the run renders the next page and keeps its
requests going. The run checks every page's folder (inside the wiki, outside its state folder)
before it sends the page; this process writes exactly the paths it is sent.

Protocol, on stdin: frames of a header (:data:`HEADER`: the target path's length in bytes, then
the page's), the target path (absolute) and the page's bytes; a header of two zeros ends a batch.
On stdout, after each batch: one JSON line, its failures as ``[index in the batch, errno,
message]``. End of stdin: the process exits.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from wiki_assets.engine.environment import PACKAGE_ROOT
from wiki_assets.engine.wiki.files import write_file

WRITER_MODULE = "wiki_assets.engine.wiki.writer"
HEADER = struct.Struct(">II")
STOP_WAIT_S = 10.0
"""How long :meth:`PageWriter.close` waits for the writer to finish before it kills it."""


class PageWriter:
    """The run's side of the writer process: :meth:`start`, then per batch :meth:`send` each
    page and :meth:`finish`; :meth:`close`. Used by one thread at a time (the flush thread)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self._process = process
        self.pid = process.pid
        self._sent = 0  # pages sent in this batch
        self.broken: str | None = None  # why the writer is not used any more

    @classmethod
    def start(cls, scratch: Path) -> PageWriter | None:
        """A writer for pages whose temporaries go to ``scratch``; None if it cannot start (the
        run then writes its pages itself)."""
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", WRITER_MODULE, str(scratch)],
                cwd=PACKAGE_ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError:
            return None
        return cls(process)

    def send(self, target: Path, data: bytes) -> bool:
        """Hand one page to the writer; False if the writer is gone (write it yourself)."""
        stdin = self._process.stdin
        if self.broken is not None or stdin is None:
            return False
        path = os.fsencode(target)
        try:
            stdin.write(HEADER.pack(len(path), len(data)))
            stdin.write(path)
            stdin.write(data)
        except (BrokenPipeError, ValueError) as error:  # ValueError: the pipe was closed
            self._break(error)
            return False
        self._sent += 1
        return True

    def finish(self) -> dict[int, OSError] | None:
        """Wait until every page of this batch is written: the errors by the page's place in the
        batch, or None if the writer died first (then any of them may be unwritten)."""
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        sent, self._sent = self._sent, 0
        if self.broken is not None:
            return None
        try:
            stdin.write(HEADER.pack(0, 0))
            stdin.flush()
            line = stdout.readline()
            failures = json.loads(line) if line else None
        except (BrokenPipeError, ValueError) as error:
            self._break(error)
            return None
        if failures is None:
            self._break(EOFError("no answer"))
            return None
        assert sent >= len(failures)
        return {at: OSError(errno, message) for at, errno, message in failures}

    def _break(self, error: BaseException) -> None:
        self.broken = f"page writer process {self.pid} is gone ({type(error).__name__})"

    def close(self) -> str | None:
        """End the writer; returns how it failed, or None when it ended as asked."""
        process = self._process
        try:
            # Closes stdin, the end of pages: the writer exits.
            _, errors = process.communicate(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            _, errors = process.communicate()
        if process.returncode == 0:
            return None
        last = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"exit status {process.returncode}: {last[0][:300]}"


def serve(scratch: Path, frames: IO[bytes], replies: IO[bytes]) -> None:
    """Write the pages framed on ``frames``; after each batch, its failures on ``replies``."""
    failures: list[tuple[int, int | None, str]] = []
    at = 0
    while True:
        header = frames.read(HEADER.size)
        if len(header) < HEADER.size:
            return  # end of pages
        path_size, size = HEADER.unpack(header)
        if path_size == 0:
            replies.write(json.dumps(failures).encode() + b"\n")
            replies.flush()
            failures, at = [], 0
            continue
        target = Path(os.fsdecode(frames.read(path_size)))
        data = frames.read(size)
        if len(data) < size:
            return  # cut short: the run is gone
        try:
            write_file(scratch, target, data)
        except OSError as error:
            failures.append((at, error.errno, error.strerror or str(error)))
        at += 1


def main(argv: Sequence[str]) -> int:
    # Ctrl-C in a terminal (or a TERM sent to the process group) reaches this process too: the
    # run stops itself, writes the pages it has, and then ends them. The end of stdin is this
    # process's only stop, so it also ends when the run is killed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    (scratch,) = argv
    serve(Path(scratch), sys.stdin.buffer, sys.stdout.buffer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
