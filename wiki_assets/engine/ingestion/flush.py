"""The answers waiting for their pages, and the flush that writes them.

An answer is journaled the moment it comes back (durable), then waits here for its page. Pages are
rendered off the event loop, one flush at a time, through the flush's own journal connection, and
written by the page writer process (:mod:`~wiki_assets.engine.wiki.writer`): the models keep
working meanwhile. A flush runs every ``flush_seconds``, or as soon as :data:`UNWRITTEN_LIMIT`
answers wait (new requests wait while one is still writing); it runs beside the dispatcher
(:mod:`.dispatch_and_flush`). A judge's verdicts write a page again (:meth:`Pages.judged`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from wiki_assets.engine.config import FlaggedPages
from wiki_assets.engine.dispatch import Dispatcher, Job, Lane, PageToJudge, Recorded
from wiki_assets.engine.documents import archives
from wiki_assets.engine.documents.corpus import SourceDocument
from wiki_assets.engine.errors import disk_full
from wiki_assets.engine.ingestion.fingerprints import SHAPED_BY, Shaping
from wiki_assets.engine.ingestion.page_entry import (
    Rank,
    extractive,
    from_source,
    picked,
    rank,
    rank_judged,
    result,
    with_opening,
)
from wiki_assets.engine.ingestion.progress import Log
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.prompting.results import Summary
from wiki_assets.engine.quality import assess
from wiki_assets.engine.quality.sentences import SentenceCheck
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.state.journal import SUMMARIZED, Entry, Journal
from wiki_assets.engine.state.journal_writer import JournalWriter
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.engine.verification.standing import Holds
from wiki_assets.engine.verification.verdicts import apply_judgement
from wiki_assets.engine.wiki.files import Wiki
from wiki_assets.engine.wiki.links import neighbours, page_texts, relink
from wiki_assets.engine.wiki.writer import PageWriter

# An answer waiting for its page: its job, its entry, its result's JSON text as journaled.
Unwritten = tuple[Job, Entry, str | None]

UNWRITTEN_LIMIT = 2_000
"""Results held for their pages at most: a flush starts as soon as this many wait, and workers
pause while a flush is still writing the previous batch (a slow disk must not fill memory)."""


class Pages:
    """This run's pages: the answers waiting for them, who writes which page, the flush thread that
    writes them, and the removal of pages whose document is gone."""

    def __init__(
        self,
        *,
        synced_root: Path,
        wiki: Wiki,
        store: StateStore,
        journal: Journal,
        related: RelatedIndex,
        report: IngestReport,
        log: Log,
        language: str,
        flagged_pages: FlaggedPages,
        judging: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.synced_root = synced_root
        self.wiki = wiki
        self.store = store
        self.journal = journal  # the event loop's connection
        self.related = related
        self.report = report
        self.log = log
        self.language = language  # the page-language dial, part of each page's fingerprint
        self.flagged_pages = flagged_pages  # what a flagged answer becomes (Dials.flagged_pages)
        self.clock = clock  # when a page is written or removed, as the pages' history records it
        self.judging = judging  # pages with unchecked sentences are offered to a judge
        self.offered: dict[str, int] = {}  # document -> its page's last offer (the latest holds)
        # Documents whose flagged first answer may get a second opinion: how that answer ranks,
        # and why it was flagged.
        self.first_opinions: dict[str, tuple[Rank, tuple[str, ...]]] = {}
        self.unwritten: list[Unwritten] = []  # recorded in the journal, page not written
        self.failures: list[tuple[SourceDocument, str]] = []  # from the flush thread
        self.owners: dict[str, str] = {}  # page -> document, for the pages of this run
        # Documents whose candidates were asked before every vector was in: their pages are
        # due for their links by meaning (ingestion/meaning.py), marked as they are written.
        self.provisional: set[str] = set()
        self.due = asyncio.Event()  # the buffer of unwritten pages is full: flush now

    def start(self) -> None:
        """The journal writer for answers, then the flush thread with its own journal connection
        (:attr:`pages_journal`) and the page writer process
        (:mod:`~wiki_assets.engine.wiki.writer`)."""
        self.writer = JournalWriter(self.store)
        self.flushes = ThreadPoolExecutor(1, thread_name_prefix="page-flush")
        self.pages_journal = Journal(self.store)
        self.wiki.scratch.mkdir(parents=True, exist_ok=True)
        # The flush thread renders pages and this process writes them, on another core.
        self.page_writer = PageWriter.start(self.wiki.scratch)

    async def record(self, job: Job, lane: Lane, summary: Summary) -> Recorded:
        """Journal a model's answer (durable before its page is written); its page next. A first
        answer that is flagged, when the dial asks for a second opinion, is recorded with its
        reasons (the dispatcher may send the document to another model). A second opinion is
        journaled only when it ranks above the first answer (:func:`rank`), so a run that stops
        before it answers keeps the first."""
        doc, prepared = job.doc, job.prepared
        assert prepared is not None
        draft = summary.draft
        title = prepared.title or draft.title  # the document's own heading beats a rewording
        assessment = assess(
            draft, prepared.text, title=title, language=prepared.language,
            finish_reason=summary.finish_reason, prose=summary.prose,
        )  # fmt: skip
        self.report.models[lane.order].judged(
            len(assessment.points), assessment.verified, assessment.verdict.reasons
        )
        reasons = tuple(assessment.verdict.reasons)
        kept = Recorded()
        if job.second_opinion:
            first = self.first_opinions.pop(doc.path, None)
            if first is not None and rank(assessment) <= first[0]:
                return kept  # the first answer stands: journaled, its page written or due
            fixed = tuple(reason for reason in first[1] if reason not in reasons) if first else ()
            kept = Recorded(kept=True, fixed=fixed)
        flagged = not assessment.verdict.ok
        if not summary.prose:
            fields = picked(title, prepared.text, prepared.language, summary, assessment)
        elif flagged and self.flagged_pages == "extract":
            fields = extractive(title, prepared.text, prepared.language, summary, assessment)
        else:
            fields = result(title, prepared.language, summary, assessment)
            with_opening(fields, assessment.prose, prepared.text, title)
        shaping = Shaping(lane.client.max_tokens, self.language, lane.endpoint.page_form)
        fields[SHAPED_BY] = shaping.fields()
        original = self.wiki.original(self.synced_root, archives.holder(doc.path), job.page)
        from_source(fields, prepared.source, original)
        entry = Entry(
            path=doc.path,
            collection=doc.collection,
            content_hash=doc.content_hash,
            fingerprint=shaping.fingerprint,
            status=SUMMARIZED,
            page=job.page,
            model=lane.endpoint.model,
            result=fields,
            reason=None,
        )
        self.keep(job, entry, await self.writer.record(entry))
        self.report.models[lane.order].sentences(assessment.prose)
        judging = None
        if self.judging and prepared.notes is None:
            self.offered[doc.path] = serial = len(self.offered) + 1
            judging = PageToJudge.offer(entry, prepared.text, lane.order, job, serial)
        if job.second_opinion:
            return replace(kept, judging=judging)
        self.report.count += 1
        if flagged and self.flagged_pages == "retry":
            # A second opinion costs one request (a long document's is its page's request, from
            # the same notes); the dispatcher decides whether it is worth asking.
            self.first_opinions[doc.path] = (rank(assessment), reasons)
            return Recorded(flags=reasons, judging=judging)
        return Recorded(judging=judging)

    async def judged(
        self, page: PageToJudge, judge: Lane, judgement: Judgement, holds: Holds
    ) -> tuple[str, ...]:
        """A judge's answer: the page with its verdicts is journaled and written again, unless a
        later answer for the document came since. A page it flags anew is recorded for a second
        opinion, as a first answer is (``retry``)."""
        if self.offered.get(page.path) != page.offered:
            return ()
        applied = apply_judgement(page, judge.endpoint.name, judgement, holds)
        if applied is None:
            return ()
        self.report.models[page.writer].rejudged(applied)
        journaled = await self.writer.record(applied.entry)
        self.unwritten = [item for item in self.unwritten if item[1].path != page.path]
        self.keep(page.job, applied.entry, journaled)
        if applied.flags_before or not applied.flags_after or self.flagged_pages != "retry":
            return ()
        self.first_opinions[page.path] = (rank_judged(applied), applied.flags_after)
        return applied.flags_after

    def keep(self, job: Job, entry: Entry, journaled: str | None = None) -> None:
        """An answer in the journal (recorded by this run: ``journaled``; or by one that died):
        its page next. A second opinion kept replaces its document's first answer if waiting."""
        if job.second_opinion:
            self.unwritten = [item for item in self.unwritten if item[0] is not job]
        self.unwritten.append((job, entry, journaled))
        if len(self.unwritten) >= UNWRITTEN_LIMIT:
            self.due.set()

    def fail(self, doc: SourceDocument, reason: str) -> None:
        """``doc`` failed (its page stays as it was): journaled, listed and logged, with why."""
        self.journal.record_failure(
            path=doc.path, collection=doc.collection, content_hash=doc.content_hash,
            fingerprint="", reason=reason,
        )  # fmt: skip
        self.report.failed.append({"path": doc.path, "reason": reason})
        self.log.warning(f"failed: {doc.path}: {reason}")

    def held_back(self) -> bool:
        # Pages lag behind (a flush is still writing the last batch): hold new requests until
        # it takes these, so memory stays bounded however slow the disk is.
        return len(self.unwritten) >= UNWRITTEN_LIMIT

    def owner(self, page: str, doc: SourceDocument) -> str:
        """Who writes ``page``: the first document of this run to claim it, or a document of an
        earlier run that still exists (names like ``a.txt`` and ``a.txt.md`` collide)."""
        owner = self.owners.setdefault(page, doc.path)
        if owner != doc.path:
            return owner
        earlier = self.journal.page_owner(page)
        other = earlier if earlier != doc.path else None  # a re-run finds each page its own:
        if other and (self.synced_root / archives.holder(other)).is_file():  # no stat for those
            del self.owners[page]
            return other
        return doc.path

    async def flush_periodically(
        self, dispatcher: Dispatcher, flush_seconds: float, flushed: Callable[[], None]
    ) -> None:
        """Flush every ``flush_seconds`` (or when the buffer is full) until cancelled, calling
        ``flushed`` after each flush."""
        loop = asyncio.get_running_loop()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.due.wait(), flush_seconds)
            self.due.clear()
            batch = self._take_unwritten()
            dispatcher.wake()  # workers held back by a full buffer go on
            try:
                # Shielded: the run's end cancels this task, and a cancelled executor future that
                # has not started yet would never write its batch (taken from the buffer above).
                # The flush goes on; the final flush runs after it, in order.
                await asyncio.shield(loop.run_in_executor(self.flushes, self._flush, batch))
            except Exception as error:
                self.unwritten[:0] = batch  # for the last flush to try again
                dispatcher.stop(f"pages could not be written: {error}", cancel=False)
                raise
            self.report_failures()
            flushed()

    def _take_unwritten(self) -> list[Unwritten]:
        batch, self.unwritten = self.unwritten, []
        return batch

    def _flush(self, batch: list[Unwritten]) -> None:
        """Runs on the flush thread, with :attr:`pages_journal`."""
        self.related.save_answers()
        if not batch:
            return
        with self.store.page_writes():
            self._write_pages(batch)

    def _write_pages(self, batch: list[Unwritten]) -> None:
        journal = self.pages_journal
        # The entries are the ones this run recorded (or found recorded): nothing to read back.
        landing = {entry.path: entry for _, entry, _ in batch}
        journaled = {entry.path: text for _, entry, text in batch}  # (the last, as landing)
        pages = [(job, entry) for job, entry, _ in batch if entry.page and entry.result is not None]
        links = journal.links_of([entry.path for _, entry in pages])
        prose: dict[str, tuple[SentenceCheck, ...]] = {}  # as each page shows it: for its history
        texts = page_texts(journal, [entry for _, entry in pages], landing, links, prose)
        failures = self.wiki.write_many(texts, writer=self.page_writer)
        written = []
        for job, entry in pages:
            error = failures.get(entry.page or "")
            if error is not None:
                reason = f"page not written: {getattr(error, 'strerror', None) or error}"
                if disk_full(error) is None:  # a full disk keeps the answer for the next run
                    journal.record_failure(
                        path=job.doc.path,
                        collection=job.doc.collection,
                        content_hash=job.doc.content_hash,
                        fingerprint="",
                        reason=reason,
                    )
                self.failures.append((job.doc, reason))  # reported by the event loop
                continue
            written.append(job.doc.path)
        journal.by_meaning.mark_due(path for path in written if path in self.provisional)
        # A second opinion journaled while its first page was being written keeps its document
        # unwritten: its own page is in the next batch.
        results = {path: landing[path].result for path in written}
        journal.mark_written(
            written, self.clock(), results=results, journaled=journaled, prose=prose
        )
        # Links render only to pages that exist: the pages the new ones link to (new backlinks)
        # and the pages linking to them (a link that can now be shown) are rendered again where
        # that changed something. A page that failed to land is left out of the others' links.
        failed = landing.keys() - set(written)
        stale = neighbours(journal, written, links) - (landing.keys() - failed)
        relink(journal, self.wiki, [*stale, *neighbours(journal, failed)])

    def report_failures(self) -> None:
        """Pages the flush thread could not write: failed documents, on the event loop."""
        while self.failures:
            doc, reason = self.failures.pop(0)
            self.report.count -= 1
            self.report.failed.append({"path": doc.path, "reason": reason})
            self.log.warning(f"failed: {doc.path}: {reason}")

    def final_flush(self) -> None:
        """Write every page still waiting, then stop the flush thread."""
        try:
            # After the flush in progress, if any: the executor runs flushes in order.
            self.flushes.submit(self._flush, self._take_unwritten()).result()
        finally:
            self.flushes.shutdown()
            self.pages_journal.close()
            if self.page_writer is not None:
                problem = self.page_writer.close() or self.page_writer.broken
                if problem:
                    self.log.warning(
                        f"page writer: {problem}; the run wrote the pages it could not"
                    )
        self.report_failures()

    def remove_vanished(self, seen: set[str]) -> None:
        """Remove the pages of the run's documents that are not in ``seen`` (gone from the synced
        tree), and every link to them. Only a complete pass knows which documents are gone."""
        with self.store.page_writes():
            gone = [p for p in self.journal.paths_in(self.report.collections) if p not in seen]
            linked = neighbours(self.journal, gone) - set(gone)
            for path in gone:
                entry = self.journal.get(path)
                # Never remove a page that a document of this run now writes.
                if entry is not None and entry.page and entry.page not in self.owners:
                    self.wiki.remove(entry.page)
            self.journal.forget(gone, at=self.clock())
            # No link may point at a removed page.
            self.report.relinked = relink(self.journal, self.wiki, linked)
            self.report.removed = len(gone)
