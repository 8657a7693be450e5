"""Links by meaning in a run: the documents' vectors, and the links pages get from them.

The plan embeds the documents without a vector before the first request when they are few
(:func:`~wiki_assets.engine.related.embed_missing.embed_first_or_beside`). When they are many (a
first run), the fleet does not wait for them: :class:`LinksByMeaning` has them embedded by a
process of their own (:mod:`~wiki_assets.engine.related.embedding_service`), beside the requests,
in the order the queue takes them (this run's documents first, then every other one without a
vector, then those extracted beside the requests as they are indexed). Each request's candidates
are asked for as it is prepared, with every vector in by then.

A page whose candidates were asked before the last vector came was not offered every partner by
meaning: it is *due* (the flush marks it in the journal with its page). At the end of the run the
run waits for the last vectors, saying so, and then gives each due page its nearest documents by
meaning that it does not link already (:data:`MEANING_LINKS`), marked as such on the page
(:mod:`~wiki_assets.engine.state.meaning_links`), and writes the pages whose links changed. A
stop ends the embedding process at once; the vectors it stored stay, and the due marks wait for
the next run that completes the vectors.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.ending_tasks import cancel_and_wait, ended
from wiki_assets.engine.ingestion.plan import RELATED_CANDIDATES, RunPlan
from wiki_assets.engine.ingestion.progress import Log
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.embedding_service import EmbeddingService
from wiki_assets.engine.related.vectors import EMBED_CHARS
from wiki_assets.engine.state.journal import WRITTEN, Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.files import Wiki
from wiki_assets.engine.wiki.links import relink

MEANING_LINKS = 2
"""Documents nearest in meaning a due page links, besides its model's links."""
SEND = 64  # documents whose openings are read and sent to the embedding process together
WAIT_LINE_S = 10.0  # while the run waits for the last vectors, a line this often


