"""Group commit: results journaled for an event loop without blocking it.

A result must be durable before its page is written and before the worker that got it moves on
(:mod:`wiki_assets.engine.state.journal`); this module is how that costs the loop nothing.
"""

from __future__ import annotations

import asyncio
import threading

from wiki_assets.engine.state.journal import Entry, Journal
from wiki_assets.engine.state.store import StateStore

__all__ = ["JournalWriter"]


class JournalWriter:
    """Records results for an event loop without blocking it, committing them in groups.

    A result must be durable before its page is written and before the worker that got it moves
    on, but a commit is a round trip and a sync to disk (well over a millisecond on PostgreSQL),
    which would stall every other request of the run if it ran on the loop. Here a thread commits
    whatever has queued up since its last commit in one transaction, and each caller's ``await``
    returns once its own result is committed: many results share one commit under load.
    """

    def __init__(self, store: StateStore) -> None:
        self._journal = Journal(store)  # its own connection, used by the writer thread alone
        self._queued: list[tuple[Entry, asyncio.Future[str]]] = []
        self._changed = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._commit_forever, name="journal", daemon=True)
        self._thread.start()

    async def record(self, entry: Entry) -> str:
        """``entry`` committed: its result's JSON text as journaled (see
        :meth:`~wiki_assets.engine.state.journal.Journal.record_summaries`)."""
        done: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        with self._changed:
            if self._closed:
                raise RuntimeError("journal writer is closed")
            self._queued.append((entry, done))
            self._changed.notify()
        return await done

    def close(self) -> None:
        """Commits what is queued, then stops the thread and closes its connection."""
        with self._changed:
            self._closed = True
            self._changed.notify()
        self._thread.join()
        self._journal.close()

    def _commit_forever(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._queued or self._closed)
                batch, self._queued = self._queued, []
                if not batch and self._closed:
                    return
            try:
                texts = self._journal.record_summaries([entry for entry, _ in batch])
            except Exception as error:  # each waiting worker sees the reason, none hangs
                _settle(batch, [""] * len(batch), error)
            else:
                _settle(batch, texts, None)


def _settle(
    batch: list[tuple[Entry, asyncio.Future[str]]], texts: list[str], error: Exception | None
) -> None:
    """Resolve the batch's futures on their loop (with ``texts``, in order, or ``error``), in
    one call: each call from another thread wakes the loop through its self-pipe, and a group
    commit holds many results."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[str], str]]] = {}
    for (_, done), text in zip(batch, texts, strict=True):
        by_loop.setdefault(done.get_loop(), []).append((done, text))

    def resolve(futures: list[tuple[asyncio.Future[str], str]]) -> None:
        for done, text in futures:
            if done.cancelled():
                continue  # the worker was cancelled; its result is committed all the same
            if error is None:
                done.set_result(text)
            else:
                done.set_exception(error)

    for loop, futures in by_loop.items():
        try:
            loop.call_soon_threadsafe(resolve, futures)
        except RuntimeError:
            pass  # the loop is gone: nobody waits any more
