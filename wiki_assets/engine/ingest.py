"""One ingest pass: plan what changed, summarize it on the whole fleet at once, write the wiki.

The dispatch (``wiki_assets.engine.dispatch``) is the project's core idea: one shared queue, each
model's workers pulling from it whenever they are free, so models never wait for each other. This
module is the run around it: what is current, the plan, the journal and the pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from wiki_assets.engine.budget import estimate_tokens
from wiki_assets.engine.client import PROMPT_OVERHEAD_TOKENS, ModelClient, Summary
from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.corpus import (
    DEFAULT_MAX_BYTES,
    DocumentError,
    SourceDocument,
    collection_version,
    read_text,
    scan,
    title_of,
)
from wiki_assets.engine.dispatch import Dispatcher, Job, Lane, Prepared, concurrency_for
from wiki_assets.engine.journal import SUMMARIZED, WRITTEN, Entry, Journal, JournalWriter
from wiki_assets.engine.leases import SlotLeases
from wiki_assets.engine.page import LANGUAGES, detect_language
from wiki_assets.engine.prompts import PROMPT_VERSION
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.report import IngestReport, ModelStats
from wiki_assets.engine.signals import stop_on_signals
from wiki_assets.engine.store import StateStore
from wiki_assets.engine.wiki.files import INDEX_PAGE, STATE_DIR, UnsafePath, Wiki, page_for
from wiki_assets.engine.wiki.links import neighbours, page_text, relink
from wiki_assets.engine.wiki.record import now_iso

# The related-document index is derived from the synced text alone (rebuildable at any time), so it
# stays a SQLite file in the wiki's state folder whatever store holds the per-document state.
RELATED_FILE = "related.sqlite"
UNWRITTEN_LIMIT = 2_000
"""Results held for their pages at most: a flush starts as soon as this many wait, and workers
pause while a flush is still writing the previous batch (a slow disk must not fill memory)."""


class Log(Protocol):
    """What the engine needs of a logger: ``logging.Logger`` and Dagster's ``context.log`` fit."""

    def info(self, msg: str) -> Any: ...
    def warning(self, msg: str) -> Any: ...
    def error(self, msg: str) -> Any: ...


# --------------------------------------------------------------------------------------------------
# What is current


def fingerprint(max_tokens: int, language: str = "auto") -> str:
    """What shapes a page besides its text and its model: prompt, length cap, page language."""
    key = f"{PROMPT_VERSION}\0{max_tokens}\0{language}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Currency:
    """What a page must have been written with to be current. A page by a model that has left the
    fleet stays current (changing the fleet never silently redoes the wiki) as long as the prompt
    and the dials that shape pages are the same; a model named in ``redo`` has its pages redone."""

    by_model: dict[str, str]  # fleet model id -> fingerprint of the pages it would write now
    departed: frozenset[str]  # fingerprints a page by a model no longer in the fleet may carry
    redo: frozenset[str] = frozenset()

    def accepts(self, model: str, page_fingerprint: str) -> bool:
        if model in self.redo:
            return False
        if model in self.by_model:
            return self.by_model[model] == page_fingerprint
        return page_fingerprint in self.departed


def fingerprints(endpoints: Sequence[Endpoint], dials: Dials) -> Currency:
    """What the pages of this fleet and these dials must carry to be current."""
    caps = {dials.max_tokens, *(ep.max_tokens for ep in endpoints if ep.max_tokens)}
    return Currency(
        by_model={
            ep.model: fingerprint(ep.max_tokens or dials.max_tokens, dials.language)
            for ep in endpoints
        },
        departed=frozenset(fingerprint(cap, dials.language) for cap in caps),
        redo=frozenset(dials.redo_models),
    )


def is_current(entry: Entry | None, doc: SourceDocument, current: Currency) -> bool:
    return (
        entry is not None
        and entry.status in (SUMMARIZED, WRITTEN)
        and entry.content_hash == doc.content_hash
        and entry.model is not None
        and current.accepts(entry.model, entry.fingerprint)
    )


SKIP, RECOVER = "skip", "recover"
# Why a document would be summarized, in the order they are checked.
REASONS = ("new", "changed", "earlier failure", "forced", "model", "prompt version", "dials")


