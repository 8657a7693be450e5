"""The processes that extract documents for a run (``python -m`` this module).

Converters are CPU work in native code: in processes of their own they run on every core beside
the run, hold neither its GIL nor its memory, and a converter that crashes on a hostile file
takes down one process (restarted), not the run. Each process reads one job a line on its stdin
(JSON: the file, its format, the text limit) and writes the outcome a line on its stdout; a
thread of the run's per process sends it one job at a time and waits for its answer, at most
:data:`TIME_LIMIT_S`; a scan read by OCR says as each page's OCR begins, and each page then has
its own limit (``ocr.PAGE_LIMIT_S``). A converter that hangs is killed with its process.
A file whose converter crashes, panics or hangs holds no text that can be read: it is listed
with that reason, like a broken file, and looked at again once it changes.

Started as modules of their own, not by ``multiprocessing``: a spawned pool would run the
parent's ``__main__`` again in every child (a user's script, a test runner).
"""

from __future__ import annotations

import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from wiki_assets.engine.documents import archives, ocr
from wiki_assets.engine.documents.extract import extract
from wiki_assets.engine.documents.extracted import Extracted, short
from wiki_assets.engine.errors import DocumentError, NoText
from wiki_assets.engine.lifeline import exit_with_parent

MODULE = "wiki_assets.engine.documents.extractors"

# An extraction's outcome: (the text, why there is none, why it failed); one of them is set.
Outcome = tuple[Extracted | None, str | None, str | None]
Job = tuple[str, str, int]  # (the file's path, its format, the most bytes of text)

NICENESS = 10  # added to an extracting process's niceness

# How long one file's extraction may take, in seconds, before any OCR: far more than any
# readable file needs (docs/benchmarks.md: milliseconds a file, a second for a 600-page PDF), so
# only a converter that hangs reaches it. A scan's OCR then has a limit per page
# (ocr.PAGE_LIMIT_S), from the moment that page's OCR begins.
TIME_LIMIT_S = 120.0
PICTURES = frozenset({"image"})  # formats read by OCR alone (a PDF may be a scan, or not)


