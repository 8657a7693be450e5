"""Link candidates answered in a helper process, beside a run's requests.

A document's request lists its link candidates, so a first run needs a candidates query for every
document (about half a millisecond of CPU each) before its request. Run in the run's own process,
those queries hold the GIL that the requests need; run before the first request, they hold the
requests back. So when a run has many to answer, :class:`CandidatesService` starts a helper process
with its own connection to the index (SQLite's WAL lets it write beside the run's reads) and tells
it the run's plan. A document's preparation asks the helper for that document's candidates and
awaits them. The helper answers the asks waiting together, in one
:meth:`~.index.RelatedIndex.candidates_many` (exactly the answers the run would compute itself);
between asks it answers ahead the documents the workers will reach next (:class:`_Ahead`) and holds
those answers until they are asked for. Every answer is stored for the next run.

A helper that fails costs only time: :meth:`CandidatesService.candidates` then returns None and
the run computes the answer itself, and :meth:`CandidatesService.close` says how the helper ended.

The helper imports the related index alone (numpy and SQLite), not the engine's dispatch and
``openai``, so it starts in about a fifth of a second. Protocol, one JSON value per line: the run
writes its plan (every path, in its order), then one path per ask; the helper writes
``[path, [[path, title, line, score], ...]]`` per answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import select
import signal
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from wiki_assets.engine.related.answers import Candidate
from wiki_assets.engine.related.index import RelatedIndex

SERVICE_MIN = 256
"""Documents to answer below which a run answers them itself: a helper costs about 0.2 s of CPU
to start, which a few hundred queries do not win back."""
BATCH = 64
"""Most documents the helper answers in one query."""
READY_MAX = 4096
"""Most answers the helper holds ahead of the asks (a few MB): past it, it waits for asks."""
STOP_WAIT_S = 5.0
"""How long :meth:`CandidatesService.close` waits for the helper to end before it kills it."""
HELPER_CACHE_MIB = 4
"""SQLite's page cache for the helper's connections: it writes only answers, and the posting
lists it reads are read whole, once per batch (the run keeps the default, 16)."""
PACKAGE_ROOT = Path(__file__).resolve().parents[3]  # the folder holding wiki_assets/
LINE_LIMIT = 1 << 24  # an answer line's bytes: eight candidates' paths, titles and lines


class CandidatesService:
    """The run's side of the helper process: :meth:`start`, :meth:`candidates`, :meth:`close`."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self.pid = process.pid
        self._waiting: dict[str, asyncio.Future[list[Candidate] | None]] = {}
        self._reader = asyncio.create_task(self._read_answers())
        self.answered = 0  # answers that came back

    @classmethod
    async def start(
        cls, db_path: Path, k: int, plan: Sequence[str] | None = None
    ) -> CandidatesService:
        """A helper for the index at ``db_path``, told the run's ``plan`` (the documents it will
        ask for, in the order the run takes them) now or later by :meth:`send_plan`. Started
        before the plan is known, it imports what it needs while the run indexes the corpus,
        and waits for the plan to begin."""
        # Started in the folder that holds this package, which ``-m`` puts first on the
        # helper's path: it imports the package this process did, installed or not.
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            __name__,
            str(db_path.resolve()),
            str(k),
            cwd=PACKAGE_ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=LINE_LIMIT,
        )
        service = cls(process)
        if plan is not None:
            service.send_plan(plan)
        return service

    def send_plan(self, plan: Sequence[str]) -> None:
        """Tell the helper the run's plan; it answers nothing before it has it."""
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(list(plan)).encode() + b"\n")

    async def candidates(self, path: str) -> list[Candidate] | None:
        """``path``'s link candidates, or None when the helper is gone (compute them here)."""
        waiting = self._waiting.get(path)
        if waiting is None:
            stdin = self._process.stdin
            if self._reader.done() or stdin is None or stdin.is_closing():
                return None
            waiting = self._waiting[path] = asyncio.get_running_loop().create_future()
            stdin.write(json.dumps(path).encode() + b"\n")
        return await asyncio.shield(waiting)

    async def _read_answers(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            async for line in stdout:
                path, found = json.loads(line)
                waiting = self._waiting.pop(path, None)
                if waiting is not None and not waiting.done():
                    waiting.set_result([Candidate(*candidate) for candidate in found])
                    self.answered += 1
        finally:
            for waiting in self._waiting.values():  # the helper is gone: the run computes them
                if not waiting.done():
                    waiting.set_result(None)
            self._waiting.clear()

    async def close(self) -> str | None:
        """End the helper (it stores what it answered as it goes); returns how it failed, or None
        when it ended as asked."""
        process = self._process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()  # end of asks: the helper finishes its batch and exits
        try:
            await asyncio.wait_for(process.wait(), STOP_WAIT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        errors = await process.stderr.read() if process.stderr is not None else b""
        if process.returncode == 0:
            return None
        last = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"exit status {process.returncode}: {last[0][:300]}"


class _Ahead:
    """What the helper answers when nothing is asked, and the answers it holds until asked for:
    the documents right after each one asked for (a worker claims documents in the plan's order,
    so these are its next ones), else the next in the plan's order. Each is answered once; at
    most :data:`READY_MAX` answers wait to be asked for."""

    def __init__(self, plan: list[str]) -> None:
        self.plan = plan
        self.place = {path: at for at, path in enumerate(plan)}
        self.taken = bytearray(len(plan))  # answered ahead, or asked for
        self.after: deque[int] = deque()  # places right after a document asked for
        self.cursor = 0  # every place before it is taken
        self.ready: dict[str, bytes] = {}  # answer lines waiting to be asked for

    def asked(self, paths: Sequence[str]) -> None:
        for path in paths:
            at = self.place.get(path)
            if at is not None:
                self.taken[at] = 1
                # Only where the next one is not taken yet: a window that starts behind answers
                # already held would be a batch of one or two, each costing nearly a full query.
                if at + 1 < len(self.plan) and not self.taken[at + 1]:
                    self.after.append(at + 1)

    def has_work(self) -> bool:
        if len(self.ready) >= READY_MAX:
            return False
        while self.cursor < len(self.plan) and self.taken[self.cursor]:
            self.cursor += 1
        return bool(self.after) or self.cursor < len(self.plan)

    def next_batch(self) -> list[str]:
        """Up to :data:`BATCH` documents to answer ahead, taken (empty: nothing is left)."""
        while self.after:
            start = self.after.popleft()
            places = [at for at in range(start, min(start + BATCH, len(self.plan)))
                      if not self.taken[at]]  # fmt: skip
            if places:
                return self._take(places)
        if not self.has_work():
            return []
        stop = min(self.cursor + BATCH, len(self.plan))
        return self._take([at for at in range(self.cursor, stop) if not self.taken[at]])

    def _take(self, places: list[int]) -> list[str]:
        for at in places:
            self.taken[at] = 1
        return [self.plan[at] for at in places]


def serve(db_path: Path, k: int, asks: int = 0, answers: int = 1) -> None:
    """The helper: read the run's plan (the first line of ``asks``, a file descriptor: every path
    in the order the run will take them), then answer each path asked for, one per line, with its
    candidates, written to ``answers``; the asks waiting at the moment are answered together.
    Between asks, it answers the plan's documents ahead of them (:class:`_Ahead`), stores those
    answers for the next run and holds them until they are asked for. Ends when ``asks`` does."""
    pending = b""
    ended = False
    ahead: _Ahead | None = None
    with (
        RelatedIndex(db_path, cache_mib=HELPER_CACHE_MIB) as index,
        os.fdopen(answers, "wb") as out,
    ):
        unsaved = 0

        def answer(paths: list[str]) -> dict[str, bytes]:
            nonlocal unsaved
            found = index.candidates_many(paths, k)  # kept for save_answers
            unsaved += len(paths)
            return {path: _answer_line(path, found[path]) for path in paths}

        while not ended or ahead is None:
            paths: list[str] = []
            # Block for asks only when there is nothing to answer ahead.
            while not ended and len(paths) < BATCH:
                if b"\n" not in pending:
                    busy = paths or (ahead is not None and ahead.has_work())
                    if busy and not select.select([asks], [], [], 0)[0]:
                        break
                    data = os.read(asks, 1 << 16)
                    ended = not data
                    pending += data
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if ahead is None:
                        ahead = _Ahead(json.loads(line))
                    elif line:
                        paths.append(json.loads(line))
            if ahead is None:
                return  # the run ended before it sent its plan
            if paths:
                ahead.asked(paths)
                ready = {path: ahead.ready.pop(path) for path in paths if path in ahead.ready}
                ready.update(answer([path for path in paths if path not in ready]))
                out.write(b"".join(ready[path] for path in paths))
                out.flush()
            elif not ended:
                ahead.ready.update(answer(ahead.next_batch()))
            # Stored for the next run a batch at a time, once the asks are answered: another run
            # may be holding the index's write lock while it indexes, and no ask waits for that.
            # Closing the index stores the rest.
            if unsaved >= BATCH:
                index.save_answers()
                unsaved = 0


def _answer_line(path: str, found: Sequence[Candidate]) -> bytes:
    described = [[c.path, c.title, c.line, c.score] for c in found]
    return json.dumps([path, described], ensure_ascii=False).encode() + b"\n"


def main(argv: Sequence[str]) -> int:
    # Ctrl-C in a terminal reaches the whole process group: the run stops itself and then ends
    # the asks, and the helper answers the last of them until then.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    db_path, k = argv
    try:
        serve(Path(db_path), int(k))
    except BrokenPipeError:  # the run is gone
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
