"""The link candidates helper process: ``python -m wiki_assets.engine.related.helper DB K``.

Started by :class:`~wiki_assets.engine.related.service.CandidatesService` beside a run. It imports
the related index alone (numpy and SQLite), not asyncio, the engine's dispatch or ``openai``, so
that it starts in about 0.15 s of CPU. Protocol, one JSON value per line: the run
writes its plan (every path, in its order), then one path per ask; the helper writes
``[path, [[path, title, line, score], ...]]`` per answer. The asks waiting together are answered
in one :meth:`~.index.RelatedIndex.candidates_many` (exactly the answers the run would compute
itself); between asks it answers ahead the documents the workers will reach next (:class:`_Ahead`)
and holds those answers until they are asked for, while the index stays as it was when they were
computed (its generation): an answer held from before a change (vectors being embedded beside the
requests, documents extracted beside them) is computed again when asked for, and while the index
keeps changing nothing is answered ahead. Every answer is stored for the next run.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from wiki_assets.engine.prompting.candidate import Candidate
from wiki_assets.engine.related.index import RelatedIndex

BATCH = 64
"""Most documents the helper answers in one query."""
READY_MAX = 4096
"""Most answers the helper holds ahead of the asks (a few MB): past it, it waits for asks."""
HELPER_CACHE_MIB = 4
"""SQLite's page cache for the helper's connections: it writes only answers, and the posting
lists it reads are read whole, once per batch (the run keeps the default, 16)."""


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
        # Answer lines waiting to be asked for, with the index's generation they were computed at.
        self.ready: dict[str, tuple[int, bytes]] = {}

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
    seen = -1  # the index's generation at the last look
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
            generation = index.generation()
            steady, seen = generation == seen, generation
            # Block for asks only when there is nothing to answer ahead (nothing while the index
            # changes: it would be computed again).
            while not ended and len(paths) < BATCH:
                if b"\n" not in pending:
                    busy = paths or (ahead is not None and steady and ahead.has_work())
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
                now = index.generation()
                held = {path: ahead.ready.pop(path) for path in paths if path in ahead.ready}
                ready = {path: line for path, (at, line) in held.items() if at == now}
                ready.update(answer([path for path in paths if path not in ready]))
                out.write(b"".join(ready[path] for path in paths))
                out.flush()
            elif not ended and steady:
                found = answer(ahead.next_batch())
                ahead.ready.update((path, (generation, line)) for path, line in found.items())
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