def extracted(job: Job) -> Outcome:
    """Extract one file: its outcome, never an exception (a converter's panic included: Rust's
    reaches Python as a ``BaseException``)."""
    path, name, max_bytes = job
    try:
        # (A file inside an archive is read from it: its bytes.)
        return extract(archives.source(Path(path)), name, max_bytes), None, None
    except NoText as error:
        return None, str(error), None
    except DocumentError as error:
        return None, None, str(error)
    except OSError as error:
        return None, None, f"unreadable file: {error.strerror or error}"
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: B036 (a panic, or a converter's own bug)
        return None, f"unreadable {name.upper()} file: {short(error)}", None


class ExtractorPool:
    """``processes`` extracting processes, started on first use and stopped by :meth:`close`;
    ``time_limit_s``: the most a file may take before any OCR, and ``page_limit_s``: each page
    read by OCR (default: :data:`TIME_LIMIT_S`, ``ocr.PAGE_LIMIT_S``)."""

    def __init__(
        self,
        processes: int,
        time_limit_s: float | None = None,
        page_limit_s: float | None = None,
    ) -> None:
        self.processes = processes
        self.time_limit_s = time_limit_s
        self.page_limit_s = page_limit_s
        self._idle: queue.Queue[_Process] = queue.Queue()
        self._all: list[_Process] = []
        self._lock = threading.Lock()

    def map(self, jobs: Sequence[Job]) -> list[Outcome]:
        """The outcome of each job, in order, extracted in parallel."""
        with ThreadPoolExecutor(self.processes, thread_name_prefix="extract") as threads:
            return list(threads.map(self._one, jobs))

    def as_done(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        """Each job's index and outcome as soon as it is extracted, in parallel: a slow file holds
        up no other. Pictures (:data:`PICTURES`, read by OCR: seconds each) begin first, on at
        most half the processes, while the others extract the rest in order for the requests;
        so a drive's scans are read from the start of a run, not at its end. Closing the
        iterator cancels the jobs not begun."""
        lanes = Lanes(jobs, most_reading=max(1, self.processes // 2))
        with ThreadPoolExecutor(self.processes, thread_name_prefix="extract") as threads:
            # (Each task takes the job the lanes give it when it begins, not when submitted.)
            futures = [threads.submit(self._next, lanes) for _ in jobs]
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:
                for future in futures:
                    future.cancel()

    def _next(self, lanes: Lanes) -> tuple[int, Outcome]:
        index = lanes.take()
        try:
            return index, self._one(lanes.jobs[index])
        finally:
            lanes.release(index)

    def __enter__(self) -> ExtractorPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for process in self._all:
                process.stop()
            self._all.clear()

    def _one(self, job: Job) -> Outcome:
        with self._lock:
            if self._idle.empty() and len(self._all) < self.processes:
                started = _Process.start()
                self._all.append(started)
                self._idle.put(started)
        process = self._idle.get()
        try:
            return process.call(
                job, self.time_limit_s or TIME_LIMIT_S, self.page_limit_s or ocr.PAGE_LIMIT_S
            )
        finally:
            self._idle.put(process)


class Lanes:
    """Which job an extracting process takes next: a picture while fewer than ``most_reading``
    are being read (or nothing else is left), else the next other job in order."""

    def __init__(self, jobs: Sequence[Job], most_reading: int) -> None:
        self.jobs = jobs
        self.most_reading = most_reading
        self._pictures = deque(i for i, job in enumerate(jobs) if job[1] in PICTURES)
        self._others = deque(i for i, job in enumerate(jobs) if job[1] not in PICTURES)
        self._reading = 0
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            if self._pictures and (self._reading < self.most_reading or not self._others):
                self._reading += 1
                return self._pictures.popleft()
            return self._others.popleft()

    def release(self, index: int) -> None:
        if self.jobs[index][1] in PICTURES:
            with self._lock:
                self._reading -= 1


class _Process:
    """One extracting process, restarted when it dies."""

    def __init__(self, child: subprocess.Popen[bytes]) -> None:
        self.child = child
        self._pending = bytearray()  # what it wrote past the last line read

    @classmethod
    def start(cls) -> _Process:
        child = subprocess.Popen(
            [sys.executable, "-m", MODULE, str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        return cls(child)

    def call(self, job: Job, limit: float, page_limit: float) -> Outcome:
        """``job``'s outcome, its reader given ``limit`` seconds, and ``page_limit`` for each
        page it reads by OCR from the moment it says that page begins."""
        assert self.child.stdin is not None
        name, waited, page = job[1].upper(), limit, 0
        try:
            self.child.stdin.write(json.dumps(job).encode() + b"\n")
            self.child.stdin.flush()
            while (line := self._line(waited)) and _PAGE in (message := json.loads(line)):
                page, waited = message[_PAGE], page_limit  # an OCR page begins
        except OSError:
            line = b""
        if line is None:  # it hangs on this file: killed, and restarted for the next
            self.child.kill()
            self._restart()
            what = f"its OCR of page {page}" if page else "its reader"
            return None, f"unreadable {name} file: {what} ran over {waited:g} s", None
        if not line:  # it died on this file (a converter's crash): restarted for the next
            code = self._restart()
            return None, f"unreadable {name} file: its reader crashed (exit code {code})", None
        return _outcome(message)

    def _line(self, seconds: float) -> bytes | None:
        """The process's next line; None when it wrote none within ``seconds``, ``b""`` when it
        ended. (Read from the pipe itself: a buffered reader could hold a line that
        ``select`` no longer sees.)"""
        assert self.child.stdout is not None
        pipe = self.child.stdout.fileno()
        deadline = time.monotonic() + seconds
        searched = 0
        while (end := self._pending.find(b"\n", searched)) < 0:
            searched = len(self._pending)
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                return None
            chunk = os.read(pipe, 1 << 16)
            if not chunk:
                return b""
            self._pending += chunk
        line = bytes(self._pending[: end + 1])
        del self._pending[: end + 1]
        return line

    def _restart(self) -> int:
        """Start a new process in place of this one, which has ended (or been killed); its
        exit code."""
        code = self.child.wait()
        for stream in (self.child.stdin, self.child.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass  # (the pipe's other end is gone)
        self.child = _Process.start().child
        self._pending.clear()
        return code

    def stop(self) -> None:
        if self.child.stdin is not None:
            self.child.stdin.close()
        try:
            self.child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.wait()
        if self.child.stdout is not None:
            self.child.stdout.close()


_PAGE = "ocr_page"  # the line a process writes as a page's OCR begins: {"ocr_page": 3}


def _message(outcome: Outcome) -> dict[str, Any]:
    text, no_text, failure = outcome
    if text is None:
        return {"no_text": no_text, "failure": failure}
    return {"text": text.text, "title": text.title, "locations": text.locations, "ocr": text.ocr}


def _outcome(message: dict[str, Any]) -> Outcome:
    if "text" not in message:
        return None, message.get("no_text"), message.get("failure")
    locations = tuple((int(line), str(label)) for line, label in message["locations"])
    return Extracted(message["text"], message["title"], locations, message["ocr"]), None, None


def main() -> None:
    """A job a line in, its outcome a line out, until stdin closes (the run ended, or died). What
    a converter prints goes to stderr: stdout is the answers'. A run that dies mid-extraction
    ends this process too, without waiting for the converter (the run's pid is the argument)."""
    if len(sys.argv) > 1:
        exit_with_parent(int(sys.argv[1]))
    # Below the run in the scheduler's eyes (and so is tesseract, started from here): on cores
    # the run needs for its requests, extraction and OCR take what it leaves.
    os.nice(NICENESS)
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())

    def page_begins(number: int) -> None:
        answers.write(json.dumps({_PAGE: number}).encode() + b"\n")
        answers.flush()

    ocr.page_begins = page_begins
    for line in sys.stdin.buffer:
        path, name, max_bytes = json.loads(line)
        answer = json.dumps(_message(extracted((path, name, max_bytes))), ensure_ascii=False)
        answers.write(answer.encode("utf-8") + b"\n")
        answers.flush()


if __name__ == "__main__":
    main()
