"""One ingest at a time per collection, across processes and machines sharing the wiki folder.

Two runs writing the same collection would race on its pages and its journal rows; a run that finds
a collection locked stops before doing anything, with a message naming who holds it. The locks are
``flock`` locks on files in the wiki's state folder: the kernel releases them when the holder exits,
however it exits, so a killed run never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import socket
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO


class CollectionBusy(RuntimeError):
    pass


@contextmanager
def collection_locks(state_dir: Path, collections: Iterable[str]) -> Iterator[None]:
    folder = state_dir / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with ExitStack() as held:
        # A fixed order, so two runs over overlapping collections cannot deadlock.
        for collection in sorted(set(collections)):
            name = hashlib.sha256(collection.encode()).hexdigest()[:16] + ".lock"
            handle = held.enter_context((folder / name).open("a+", encoding="utf-8"))
            _lock(handle, collection)
        yield


def _lock(handle: IO[str], collection: str) -> None:
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        raise CollectionBusy(
            f"collection {collection!r} is being ingested by another run ({holder}); "
            "wait for it to finish, then run again"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} on {socket.gethostname()}")
    handle.flush()
