"""Link candidates computed ahead of the workers: a lookahead's worth in one call, on one thread.

On a first run no document has stored candidates, and asking the related index for each one as
its worker prepares it costs a thread hop per document and a query that repeats what its
neighbours read (the documents of a run share most of their grams' posting lists). Instead the
plan hands every lookahead of documents without stored candidates to :meth:`CandidatesAhead.expect`
as it streams them, one lookahead before their workers claim them; one thread answers each
lookahead with :meth:`~wiki_assets.engine.related.RelatedIndex.candidates_many`, in stream order,
so the event loop does no query work and a worker usually finds its document's answer waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from wiki_assets.engine.related import Candidate, RelatedIndex

Answers = dict[str, list[Candidate]]


class CandidatesAhead:
    """The candidates of the documents the plan expects, computed on one thread of their own."""

    def __init__(self, related: RelatedIndex, k: int) -> None:
        self._related = related
        self._k = k
        # One thread: the lookaheads are answered in the order they were expected (the order the
        # workers claim them), and a second would only contend with the first for the GIL.
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="candidates")
        self._expected: dict[str, Future[Answers]] = {}
        self._closed = False

    def expect(self, paths: Sequence[str]) -> None:
        """Start computing the candidates of ``paths`` (one call for all of them); nothing once
        closed (a stopped run still counts what it left unstarted)."""
        if paths and not self._closed:
            answers = self._pool.submit(self._related.candidates_many, list(paths), self._k)
            for path in paths:
                self._expected[path] = answers

    async def candidates(self, path: str) -> list[Candidate]:
        """``path``'s candidates: the expected answer when it comes, else one query of its own
        (off the event loop)."""
        answers = self._expected.pop(path, None)
        if answers is None:
            return await asyncio.to_thread(self._related.candidates, path, self._k)
        return (await asyncio.wrap_future(answers))[path]

    def close(self) -> None:
        """Drop what nobody asked for yet and wait for the query running now (before the index
        closes)."""
        self._closed = True
        self._expected.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)
