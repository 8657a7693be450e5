"""One ingest: plan what changed, summarize it on the whole fleet at once, write the wiki.

The dispatch (``wiki_assets.engine.dispatch``) is the project's core idea: one shared queue, each
model's workers pulling from it whenever they are free, so models never wait for each other. This
module is the run's lifecycle around it: the plan (``plan.py``), the dispatcher, each document's
request (``prepare.py``), the pages and their flush (``flush.py``) and the log lines
(``progress.py``), and a clean stop on a signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch import Dispatcher, Job, Lane, PageToJudge, Prepared, Recorded
from wiki_assets.engine.documents.corpus import Corpus
from wiki_assets.engine.documents.reader import Reader
from wiki_assets.engine.documents.texts import TEXTS_DIR, TextStore
from wiki_assets.engine.ingestion.arrivals import Arrivals
from wiki_assets.engine.ingestion.candidates import helper_for_plan, plan_beside_helper
from wiki_assets.engine.ingestion.dispatch_and_flush import summarize
from wiki_assets.engine.ingestion.files_without_text import record_no_text
from wiki_assets.engine.ingestion.fingerprints import fingerprints
from wiki_assets.engine.ingestion.fleet import Fleet, fleet_lanes, model_stats
from wiki_assets.engine.ingestion.flush import Pages
from wiki_assets.engine.ingestion.gc_tuning import fewer_collections
from wiki_assets.engine.ingestion.meaning import LinksByMeaning
from wiki_assets.engine.ingestion.plan import RELATED_FILE, Recovered, RunPlan
from wiki_assets.engine.ingestion.prepare import Preparer
from wiki_assets.engine.ingestion.progress import (
    Log,
    log_done,
    log_embedding,
    log_related_index,
    log_start,
    progress_line,
)
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.ingestion.signals import stop_on_signals
from wiki_assets.engine.llm.embeddings_client import EmbeddingsClient
from wiki_assets.engine.prompting.results import Summary
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.leases import WorkerLeases
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.engine.verification.standing import Holds
from wiki_assets.engine.wiki.files import Wiki


def ingest(
    corpus: Corpus,
    wiki_root: Path,
    fleet: Fleet,
    dials: Dials,
    *,
    log: Log | None = None,
    store: StateStore | None = None,
    clock: Callable[[], float] = time.time,
) -> IngestReport:
    """Bring the wiki pages of the ``corpus``'s collections up to date with its synced root, on
    the ``fleet``'s models. Per-document state goes to ``store`` (default: SQLite in the wiki's
    state folder); ``clock`` (epoch seconds) is when the pages' history says a page was written or
    removed (a test sets the day). With the fleet's ``embeddings`` endpoint, link candidates are
    found by meaning as well as by n-grams (:mod:`~wiki_assets.engine.related.vectors`); if it
    fails, by n-grams alone.

    SIGTERM and SIGINT (when called on the main thread) stop the run cleanly: no new requests,
    requests in flight cancelled, every answer that came back journaled and its page written; the
    report says which signal (``stopped_by``) and how many documents are left for the next run.
    """
    if not fleet.endpoints:
        raise ValueError("no model endpoints to summarize with")
    dials.check_fleet(fleet.endpoints)
    corpus = replace(corpus, synced_root=corpus.synced_root.resolve())
    wiki = Wiki(wiki_root)
    store = store or StateStore(wiki.state_dir)
    texts = TextStore(wiki.state_dir / TEXTS_DIR)
    reader = Reader(
        corpus.synced_root,
        texts,
        max_bytes=corpus.max_bytes,
        max_file_bytes=corpus.max_file_bytes,
    )
    run = _Run(
        corpus=corpus,
        wiki=wiki,
        store=store,
        fleet=fleet,
        dials=dials,
        reader=reader,
        log=log or logging.getLogger("wiki_assets"),
        report=IngestReport(collections=list(corpus.collections), dials=dials, models=[]),
        clock=clock,
    )
    with (
        stop_on_signals(run.request_stop),
        store.collection_locks(corpus.collections),
        fewer_collections(),
        reader,  # its extracting processes end with the run
    ):
        return asyncio.run(run.execute())


@dataclass(eq=False)
class _Run:
    """One ingest: wires the plan, the :class:`Dispatcher` and the pages. It is the dispatcher's
    :class:`~wiki_assets.engine.dispatch.Work`: it prepares each request, hands each answer to
    the pages and journals each failure."""

    corpus: Corpus
    wiki: Wiki
    store: StateStore
    fleet: Fleet
    dials: Dials
    reader: Reader
    log: Log
    report: IngestReport
    clock: Callable[[], float] = time.time
    meaning: LinksByMeaning | None = None  # with an embeddings endpoint
    dispatcher: Dispatcher | None = None
    loop: asyncio.AbstractEventLoop | None = None
    stop_signal: str | None = None

    def request_stop(self, signal_name: str) -> None:
        """A signal arrived (called from the signal handler, on the main thread)."""
        first = self.stop_signal is None
        self.stop_signal = self.stop_signal or signal_name
        if first and self.loop is not None:
            self.loop.call_soon_threadsafe(self._stop_now)

    def _stop_now(self) -> None:
        dispatcher, meaning = self.dispatcher, self.meaning
        if dispatcher is None or self.stop_signal is None:
            return
        if meaning is not None:
            meaning.stop()  # its process ends now; the vectors it stored stay
        if not dispatcher.finished:
            self.report.stopped_by = self.stop_signal
            dispatcher.stop(f"stopped by {self.stop_signal}")
        elif meaning is not None and not meaning.complete:  # waiting for the last vectors
            self.report.stopped_by = self.stop_signal
            self.report.tally.stopped = f"stopped by {self.stop_signal}"

    async def execute(self) -> IngestReport:
        started = time.monotonic()
        self.loop = asyncio.get_running_loop()
        lanes = fleet_lanes(self.fleet, self.dials)
        self.report.models.extend(model_stats(lanes))
        async with contextlib.AsyncExitStack() as cleanup:
            self.journal = cleanup.enter_context(Journal(self.store))
            self.related = cleanup.enter_context(RelatedIndex(self.wiki.state_dir / RELATED_FILE))
            leases = (
                WorkerLeases(self.store)
                if any(e.max_in_flight for e in self.fleet.endpoints)
                else None
            )
            self.wiki.sweep_temporaries()
            plan = await self._planned(cleanup)
            log_start(self.log, self.report, lanes, self.dials, plan.total, self.store.describe())
            pages = self.pages = self._pages()
            pages.provisional = self.meaning.provisional if self.meaning else set()
            record_no_text(pages, plan.no_text)
            dispatcher = self.dispatcher = self._dispatcher(lanes, plan, pages, leases)
            self._stop_now()  # a signal that came while planning
            pages.start()

            def flushed() -> None:
                elapsed = time.monotonic() - started
                self.log.info(progress_line(self.report, lanes, plan.total, elapsed))

            flush_s = self.dials.flush_seconds
            await summarize(dispatcher, pages, lanes, leases, self.report, flush_s, flushed)
            if self.report.tally.stopped is None:
                pages.remove_vanished(plan.seen)
            if self.meaning is not None:  # waits for the last vectors, if any are out
                await self.meaning.finish(self.store, self.wiki)
        self.report.duration_s = time.monotonic() - started
        log_done(self.log, self.report, lanes)
        return self.report

    async def _planned(self, cleanup: contextlib.AsyncExitStack) -> RunPlan:
        """The run's plan; its link candidates helper, if it wants one, and its links by meaning,
        if it has an embeddings endpoint (both closed with the run, by ``cleanup``); and what
        prepares each document's request."""
        related = self.related
        embeddings = self.fleet.embeddings
        gone = self.fleet.servers.get(embeddings.name) if embeddings else None
        embedder = EmbeddingsClient(embeddings, gone) if embeddings else None
        if embedder is not None:  # what the plan embeds before the first request
            cleanup.enter_context(embedder)
        plan, helper = await plan_beside_helper(
            functools.partial(self._make_plan, embedder=embedder), related.db_path, self.log
        )
        helper = await helper_for_plan(plan, helper, related.db_path, cleanup, self.log)
        self.report.skipped = plan.skipped
        log_related_index(self.log, plan.indexed, plan.pruned, len(plan.answers_beside))
        if embeddings is not None:
            log_embedding(self.log, plan.embedded, embeddings.model)
            meaning = await LinksByMeaning.start(
                plan, related, embeddings, self.log, self.report, gone
            )
            self.meaning = meaning
            cleanup.push_async_callback(meaning.close)
        self.preparer = Preparer.for_fleet(
            self.fleet.endpoints,
            self.dials,
            wiki=self.wiki,
            related=related,
            reader=self.reader,
            candidates_helper=helper,
            before_candidates=self.meaning.before_candidates if self.meaning else None,
        )
        return plan

    def _pages(self) -> Pages:
        return Pages(
            synced_root=self.corpus.synced_root,
            wiki=self.wiki,
            store=self.store,
            journal=self.journal,
            related=self.related,
            report=self.report,
            log=self.log,
            language=self.dials.language,
            flagged_pages=self.dials.flagged_pages,
            judging=len(self.fleet.endpoints) > 1 and self.dials.judge_share > 0,
            clock=self.clock,
        )

    def _dispatcher(
        self, lanes: list[Lane], plan: RunPlan, pages: Pages, leases: WorkerLeases | None
    ) -> Dispatcher:
        arrivals = Arrivals(plan, self.reader, self.related, pages, self.log, self.meaning)
        dispatcher = Dispatcher(
            lanes,
            self._route(plan.jobs(pages.owner, pages.fail), pages),
            self,
            self.dials,
            expected=lambda: plan.total,
            leases=leases,
            tally=self.report.tally,
            log=self.log,
            beside=(lambda: arrivals.run(dispatcher)) if plan.deferred else None,
        )
        dispatcher.queue.expecting = arrivals.expected
        return dispatcher

    def _route(self, found: Iterator[Job | Recovered], pages: Pages) -> Iterator[Job]:
        """The plan's jobs, for the dispatcher; a recovered page goes to ``pages`` (its answer is
        journaled: no model is asked) when the stream reaches it."""
        for item in found:
            if isinstance(item, Recovered):
                pages.keep(item.job, item.entry)
                self.report.recovered += 1
                continue
            yield item

    def _make_plan(
        self, helper_wanted: Callable[[], None], embedder: EmbeddingsClient | None
    ) -> RunPlan:
        """The run's plan, on the plan's thread (:func:`~.candidates.plan_beside_helper`)."""
        return RunPlan.make(
            self.corpus,
            journal=self.journal,
            related=self.related,
            current=fingerprints(self.fleet.endpoints, self.dials),
            force=self.dials.force,
            reader=self.reader,
            helper_wanted=helper_wanted,
            stopped=lambda: self.stop_signal is not None,  # the pass ends at a signal
            embedder=embedder,
        )

    # ------------------------------------------------------------------ the dispatcher's Work

    async def prepare(self, job: Job) -> Prepared:
        return await self.preparer.prepare(job)

    def gathered(self, job: Job, notes: list[str]) -> Prepared:
        return self.preparer.gathered(job, notes)

    async def record(self, job: Job, lane: Lane, summary: Summary) -> Recorded:
        return await self.pages.record(job, lane, summary)

    def fail(self, job: Job, reason: str) -> None:
        self.pages.fail(job.doc, reason)

    async def judged(
        self, judging: PageToJudge, judge: Lane, judgement: Judgement, holds: Holds
    ) -> tuple[str, ...]:
        return await self.pages.judged(judging, judge, judgement, holds)

    def held_back(self) -> bool:
        return self.pages.held_back()
