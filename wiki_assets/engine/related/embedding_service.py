"""The run's side of the embedding process (:mod:`~wiki_assets.engine.related.embedder`).

:meth:`EmbeddingService.start` starts the process with the endpoint; :meth:`~EmbeddingService.
send` hands it documents (id and opening), which it embeds in that order; :meth:`~EmbeddingService.
end` says that no more will come. A task reads what the process says: how many documents it has
embedded so far (:attr:`~EmbeddingService.embedded`), or why it gave up
(:attr:`~EmbeddingService.failure`). :meth:`~EmbeddingService.stop` ends it at once, keeping what
it stored; :meth:`~EmbeddingService.close` ends it either way and says how it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.ending_tasks import ended
from wiki_assets.engine.environment import PACKAGE_ROOT, helper_environment

EMBEDDER_MODULE = "wiki_assets.engine.related.embedder"
STOP_WAIT_S = 2.0
"""How long :meth:`EmbeddingService.close` waits for the process to end before it kills it."""


class EmbeddingService:
    """See the module docstring. The task reading the process's output ends before
    :meth:`close` returns, whichever way it returns."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process
        self.pid = process.pid
        self.embedded = 0  # documents embedded and stored so far
        self.failure: str | None = None  # why the process gave up, if it did
        self.progressed = asyncio.Event()  # set at each news, for a waiter to look again
        self._reader: asyncio.Task[None] | None = None
        self._stopped = False  # ended by stop(): its exit is no failure

    @classmethod
    async def start(cls, db_path: Path, endpoint: EmbeddingsEndpoint) -> EmbeddingService:
        """The process for the index at ``db_path``, embedding through ``endpoint``."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            EMBEDDER_MODULE,
            str(db_path.resolve()),
            str(os.getpid()),
            cwd=PACKAGE_ROOT,
            env=helper_environment(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        service = cls(process)
        service._reader = asyncio.create_task(service._read_news())
        assert process.stdin is not None
        process.stdin.write(json.dumps(dataclasses.asdict(endpoint)).encode() + b"\n")
        return service

    @property
    def finished(self) -> bool:
        """The process has ended (everything sent is embedded, or it gave up, or it was
        stopped) and what it said is read."""
        return self._reader is not None and self._reader.done()

    @property
    def returncode(self) -> int | None:
        """The process's exit status once it has ended (-9: :meth:`stop` killed it)."""
        return self._process.returncode

    async def send(self, docs: Sequence[tuple[int, str]]) -> bool:
        """Documents to embed, after those sent before: ``(id, opening)``. Waits while the
        process is that far behind (its input pipe is full). False when it is gone."""
        stdin = self._process.stdin
        if stdin is None or stdin.is_closing() or self.finished:
            return False
        stdin.write(b"".join(json.dumps(doc, ensure_ascii=False).encode() + b"\n" for doc in docs))
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return False
        return True

    def end(self) -> None:
        """No more documents: the process embeds those it has, then ends."""
        stdin = self._process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()

    async def _read_news(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        try:
            async for line in stdout:
                news = json.loads(line)
                self.embedded = news.get("embedded", self.embedded)
                self.failure = news.get("failed", self.failure)
                self.progressed.set()
        finally:
            await self._process.wait()
            self.progressed.set()

    async def wait(self) -> None:
        """Until the process has ended."""
        if self._reader is not None:
            await ended([self._reader])

    def stop(self) -> None:
        """End the process now (a run that stops); the vectors it stored stay."""
        self._stopped = True
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # (it exited just now)
                self._process.kill()

    async def close(self) -> str | None:
        """End the process (when it has not ended: :meth:`end`, then after
        :data:`STOP_WAIT_S` killed); how it failed, or None when it ended as asked."""
        self.end()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._process.wait()), STOP_WAIT_S)
        finally:
            if self._process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    self._process.kill()
            await ended([asyncio.ensure_future(self._process.wait()), *self._tasks()])
        errors = await self._process.stderr.read() if self._process.stderr is not None else b""
        if self._process.returncode == 0 or self._stopped or self.failure is not None:
            return self.failure
        last = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        return f"exit status {self._process.returncode}: {last[0][:300]}"

    def _tasks(self) -> list[asyncio.Task[None]]:
        return [self._reader] if self._reader is not None else []