def standing(entry: Entry | None, doc: SourceDocument, current: Currency, force: bool) -> str:
    """What a run does with ``doc``: ``skip`` (its page is current), ``recover`` (a model answered
    in a run that died before the page was written: write it, ask no model), or the reason it is
    summarized (one of :data:`REASONS`)."""
    if not force and is_current(entry, doc, current):
        assert entry is not None
        if entry.status == WRITTEN:
            return SKIP
        if entry.result is not None and entry.page is not None:
            return RECOVER
    if entry is None:
        return "new"
    if entry.status not in (SUMMARIZED, WRITTEN):
        return "earlier failure"
    if entry.content_hash != doc.content_hash:
        return "changed"
    if force:
        return "forced"
    if is_current(entry, doc, current):
        return "earlier failure"  # answered, but the answer was not kept
    if entry.model is None or entry.model in current.redo:
        return "model"
    written_with = (entry.result or {}).get("prompt_version")
    return "prompt version" if written_with != PROMPT_VERSION else "dials"


@dataclass(frozen=True, slots=True)
class CollectionState:
    name: str
    version: str
    documents: int
    pending: int  # documents to summarize plus pages to remove
    skipped: int = 0  # pages that are current
    recovered: int = 0  # pages to write from an answer already journaled
    removed: int = 0  # pages whose document is gone
    reasons: dict[str, int] = field(default_factory=dict)  # why documents would be summarized

    @property
    def to_summarize(self) -> int:
        return self.pending - self.removed


def survey(
    synced_root: Path,
    wiki_root: Path,
    endpoints: Sequence[Endpoint],
    dials: Dials | None = None,
    depth: int = 1,
    store: StateStore | None = None,
    collections: Sequence[str] | None = None,
) -> list[CollectionState]:
    """Every collection under the synced root (and every one the wiki still has pages for), or only
    ``collections``, with its data version and what an ingest with these endpoints and dials would
    do there. Reads, never writes."""
    dials = dials or Dials()
    current = fingerprints(endpoints, dials)
    by_collection: dict[str, list[SourceDocument]] = {}
    for doc in scan(synced_root, depth, collections):
        by_collection.setdefault(doc.collection, []).append(doc)
    store = store or StateStore(wiki_root / STATE_DIR)
    states = []
    journal = Journal(store) if store.has_state() else None
    try:
        known = journal.collections() if journal else set()
        if collections is not None:
            known &= set(collections)
        for name in sorted(by_collection.keys() | known):
            docs = by_collection.get(name, [])
            counts: dict[str, int] = {}
            for doc in docs:
                entry = journal.get(doc.path) if journal else None
                what = standing(entry, doc, current, dials.force)
                counts[what] = counts.get(what, 0) + 1
            present = {d.path for d in docs}
            gone = sum(1 for p in journal.paths_in([name]) if p not in present) if journal else 0
            skipped, recovered = counts.pop(SKIP, 0), counts.pop(RECOVER, 0)
            states.append(
                CollectionState(
                    name,
                    collection_version(docs),
                    len(docs),
                    pending=sum(counts.values()) + gone,
                    skipped=skipped,
                    recovered=recovered,
                    removed=gone,
                    reasons={reason: counts[reason] for reason in REASONS if reason in counts},
                )
            )
    finally:
        if journal:
            journal.close()
    return states


# --------------------------------------------------------------------------------------------------
# The run


def ingest(
    *,
    synced_root: Path,
    wiki_root: Path,
    collections: Sequence[str],
    endpoints: Sequence[Endpoint],
    dials: Dials,
    depth: int = 1,
    max_bytes: int = DEFAULT_MAX_BYTES,
    log: Log | None = None,
    store: StateStore | None = None,
) -> IngestReport:
    """Bring the wiki pages of ``collections`` up to date with the synced root. Per-document state
    goes to ``store`` (default: SQLite in the wiki's state folder).

    SIGTERM and SIGINT (when called on the main thread) stop the run cleanly: no new requests,
    requests in flight cancelled, every answer that came back journaled and its page written; the
    report says which signal (``stopped_by``) and how many documents are left for the next run.
    """
    if not endpoints:
        raise ValueError("no model endpoints to summarize with")
    wiki = Wiki(wiki_root)
    store = store or StateStore(wiki.state_dir)
    run = _Run(
        synced_root=synced_root.resolve(),
        wiki=wiki,
        store=store,
        collections=list(collections),
        endpoints=list(endpoints),
        dials=dials,
        depth=depth,
        max_bytes=max_bytes,
        log=log or logging.getLogger("wiki_assets"),
    )
    with stop_on_signals(run.request_stop), store.collection_locks(collections):
        return asyncio.run(run.execute())


RELATED_CANDIDATES = 8  # documents offered to the model as link targets
LOOKAHEAD = 64  # planned documents whose stored link candidates are looked up together