@dataclass(eq=False)
class LinksByMeaning:
    """See the module docstring."""

    related: RelatedIndex
    endpoint: EmbeddingsEndpoint
    opening: Callable[[str], str | None]  # a document's text, for its opening
    log: Log
    report: IngestReport
    gone: Callable[[], str | None] | None = None  # why the endpoint's server died, if it did
    complete: bool = True  # every indexed document has its vector, as far as the run knows
    provisional: set[str] = field(default_factory=set)  # asked before the last vector came
    service: EmbeddingService | None = None
    stopped: bool = False
    _arrived: asyncio.Queue[list[str] | None] = field(default_factory=asyncio.Queue)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _began: float = 0.0

    @classmethod
    async def start(
        cls,
        plan: RunPlan,
        related: RelatedIndex,
        endpoint: EmbeddingsEndpoint,
        log: Log,
        report: IngestReport,
        gone: Callable[[], str | None] | None,
    ) -> LinksByMeaning:
        """What the plan did (:attr:`RunPlan.embedded`), and when it left the documents to embed
        beside the requests, the embedding process started on them."""
        done = plan.embedded
        meaning = cls(related, endpoint, plan.opening, log, report, gone)
        report.embedding_model = endpoint.model
        report.embedded, report.embedding_s = done.embedded, done.seconds
        report.embedding_wait_s = done.seconds  # the first request waited for it
        meaning.complete = not done.beside and done.failure is None and not plan.interrupted
        if not done.beside:
            return meaning
        meaning._began = time.monotonic()
        report.to_embed = await asyncio.to_thread(related.vectors.count_missing)
        meaning.service = await EmbeddingService.start(related.db_path, endpoint)
        again = f" (every document again: {done.reembed})" if done.reembed else ""
        log.info(
            f"links by meaning: {report.to_embed} documents to embed by {endpoint.model} "
            f"({endpoint.name}), beside the requests, in their order{again}"
            + (f", and the {len(plan.deferred)} extracted beside them" if plan.deferred else "")
        )
        order = [doc.path for doc, _ in plan.todo]
        meaning._tasks = [
            asyncio.create_task(meaning._feed(order)),
            asyncio.create_task(meaning._watch()),
        ]
        if not plan.deferred:
            meaning.arrivals_done()
        return meaning

    def before_candidates(self, path: str) -> None:
        """A document's link candidates are about to be asked for: with some vector still to
        come, its page will be due for its links by meaning."""
        if not self.complete:
            self.provisional.add(path)

    def arrived(self, paths: list[str]) -> None:
        """Documents extracted beside the requests were indexed (on the event loop)."""
        self._arrived.put_nowait(paths)

    def arrivals_done(self) -> None:
        """No more documents will be indexed in this run."""
        self._arrived.put_nowait(None)

    async def _feed(self, order: Sequence[str]) -> None:
        """The documents without a vector to the embedding process: ``order`` first, then every
        other one of the index, then those indexed beside the requests."""
        service = self.service
        assert service is not None
        sent: set[int] = set()

        async def send(rows: list[tuple[int, str]]) -> bool:
            docs = await asyncio.to_thread(self._openings, [r for r in rows if r[0] not in sent])
            sent.update(doc for doc, _ in rows)
            return await service.send(docs) if docs else True

        missing = self.related.vectors
        for start in range(0, len(order), SEND):
            chunk = order[start : start + SEND]
            if not await send(await asyncio.to_thread(missing.missing_among, chunk)):
                return
        after = -1
        while rows := await asyncio.to_thread(missing.missing, after, SEND):
            after = rows[-1][0]
            if not await send(rows):
                return
        while (paths := await self._arrived.get()) is not None:
            rows = await asyncio.to_thread(missing.missing_among, paths)
            self.report.to_embed += len([row for row in rows if row[0] not in sent])
            if not await send(rows):
                return
        service.end()

    def _openings(self, rows: list[tuple[int, str]]) -> list[tuple[int, str]]:
        """``(id, opening)`` of each document that can be read now (the others keep no
        vector; a later run tries again)."""
        docs = []
        for doc, path in rows:
            text = self.opening(path)
            if text and text.strip():
                docs.append((doc, text[:EMBED_CHARS]))
        return docs

    async def _watch(self) -> None:
        """The process's news into the report; its end: done, or the endpoint given up."""
        service = self.service
        assert service is not None
        while not service.finished:
            await service.progressed.wait()
            service.progressed.clear()
            self.report.embedded = service.embedded
            self.report.embedding_s = time.monotonic() - self._began
        if self.stopped:
            return
        if service.failure is not None or service.returncode != 0:
            why = (self.gone() if self.gone else None) or service.failure
            why = why or f"the embedding process ended with exit status {service.returncode}"
            self.log.warning(f"{why}; link candidates by n-grams alone for the rest of this run")
            return
        self.complete = True
        seconds = self.report.embedding_s
        self.log.info(
            f"links by meaning: {service.embedded} documents embedded by {self.endpoint.model} "
            f"beside the requests · {seconds:.1f} s · {service.embedded / max(seconds, 1e-9):.2f}"
            " docs/s"
        )

    async def finish(self, store: StateStore, wiki: Wiki) -> None:
        """At the end of the run: wait for the last vectors (a line every :data:`WAIT_LINE_S`,
        until they are in or :meth:`stop`), then give each due page its links by meaning."""
        self.arrivals_done()  # (the requests are over: none can still be on its way)
        if self.service is not None and not self.complete and not self.stopped:
            began = time.monotonic()
            while not self.service.finished and not self.stopped:
                self._wait_line()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.service.wait()), WAIT_LINE_S)
            await ended(self._tasks)  # the watcher has said how it ended
            self.report.embedding_wait_s += time.monotonic() - began
        if self.stopped or not self.complete:
            due = await asyncio.to_thread(_count_due, store) if self.provisional else 0
            if due:
                self.log.info(
                    f"links by meaning: {due} pages wait for their links by meaning, which the "
                    "next run that embeds every document gives them"
                )
            return
        added, pages = await asyncio.to_thread(self._link_due, store, wiki)
        self.report.links_by_meaning = added
        if pages:
            self.log.info(
                f"links by meaning: {added} links to the nearest documents by meaning added to "
                f"{pages} pages whose candidates were asked before every vector was in"
            )

    def _wait_line(self) -> None:
        left = self.report.to_embed - self.report.embedded
        if left <= 0:
            return  # (the last request's vectors are being stored)
        rate = self.report.embedded / max(self.report.embedding_s, 1e-9)
        eta = f" (~{left / rate:.0f} s at {rate:.2f} docs/s)" if rate > 0 else ""
        self.log.info(
            f"links by meaning: the requests are done; waiting for the last {left} of "
            f"{self.report.to_embed} documents to be embedded{eta}"
        )

    def _link_due(self, store: StateStore, wiki: Wiki) -> tuple[int, int]:
        """On a thread, its own journal connection: each due page's links by meaning, and the
        pages whose links changed written. ``(links, pages)`` added."""
        with Journal(store) as journal:
            due = journal.by_meaning.due()
            if not due:
                return 0, 0
            entries = journal.get_many(due)
            pages = [p for p in due if (e := entries.get(p)) and e.status == WRITTEN and e.page]
            near = self.related.vectors.nearest(pages, MEANING_LINKS + RELATED_CANDIDATES)
            linked = journal.links_of(pages)[0]
            found = {}
            for path in pages:
                theirs = {target for target, _ in linked.get(path, ())}
                others = [other for other, _ in near.get(path, ()) if other not in theirs]
                found[path] = others[:MEANING_LINKS]
            targets = {target for others in found.values() for target in others}
            with store.page_writes():
                journal.by_meaning.record(found, settled=[p for p in due if p not in found])
                relink(journal, wiki, [*found, *targets])
        return sum(map(len, found.values())), sum(1 for others in found.values() if others)

    def stop(self) -> None:
        """The run stops: the embedding process ends now, keeping the vectors it stored."""
        self.stopped = True
        if self.service is not None:
            self.service.stop()

    async def close(self) -> None:
        """The embedding process ended (what it has not embedded is the next run's), and the
        tasks that fed and watched it."""
        if self.service is not None:
            if not self.service.finished:
                self.stop()
            failure = await self.service.close()
            await cancel_and_wait(self._tasks)
            if failure is not None and self.service.failure is None and not self.stopped:
                self.log.warning(f"embedding process failed ({failure})")


def _count_due(store: StateStore) -> int:
    with Journal(store) as journal:
        return len(journal.by_meaning.due())
