"""Link candidates answered in a helper process, beside a run's requests.

A document's request lists its link candidates, so a first run needs a candidates query for every
document (about half a millisecond of CPU each) before its request. Run in the run's own process,
those queries hold the GIL that the requests need; run before the first request, they hold the
requests back. So when a run has many to answer, :class:`CandidatesService` starts a helper process
with its own connection to the index (SQLite's WAL lets it write beside the run's reads) and tells
it the run's plan. A document's preparation asks the helper for that document's candidates and
awaits them. The helper process (:mod:`~wiki_assets.engine.related.helper`, with its protocol)
answers the asks waiting together, exactly the answers the run would compute itself; between asks
it answers ahead the documents the workers will reach next. Every answer is stored for the next
run.

A helper that fails costs only time: :meth:`CandidatesService.candidates` then returns None and
the run computes the answer itself, and :meth:`CandidatesService.close` says how the helper ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from wiki_assets.engine.ending_tasks import ended
from wiki_assets.engine.environment import PACKAGE_ROOT, helper_environment
from wiki_assets.engine.prompting.candidate import Candidate

SERVICE_MIN = 256
"""Documents to answer below which a run answers them itself: a helper costs about 0.15 s of CPU
to start, which a few hundred queries do not win back."""
STOP_WAIT_S = 5.0
"""How long :meth:`CandidatesService.close` waits for the helper to end before it kills it."""
HELPER_MODULE = "wiki_assets.engine.related.helper"
LINE_LIMIT = 1 << 24  # an answer line's bytes: eight candidates' paths, titles and lines


class CandidatesService:
    """The run's side of the helper process: :meth:`start`, :meth:`candidates`, :meth:`close`.
    The task that reads the helper's answers is started by :meth:`start` and ends before
    :meth:`close` returns, whichever way it returns."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self.pid = process.pid
        self._waiting: dict[str, asyncio.Future[list[Candidate] | None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.answered = 0  # answers that came back

    @classmethod
    async def start(
        cls, db_path: Path, k: int, plan: Sequence[str] | None = None
    ) -> CandidatesService:
        """A helper for the index at ``db_path``, told the run's ``plan`` (the documents it will
        ask for, in the order the run takes them) now or later by :meth:`send_plan`. Started
        before the plan is known, it imports what it needs while the run indexes the corpus,
        and waits for the plan to begin."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            HELPER_MODULE,
            str(db_path.resolve()),
            str(k),
            cwd=PACKAGE_ROOT,
            env=helper_environment(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=LINE_LIMIT,
        )
        service = cls(process)
        service._reader = asyncio.create_task(service._read_answers())
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
            reader = self._reader
            if reader is None or reader.done() or stdin is None or stdin.is_closing():
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
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), STOP_WAIT_S)
        finally:
            # Cancelled meanwhile, or out of time: the helper is killed. Either way it has
            # exited, and the reader has read its output to the end, when close returns (or
            # raises its cancellation).
            exiting = []
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):  # (it exited just now)
                    process.kill()
                exiting.append(asyncio.ensure_future(process.wait()))
            await ended([*exiting, *([self._reader] if self._reader else [])])
        errors = await process.stderr.read() if process.stderr is not None else b""
        if process.returncode == 0:
            return None
        last = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"exit status {process.returncode}: {last[0][:300]}"