class _Run:
    """One ingest: plans the jobs, hands them to the :class:`Dispatcher`, journals the answers
    and writes their pages. It is the dispatcher's :class:`~wiki_assets.engine.dispatch.Work`."""

    def __init__(
        self,
        *,
        synced_root: Path,
        wiki: Wiki,
        store: StateStore,
        collections: list[str],
        endpoints: list[Endpoint],
        dials: Dials,
        depth: int,
        max_bytes: int,
        log: Log,
    ) -> None:
        self.synced_root = synced_root
        self.wiki = wiki
        self.store = store
        self.endpoints = endpoints
        self.dials = dials
        self.depth = depth
        self.max_bytes = max_bytes
        self.log = log
        self.current = fingerprints(endpoints, dials)
        self.report = IngestReport(collections=collections, dials=dials, models=[])
        self.unwritten: list[tuple[Job, Entry]] = []  # recorded in the journal, page not written
        self.page_failures: list[tuple[SourceDocument, str]] = []  # from the flush thread
        self.seen: set[str] = set()
        self.page_owners: dict[str, str] = {}  # page -> document, for the pages of this run
        self.started = 0.0
        self.total = 0  # documents this run expects to summarize (counted before it starts)
        self.dispatcher: Dispatcher | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stop_signal: str | None = None

    def request_stop(self, signal_name: str) -> None:
        """A signal arrived (called from the signal handler, on the main thread)."""
        first = self.stop_signal is None
        self.stop_signal = self.stop_signal or signal_name
        if first and self.loop is not None:
            self.loop.call_soon_threadsafe(self._stop_now)

    def _stop_now(self) -> None:
        dispatcher = self.dispatcher
        if dispatcher is not None and self.stop_signal is not None and not dispatcher.finished:
            # After the last request (the final flush), there is nothing left to stop.
            self.report.stopped_by = self.stop_signal
            dispatcher.stop(f"stopped by {self.stop_signal}")

    async def execute(self) -> IngestReport:
        self.started = time.monotonic()
        self.loop = asyncio.get_running_loop()
        lanes = []
        for order, endpoint in enumerate(self.endpoints):
            concurrency = concurrency_for(endpoint, self.dials)
            stats = ModelStats(endpoint.name, endpoint.model, concurrency.limit, concurrency.auto)
            client = ModelClient(
                endpoint, self.dials.max_tokens, on_overload=concurrency.on_overload
            )
            lanes.append(Lane(order, endpoint, client, concurrency, stats))
            self.report.models.append(stats)
        self.lanes = lanes
        with (
            Journal(self.store) as journal,
            RelatedIndex(self.wiki.state_dir / RELATED_FILE) as related,
        ):
            self.journal = journal
            self.related = related
            leases = (
                SlotLeases(self.store) if any(e.max_in_flight for e in self.endpoints) else None
            )
            self.wiki.sweep_temporaries()
            self._refresh_related()
            self._log_start()
            self.flush_due = asyncio.Event()  # the buffer of unwritten pages is full: flush now
            dispatcher = Dispatcher(
                lanes,
                self._plan(),
                self,
                self.report,
                claim_size=self.dials.claim_size,
                give_up_after_s=self.dials.give_up_after_s,
                expected=lambda: self.total,
                leases=leases,
                log=self.log,
            )
            self.dispatcher = dispatcher
            self._stop_now()  # a signal that came while planning
            self.writer = JournalWriter(self.store)
            # Pages are written off the event loop, one flush at a time in order, through the
            # flush's own journal connection: a flush of hundreds of pages (file creates and
            # renames) no longer stalls every request, and the models keep working meanwhile.
            self.pages_journal = Journal(self.store)
            self.flushes = ThreadPoolExecutor(1, thread_name_prefix="page-flush")
            flusher = asyncio.create_task(self._flush_periodically())
            try:
                await dispatcher.run()
            finally:
                flusher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await flusher
                if leases is not None:
                    leases.close()  # gives back every slot this run still holds
                self.writer.close()
                for lane in lanes:
                    await lane.client.close()
                    lane.stats.workers = lane.concurrency.limit
                    lane.stats.peak_workers = lane.concurrency.peak
                    lane.stats.breaker_trips = lane.breaker.trips
                if self.report.stopped is not None:
                    self.report.unfinished = dispatcher.queue.remaining()
                try:
                    # After the flush in progress, if any: the executor runs flushes in order.
                    self.flushes.submit(self._flush, self._take_unwritten()).result()
                finally:
                    self.flushes.shutdown()
                    self.pages_journal.close()
                self._report_page_failures()
            if self.report.stopped is None:
                # Only a complete pass knows which documents are gone.
                self._remove_vanished()
        self.report.duration_s = time.monotonic() - self.started
        self._log_done()
        return self.report

    # ------------------------------------------------------------------ the dispatcher's Work

    async def prepare(self, job: Job) -> Prepared:
        doc = job.doc
        try:
            text = read_text(self.synced_root, doc, self.max_bytes)
            self.wiki.check(job.page)
        except UnsafePath as error:
            raise DocumentError(str(error)) from error
        candidates = job.candidates
        if candidates is None:
            # The query runs in SQLite's C code, which releases the GIL: off the event loop.
            candidates = await asyncio.to_thread(
                self.related.candidates, doc.path, RELATED_CANDIDATES
            )
        return Prepared(
            title=title_of(text, doc.path),
            text=text,
            language=_language(self.dials.language, text),
            prompt_tokens=estimate_tokens(text) + PROMPT_OVERHEAD_TOKENS,
            candidates=candidates,
        )

    async def record(self, job: Job, lane: Lane, summary: Summary) -> None:
        doc, prepared = job.doc, job.prepared
        assert prepared is not None
        entry = Entry(
            path=doc.path,
            collection=doc.collection,
            content_hash=doc.content_hash,
            fingerprint=fingerprint(lane.client.max_tokens, self.dials.language),
            status=SUMMARIZED,
            page=job.page,
            model=lane.endpoint.model,
            result=_result(prepared.title, prepared.language, summary),
            reason=None,
        )
        await self.writer.record(entry)  # durable before its page is written
        self.unwritten.append((job, entry))
        if len(self.unwritten) >= UNWRITTEN_LIMIT:
            self.flush_due.set()
        self.report.count += 1

    def fail(self, job: Job, reason: str) -> None:
        self._fail(job.doc, reason)

    def held_back(self) -> bool:
        # Pages lag behind (a flush is still writing the last batch): hold new requests until
        # it takes these, so memory stays bounded however slow the disk is.
        return len(self.unwritten) >= UNWRITTEN_LIMIT

    def _fail(self, doc: SourceDocument, reason: str) -> None:
        self.journal.record_failure(
            path=doc.path,
            collection=doc.collection,
            content_hash=doc.content_hash,
            fingerprint="",
            reason=reason,
        )
        self.report.failed.append({"path": doc.path, "reason": reason})
        self.log.warning(f"failed: {doc.path}: {reason}")

    # ------------------------------------------------------------------ log lines

    def _log_done(self) -> None:
        report = self.report
        self.log.info(
            f"ingest done: {report.count} docs · {report.duration_s:.1f} s · "
            f"{report.docs_per_sec:.2f} docs/s · skipped {report.skipped} · "
            f"failed {len(report.failed)} · removed {report.removed}"
            + (f" · hedged {report.hedged}" if report.hedged else "")
        )
        for lane in self.lanes:
            if lane.concurrency.auto:
                self.log.info(
                    f"model {lane.stats.name}: automatic concurrency settled at "
                    f"{lane.concurrency.limit} (peak {lane.concurrency.peak})"
                )
        if report.stopped_by:
            self.log.warning(
                f"{report.stopped}: {report.count} done, {report.unfinished} left for the next run"
            )
        elif report.stopped:
            self.log.error(
                f"ingest stopped: {report.stopped} · {report.unfinished} documents left for "
                "the next run"
            )

    def _log_start(self) -> None:
        dials = self.dials
        models = ", ".join(
            f"{lane.stats.name} "
            + (
                f"auto ≤{lane.concurrency.slots}"
                if lane.concurrency.auto
                else f"×{lane.concurrency.slots}"
            )
            for lane in self.lanes
        )
        self.log.info(
            f"ingest start: {len(self.endpoints)} models ({models}) · "
            f"{dials.workers_per_model} workers/model · claim {dials.claim_size} · "
            f"flush {dials.flush_seconds:g}s · max_tokens {dials.max_tokens} · "
            f"{self.total} to summarize · collections {', '.join(self.report.collections)}"
        )
        self.log.info(f"state: {self.store.describe()}")
        for lane in self.lanes:
            ep = lane.endpoint
            workers = (
                f"auto concurrency (start {lane.concurrency.limit}, ceiling "
                f"{lane.concurrency.slots})"
                if lane.concurrency.auto
                else f"{lane.concurrency.slots} workers"
            )
            self.log.info(
                f"model {ep.name}: {ep.model} · {workers} · "
                + (f"≤{ep.max_in_flight} in flight fleet-wide · " if ep.max_in_flight else "")
                + f"max_tokens {ep.max_tokens or dials.max_tokens} · context {ep.context_tokens} · "
                f"timeout {ep.timeout_s:g}s"
            )

    def _progress_line(self) -> str:
        elapsed = time.monotonic() - self.started
        report = self.report
        done = report.count
        rate = done / elapsed if elapsed > 0 else 0.0
        left = max(0, self.total - done - len(report.failed))
        eta = f"{left / rate:.0f} s left" if rate > 0 else "time left unknown"
        models = " ".join(
            f"{lane.stats.name} {lane.stats.docs / elapsed:.2f}/s"
            + (f"@{lane.concurrency.limit}" if lane.concurrency.auto else "")
            for lane in self.lanes
        )
        return (
            f"ingest progress: {done}/{self.total} docs · {elapsed:.1f} s · {rate:.2f} docs/s · "
            f"{eta} · {models} · skipped {report.skipped} · failed {len(report.failed)}"
        )

    def _refresh_related(self) -> None:
        """Candidates for links come from the whole corpus, not only this run's collections:
        (re)index every document whose content changed, and forget the ones that are gone."""
        present: set[str] = set()
        collections = set(self.report.collections)

        def changed() -> Iterator[tuple[str, str, str, str]]:
            for doc in scan(self.synced_root, self.depth):
                present.add(doc.path)
                # The same pass counts this run's work, for done/total and the time left.
                if doc.collection in collections and (
                    self.dials.force
                    or not is_current(self.journal.get(doc.path), doc, self.current)
                ):
                    self.total += 1
                if self.related.is_current(doc.path, doc.content_hash):
                    continue
                try:
                    text = read_text(self.synced_root, doc, self.max_bytes)
                except DocumentError:
                    continue
                yield doc.path, title_of(text, doc.path), text, doc.content_hash

        indexed = self.related.update_many(changed())
        pruned = self.related.prune(lambda path: path in present)
        if indexed or pruned:
            self.log.info(f"related index: {indexed} documents indexed · {pruned} removed")

    # Planning streams the scan: documents are hashed as workers claim them, never all at once.

    # Planning streams the scan: documents are hashed as workers claim them, never all at once.
    def _plan(self) -> Iterator[Job]:
        """The jobs of this run, with the link candidates the index still has stored for them
        (looked up :data:`LOOKAHEAD` documents at a time)."""
        ahead: list[Job] = []
        for job in self._jobs():
            ahead.append(job)
            if len(ahead) >= LOOKAHEAD:
                yield from self._with_stored_candidates(ahead)
                ahead = []
        yield from self._with_stored_candidates(ahead)

    def _with_stored_candidates(self, jobs: list[Job]) -> list[Job]:
        stored = self.related.stored_answers([job.doc.path for job in jobs], RELATED_CANDIDATES)
        for job in jobs:
            job.candidates = stored.get(job.doc.path)
        return jobs

    def _jobs(self) -> Iterator[Job]:
        for doc in scan(self.synced_root, self.depth, self.report.collections):
            self.seen.add(doc.path)
            entry = self.journal.get(doc.path)
            what = standing(entry, doc, self.current, self.dials.force)
            if what == SKIP:
                self.report.skipped += 1
                continue
            if what == RECOVER:
                assert entry is not None and entry.page is not None
                # A run that died after the model answered: write the page, ask no model.
                self.unwritten.append((Job(doc, entry.page), entry))
                if len(self.unwritten) >= UNWRITTEN_LIMIT:
                    self.flush_due.set()
                self.report.recovered += 1
                continue
            page = page_for(doc.path)
            if page == INDEX_PAGE:
                self._fail(doc, f"page name {page!r} is reserved for the wiki's index")
                continue
            owner = self._page_owner(page, doc)
            if owner != doc.path:
                self._fail(doc, f"page name {page!r} is already the page of {owner!r}")
                continue
            yield Job(doc, page)

    def _page_owner(self, page: str, doc: SourceDocument) -> str:
        """Who writes ``page``: the first document of this run to claim it, or a document of an
        earlier run that still exists (names like ``a.txt`` and ``a.txt.md`` collide)."""
        owner = self.page_owners.setdefault(page, doc.path)
        if owner != doc.path:
            return owner
        earlier = self.journal.page_owner(page)
        if earlier and earlier != doc.path and (self.synced_root / earlier).is_file():
            del self.page_owners[page]
            return earlier
        return doc.path

    async def _flush_periodically(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.flush_due.wait(), self.dials.flush_seconds)
            self.flush_due.clear()
            batch = self._take_unwritten()
            assert self.dispatcher is not None
            self.dispatcher.wake()  # workers held back by a full buffer go on
            try:
                # Shielded: the run's end cancels this task, and a cancelled executor future that
                # has not started yet would never write its batch (taken from the buffer above).
                # The flush goes on; the final flush runs after it, in order.
                await asyncio.shield(loop.run_in_executor(self.flushes, self._flush, batch))
            except Exception as error:
                self.unwritten[:0] = batch  # for the last flush to try again
                self.dispatcher.stop(f"pages could not be written: {error}", cancel=False)
                raise
            self._report_page_failures()
            self.log.info(self._progress_line())

    def _take_unwritten(self) -> list[tuple[Job, Entry]]:
        batch, self.unwritten = self.unwritten, []
        return batch

    def _flush(self, batch: list[tuple[Job, Entry]]) -> None:
        """Runs on the flush thread, with :attr:`pages_journal`."""
        self.related.save_answers()
        if not batch:
            return
        with self.store.page_writes():
            self._write_pages(batch)

    def _write_pages(self, batch: list[tuple[Job, Entry]]) -> None:
        journal = self.pages_journal
        # The entries are the ones this run recorded (or found recorded): nothing to read back.
        landing = {entry.path: entry for _, entry in batch}
        pages = [(job, entry) for job, entry in batch if entry.page and entry.result is not None]
        links = journal.links_of([entry.path for _, entry in pages])
        failures = self.wiki.write_many(
            (page, page_text(journal, entry, landing, links))
            for _, entry in pages
            if (page := entry.page)
        )
        written = []
        for job, entry in pages:
            error = failures.get(entry.page or "")
            if error is not None:
                reason = f"page not written: {getattr(error, 'strerror', None) or error}"
                journal.record_failure(
                    path=job.doc.path,
                    collection=job.doc.collection,
                    content_hash=job.doc.content_hash,
                    fingerprint="",
                    reason=reason,
                )
                self.page_failures.append((job.doc, reason))  # reported by the event loop
                continue
            written.append(job.doc.path)
        journal.mark_written(written)
        # Links render only to pages that exist: the pages the new ones link to (new backlinks)
        # and the pages linking to them (a link that can now be shown) are rendered again where
        # that changed something. A page that failed to land is left out of the others' links.
        failed = landing.keys() - set(written)
        stale = neighbours(journal, written) - (landing.keys() - failed)
        relink(journal, self.wiki, [*stale, *neighbours(journal, failed)])

    def _report_page_failures(self) -> None:
        while self.page_failures:
            doc, reason = self.page_failures.pop(0)
            self.report.count -= 1
            self.report.failed.append({"path": doc.path, "reason": reason})
            self.log.warning(f"failed: {doc.path}: {reason}")

    def _remove_vanished(self) -> None:
        with self.store.page_writes():
            self._remove_pages()

    def _remove_pages(self) -> None:
        gone = [p for p in self.journal.paths_in(self.report.collections) if p not in self.seen]
        linked = neighbours(self.journal, gone) - set(gone)
        for path in gone:
            entry = self.journal.get(path)
            # Never remove a page that a document of this run now writes.
            if entry is not None and entry.page and entry.page not in self.page_owners:
                self.wiki.remove(entry.page)
        self.journal.forget(gone)
        relink(self.journal, self.wiki, linked)  # no link may point at a removed page
        self.report.removed = len(gone)


def _language(setting: str, text: str) -> str:
    code = detect_language(text) if setting == "auto" else setting
    return LANGUAGES.get(code, code)


def _result(title: str, language: str, summary: Summary) -> dict[str, Any]:
    draft = summary.draft
    return {
        # The document's own heading is a better title than a model's rewording of it.
        "title": title or draft.title,
        "description": draft.description,
        "summary": draft.summary,
        "key_points": draft.key_points,
        "topics": draft.topics,
        "related": [link.model_dump() for link in draft.related],
        "language": language,
        "parts": summary.parts,
        "model": summary.model,
        "prompt_version": PROMPT_VERSION,
        "generated": now_iso(),
        "prompt_tokens": summary.prompt_tokens,
        "completion_tokens": summary.completion_tokens,
        "finish_reason": summary.finish_reason,
    }
