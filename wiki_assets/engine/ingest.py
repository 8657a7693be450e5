"""One ingest pass: plan what changed, summarize it on the whole fleet at once, write the wiki.

The dispatch is the project's core idea. There is one shared queue; each model has its own workers,
and each worker claims ``claim_size`` documents, summarizes them one request at a time, and claims
again when its claim is empty. Models never wait for each other, so a fast model simply takes more
documents and the fleet's throughput approaches the sum of the models'. When the queue runs dry, an
idle worker steals the unstarted back half of the largest claim, so a slow model cannot sit on
documents a free model could start now.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

from wiki_assets.engine.budget import estimate_tokens
from wiki_assets.engine.corpus import (
    DEFAULT_MAX_BYTES,
    DocumentError,
    SourceDocument,
    collection_version,
    read_text,
    scan,
)
from wiki_assets.engine.fleet import (
    AUTO,
    PROMPT_OVERHEAD_TOKENS,
    Dials,
    Endpoint,
    ModelClient,
    ModelError,
    Summary,
)
from wiki_assets.engine.index import INDEX_PAGE, neighbours, page_text, relink
from wiki_assets.engine.journal import SUMMARIZED, WRITTEN, Entry, Journal, JournalWriter
from wiki_assets.engine.leases import SlotLeases
from wiki_assets.engine.limits import (
    AdaptiveConcurrency,
    Breaker,
    Concurrency,
    FixedConcurrency,
    Pace,
    work_units,
    worth_starting,
)
from wiki_assets.engine.page import LANGUAGES, detect_language
from wiki_assets.engine.prompts import PROMPT_VERSION
from wiki_assets.engine.related import Candidate, RelatedIndex
from wiki_assets.engine.store import StateStore
from wiki_assets.engine.wiki import STATE_DIR, UnsafePath, Wiki, now_iso, page_for

# The related-document index is derived from the synced text alone (rebuildable at any time), so it
# stays a SQLite file in the wiki's state folder whatever store holds the per-document state.
RELATED_FILE = "related.sqlite"
LEASE_POLL_S = 0.5  # how often a worker waiting for a fleet-wide slot looks again
AUTO_START = 4  # requests in flight an automatic limit starts from
UNWRITTEN_LIMIT = 2_000
"""Results held for their pages at most: a flush starts as soon as this many wait, and workers
pause while a flush is still writing the previous batch (a slow disk must not fill memory)."""
TAIL_POLL_S = 0.25  # how often a worker that left a document to faster models looks again


class Log(Protocol):
    """What the engine needs of a logger: ``logging.Logger`` and Dagster's ``context.log`` fit."""

    def info(self, msg: str) -> Any: ...
    def warning(self, msg: str) -> Any: ...


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
# The report


@dataclass
class ModelStats:
    name: str
    model: str
    workers: int  # requests in flight: the fixed number, or where automatic concurrency settled
    auto: bool = False
    peak_workers: int = 0
    docs: int = 0
    failed: int = 0  # documents that failed on this model
    errors: int = 0  # failed requests of any kind (after the client's own retries)
    timeouts: int = 0
    garbage: int = 0
    breaker_trips: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    hit_max_tokens: int = 0


@dataclass
class IngestReport:
    collections: list[str]
    dials: Dials
    models: list[ModelStats]
    count: int = 0  # summarized by a model in this run
    skipped: int = 0  # unchanged since their page was written
    recovered: int = 0  # summarized by an earlier run that died before writing the page
    removed: int = 0  # pages whose document no longer exists
    failed: list[dict[str, str]] = field(default_factory=list)
    requeued: int = 0  # documents sent back to the queue after a timeout, garbage or outage
    unfinished: int = 0  # left for the next run because every model was down
    stopped: str | None = None  # why the run stopped early
    duration_s: float = 0.0

    @property
    def docs_per_sec(self) -> float:
        return self.count / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def prompt_tokens(self) -> int:
        return sum(m.prompt_tokens for m in self.models)

    @property
    def completion_tokens(self) -> int:
        return sum(m.completion_tokens for m in self.models)

    @property
    def hit_max_tokens(self) -> int:
        return sum(m.hit_max_tokens for m in self.models)

    def model_docs_per_sec(self, stats: ModelStats) -> float:
        return stats.docs / self.duration_s if self.duration_s > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "collections": self.collections,
            "count": self.count,
            "skipped": self.skipped,
            "recovered": self.recovered,
            "removed": self.removed,
            "failed": self.failed,
            "requeued": self.requeued,
            "unfinished": self.unfinished,
            "stopped": self.stopped,
            "duration_s": round(self.duration_s, 3),
            "docs_per_sec": round(self.docs_per_sec, 3),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "hit_max_tokens": self.hit_max_tokens,
            "dials": asdict(self.dials),
            "models": {
                m.name: {
                    **asdict(m),
                    "docs_per_sec": round(self.model_docs_per_sec(m), 3),
                }
                for m in self.models
            },
        }


# --------------------------------------------------------------------------------------------------
# The shared queue


@dataclass(slots=True)
class Job:
    doc: SourceDocument
    page: str
    attempts: int = 0
    candidates: list[Candidate] | None = None  # link candidates, when already known


class WorkQueue:
    """One queue for the whole fleet. Workers claim in chunks; once the source is dry, an idle
    worker steals the back half of the largest unstarted claim. Single-threaded (asyncio): no locks.
    """

    def __init__(self, source: Iterator[Job]) -> None:
        self._source = source
        self._returned: deque[Job] = deque()
        self._claims: dict[int, deque[Job]] = {}
        self.stolen = 0

    def put_back(self, job: Job) -> None:
        """A job whose request failed in a way another try may fix: next in line for anyone."""
        self._returned.appendleft(job)

    def remaining(self) -> int:
        """Unstarted jobs (claimed, returned and not yet claimed); consumes the source."""
        rest = sum(1 for _ in self._source)
        return rest + len(self._returned) + sum(len(claim) for claim in self._claims.values())

    def has_work(self) -> bool:
        return bool(self._returned)

    def returned(self) -> int:
        """Jobs put back and not yet claimed again."""
        return len(self._returned)

    def give_back(self, worker: int) -> None:
        """Return a worker's unstarted claim (it is being parked) ahead of the unclaimed source."""
        own = self._claims.get(worker)
        if own:
            self._returned.extendleft(reversed(own))
            own.clear()

    def next_job(self, worker: int, claim_size: int) -> Job | None:
        own = self._claims.setdefault(worker, deque())
        if not own:
            while self._returned and len(own) < claim_size:
                own.append(self._returned.popleft())
            own.extend(islice(self._source, claim_size - len(own)))
        if not own:
            victim = max(self._claims.values(), key=len)
            # Half, rounded up: even a single unstarted document moves to the idle worker.
            take = (len(victim) + 1) // 2
            for _ in range(take):
                own.appendleft(victim.pop())
            self.stolen += take
        return own.popleft() if own else None


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
    goes to ``store`` (default: SQLite in the wiki's state folder)."""
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
    with store.collection_locks(collections):
        return asyncio.run(run.execute())


RELATED_CANDIDATES = 8  # documents offered to the model as link targets
LOOKAHEAD = 64  # planned documents whose stored link candidates are looked up together
MAX_ATTEMPTS = 3  # tries per document across the fleet for timeouts and outages
MAX_GARBAGE = 2  # an unparsable answer is retried once


@dataclass
class _Model:
    """One endpoint during a run: its client, concurrency controller, breaker and figures."""

    endpoint: Endpoint
    stats: ModelStats
    concurrency: Concurrency
    breaker: Breaker
    slots: int  # worker tasks started; only those the limit and the breaker allow take documents
    client: ModelClient | None = None
    pace: Pace = field(default_factory=Pace)
    leased: dict[int, int] = field(default_factory=dict)  # worker slot -> fleet-wide slot held

    def allows(self, slot: int, now: float) -> bool:
        return slot < self.concurrency.limit and self.breaker.allows(slot, now)

    def describe(self) -> str:
        mode = f"auto ≤{self.slots}" if self.concurrency.auto else f"×{self.slots}"
        return f"{self.stats.name} {mode}"


def concurrency_for(endpoint: Endpoint, dials: Dials) -> Concurrency:
    setting = endpoint.workers if endpoint.workers is not None else dials.workers_per_model
    if setting == AUTO:
        # Slow start from 4 in flight (TCP starts from 10 segments): any server worth a fleet
        # takes 4 at once, and each doubling round costs a few request latencies at part load.
        return AdaptiveConcurrency(
            ceiling=dials.max_workers, limit=min(AUTO_START, dials.max_workers)
        )
    return FixedConcurrency(int(setting))


class _Run:
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
        self.leases: SlotLeases | None = None
        self.endpoints = endpoints
        self.dials = dials
        self.depth = depth
        self.max_bytes = max_bytes
        self.log = log
        self.current = fingerprints(endpoints, dials)
        self.models: list[_Model] = []
        self.report = IngestReport(collections=collections, dials=dials, models=[])
        self.unwritten: list[tuple[Job, Entry]] = []  # recorded in the journal, page not written
        self.page_failures: list[tuple[SourceDocument, str]] = []  # from the flush thread
        self.seen: set[str] = set()
        self.page_owners: dict[str, str] = {}  # page -> document, for the pages of this run
        self.started = 0.0
        self.in_flight = 0
        self.total = 0  # documents this run expects to summarize (counted before it starts)
        self.first_tries = 0  # documents sent to a model at least once
        self.finished = False  # nothing left to do, or the run was stopped
        self.last_success = 0.0

    async def execute(self) -> IngestReport:
        self.started = self.last_success = time.monotonic()
        # One condition for every change a parked worker may wait for (a limit raised, a job put
        # back, a breaker's cooldown over, the end). Made here: it belongs to this event loop.
        self.changed = asyncio.Condition()
        self.flush_due = asyncio.Event()  # the buffer of unwritten pages is full: flush now
        for endpoint in self.endpoints:
            concurrency = concurrency_for(endpoint, self.dials)
            slots = (
                concurrency.ceiling
                if isinstance(concurrency, AdaptiveConcurrency)
                else concurrency.configured
            )
            stats = ModelStats(endpoint.name, endpoint.model, concurrency.limit, concurrency.auto)
            model = _Model(endpoint, stats, concurrency, Breaker(), slots)
            model.client = ModelClient(
                endpoint, self.dials.max_tokens, on_overload=concurrency.on_overload
            )
            self.models.append(model)
            self.report.models.append(stats)
        with (
            Journal(self.store) as journal,
            RelatedIndex(self.wiki.state_dir / RELATED_FILE) as related,
        ):
            self.journal = journal
            self.related = related
            if any(m.endpoint.max_in_flight for m in self.models):
                self.leases = SlotLeases(self.store)
            self.wiki.sweep_temporaries()
            self._refresh_related()
            self._log_start()
            queue = WorkQueue(self._plan())
            self.writer = JournalWriter(self.store)
            # Pages are written off the event loop, one flush at a time in order, through the
            # flush's own journal connection: a flush of hundreds of pages (file creates and
            # renames) no longer stalls every request, and the models keep working meanwhile.
            self.pages_journal = Journal(self.store)
            self.flushes = ThreadPoolExecutor(1, thread_name_prefix="page-flush")
            flusher = asyncio.create_task(self._flush_periodically())
            renewer = asyncio.create_task(self._renew_leases()) if self.leases else None
            try:
                async with asyncio.TaskGroup() as group:
                    for index, model in enumerate(self.models):
                        for slot in range(model.slots):
                            worker = index * 100_000 + slot
                            group.create_task(self._work(queue, worker, slot, model))
            finally:
                flusher.cancel()
                if renewer is not None:
                    renewer.cancel()
                if self.leases is not None:
                    self.leases.close()  # gives back every slot this run still holds
                self.writer.close()
                for model in self.models:
                    assert model.client is not None
                    await model.client.close()
                    model.stats.workers = model.concurrency.limit
                    model.stats.peak_workers = model.concurrency.peak
                    model.stats.breaker_trips = model.breaker.trips
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
            else:
                self.report.unfinished = queue.remaining()
        self.report.duration_s = time.monotonic() - self.started
        self._log_done()
        return self.report

    def _log_done(self) -> None:
        report = self.report
        self.log.info(
            f"ingest done: {report.count} docs · {report.duration_s:.1f} s · "
            f"{report.docs_per_sec:.2f} docs/s · skipped {report.skipped} · "
            f"failed {len(report.failed)} · removed {report.removed}"
        )
        for model in self.models:
            if model.concurrency.auto:
                self.log.info(
                    f"model {model.stats.name}: automatic concurrency settled at "
                    f"{model.concurrency.limit} (peak {model.concurrency.peak})"
                )
        if report.stopped:
            self.log.error(
                f"ingest stopped: {report.stopped} · {report.unfinished} documents left for "
                "the next run"
            )

    def _log_start(self) -> None:
        dials = self.dials
        models = ", ".join(m.describe() for m in self.models)
        self.log.info(
            f"ingest start: {len(self.endpoints)} models ({models}) · "
            f"{dials.workers_per_model} workers/model · claim {dials.claim_size} · "
            f"flush {dials.flush_seconds:g}s · max_tokens {dials.max_tokens} · "
            f"{self.total} to summarize · collections {', '.join(self.report.collections)}"
        )
        self.log.info(f"state: {self.store.describe()}")
        for model in self.models:
            ep = model.endpoint
            workers = (
                f"auto concurrency (start {model.concurrency.limit}, ceiling {model.slots})"
                if model.concurrency.auto
                else f"{model.slots} workers"
            )
            self.log.info(
                f"model {ep.name}: {ep.model} · {workers} · "
                + (f"≤{ep.max_in_flight} in flight fleet-wide · " if ep.max_in_flight else "")
                + f"max_tokens {ep.max_tokens or dials.max_tokens} · context {ep.context_tokens} · "
                f"timeout {ep.timeout_s:g}s"
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
                yield doc.path, _title_of(text, doc), text, doc.content_hash

        indexed = self.related.update_many(changed())
        pruned = self.related.prune(lambda path: path in present)
        if indexed or pruned:
            self.log.info(f"related index: {indexed} documents indexed · {pruned} removed")

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

    async def _work(self, queue: WorkQueue, worker: int, slot: int, model: _Model) -> None:
        assert model.client is not None
        try:
            await self._work_loop(queue, worker, slot, model)
        finally:
            await self._unlease(model, slot)

    async def _work_loop(self, queue: WorkQueue, worker: int, slot: int, model: _Model) -> None:
        while not self.finished:
            now = time.monotonic()
            if not model.allows(slot, now):
                # Parked (above the limit, or the model is out): let the others have the claim.
                queue.give_back(worker)
                await self._unlease(model, slot)
                wake_at = model.breaker.open_until if model.breaker.tripped else None
                await self._wait(lambda: model.allows(slot, time.monotonic()), wake_at)
                continue
            if not await self._lease(model, slot):
                # The model's fleet-wide limit is reached by other runs: hand the claim to workers
                # of models that are free, and look again shortly.
                queue.give_back(worker)
                await self._wait(lambda: False, time.monotonic() + LEASE_POLL_S)
                continue
            if len(self.unwritten) >= UNWRITTEN_LIMIT:
                # Pages lag behind (a flush is still writing the last batch): hold new requests
                # until it takes this one, so memory stays bounded however slow the disk is.
                await self._unlease(model, slot)
                await self._wait(lambda: len(self.unwritten) < UNWRITTEN_LIMIT, None)
                continue
            job = queue.next_job(worker, self.dials.claim_size)
            if job is None:
                if self.in_flight == 0:
                    await self._finish(None)
                    return
                # Requests still out may fail and put their document back: stay until they end,
                # without holding a fleet-wide slot another run could use meanwhile.
                await self._unlease(model, slot)
                await self._wait(lambda: queue.has_work() or self.in_flight == 0, None)
                continue
            self.in_flight += 1
            try:
                started = await self._process(job, model, queue)
            finally:
                self.in_flight -= 1
                async with self.changed:
                    self.changed.notify_all()
            if not started:
                # Left to a faster model (the run's end): look again shortly, slot given back.
                await self._unlease(model, slot)
                await self._wait(lambda: False, time.monotonic() + TAIL_POLL_S)

    async def _lease(self, model: _Model, slot: int) -> bool:
        """Whether this worker may send a request: always, unless the model has a fleet-wide
        limit, in which case the worker must hold one of its slots in the state store."""
        limit = model.endpoint.max_in_flight
        if self.leases is None or limit is None or slot in model.leased:
            return True
        held = await asyncio.to_thread(self.leases.try_acquire, model.endpoint.identity, limit)
        if held is None:
            return False
        model.leased[slot] = held
        return True

    async def _unlease(self, model: _Model, slot: int) -> None:
        held = model.leased.pop(slot, None)
        if held is not None and self.leases is not None:
            await asyncio.to_thread(self.leases.release, model.endpoint.identity, held)

    async def _renew_leases(self) -> None:
        assert self.leases is not None
        while True:
            await asyncio.sleep(self.leases.ttl_s / 3)
            await asyncio.to_thread(self.leases.renew)

    async def _wait(self, ready: Any, wake_at: float | None) -> None:
        timeout = None if wake_at is None else max(0.0, wake_at - time.monotonic())
        async with self.changed:
            try:
                await asyncio.wait_for(
                    self.changed.wait_for(lambda: self.finished or ready()), timeout
                )
            except TimeoutError:
                pass

    async def _finish(self, reason: str | None) -> None:
        if self.finished:
            return
        self.finished = True
        self.report.stopped = reason
        async with self.changed:
            self.changed.notify_all()

    async def _process(self, job: Job, model: _Model, queue: WorkQueue) -> bool:
        """Summarize one document and record the result; False when the document was put back
        for a faster model instead."""
        doc, stats, client = job.doc, model.stats, model.client
        assert client is not None
        try:
            text = read_text(self.synced_root, doc, self.max_bytes)
            self.wiki.check(job.page)
        except (DocumentError, UnsafePath) as error:
            self._fail(doc, str(error))
            return True
        prompt_tokens = estimate_tokens(text) + PROMPT_OVERHEAD_TOKENS
        if not self._worth_starting(model, job, prompt_tokens, queue):
            queue.put_back(job)
            return False
        title = _title_of(text, doc)
        language = _language(self.dials.language, text)
        candidates = job.candidates
        if candidates is None:
            # The query runs in SQLite's C code, which releases the GIL: off the event loop.
            candidates = await asyncio.to_thread(
                self.related.candidates, doc.path, RELATED_CANDIDATES
            )
        sent = time.monotonic()
        self.first_tries += job.attempts == 0
        job.attempts += 1
        try:
            summary = await client.summarize(doc.path, title, text, candidates, language)
        except ModelError as error:
            await self._model_failed(job, model, queue, error)
            return True
        model.breaker.on_success()
        self.last_success = time.monotonic()
        model.concurrency.on_success(
            self.last_success - sent, work_units(summary.prompt_tokens, summary.completion_tokens)
        )
        model.pace.observe(self.last_success - sent, prompt_tokens, summary.completion_tokens)
        stats.docs += 1
        stats.prompt_tokens += summary.prompt_tokens
        stats.completion_tokens += summary.completion_tokens
        stats.hit_max_tokens += summary.finish_reason == "length"
        entry = Entry(
            path=doc.path,
            collection=doc.collection,
            content_hash=doc.content_hash,
            fingerprint=fingerprint(client.max_tokens, self.dials.language),
            status=SUMMARIZED,
            page=job.page,
            model=client.endpoint.model,
            result=_result(title, language, summary),
            reason=None,
        )
        await self.writer.record(entry)  # durable before its page is written
        self.unwritten.append((job, entry))
        if len(self.unwritten) >= UNWRITTEN_LIMIT:
            self.flush_due.set()
        self.report.count += 1
        return True

    def _worth_starting(
        self, model: _Model, job: Job, prompt_tokens: int, queue: WorkQueue
    ) -> bool:
        """Whether ``model`` should start ``job`` now, or leave it to the other models because
        they would do it and every other unstarted document before this model finished it."""
        mine = model.pace.expected_s(prompt_tokens)
        if mine is None:
            return True
        others = [
            (other.concurrency.limit, other.pace.seconds_per_request)
            for other in self.models
            if other is not model and other.pace.seconds_per_request and not other.breaker.tripped
        ]
        if not others:
            return True
        unstarted = max(0, self.total - self.first_tries - (job.attempts == 0))
        return worth_starting(
            mine,
            unstarted + queue.returned(),
            sum(limit / seconds for limit, seconds in others),
            min(seconds for _, seconds in others),
        )

    async def _model_failed(
        self, job: Job, model: _Model, queue: WorkQueue, error: ModelError
    ) -> None:
        stats = model.stats
        stats.errors += 1
        stats.timeouts += error.kind == "timeout"
        stats.garbage += error.kind == "garbage"
        now = time.monotonic()
        if error.kind in ("timeout", "unavailable"):
            was_tripped = model.breaker.tripped
            model.breaker.on_failure(now)
            if model.breaker.tripped and not was_tripped:
                self.log.warning(
                    f"model {stats.name} taken out for {model.breaker.open_until - now:.0f} s "
                    f"after {model.breaker.failures} failures in a row: {error}"
                )
        if error.kind == "unavailable":
            job.attempts -= 1  # the model's fault, not the document's: no try is used up
        limit = MAX_GARBAGE if error.kind == "garbage" else MAX_ATTEMPTS
        if error.kind != "rejected" and job.attempts < limit and not self._all_models_down(now):
            queue.put_back(job)
            self.report.requeued += 1
        elif error.kind != "rejected" and self._all_models_down(now):
            queue.put_back(job)  # not this document's fault: leave it for the next run
        else:
            stats.failed += 1
            self._fail(job.doc, str(error))
        if self._all_models_down(now):
            await self._finish(
                "every model is down: "
                + "; ".join(f"{m.stats.name} failed {m.breaker.failures}x" for m in self.models)
            )

    def _all_models_down(self, now: float) -> bool:
        return all(m.breaker.tripped for m in self.models) and (
            now - self.last_success >= self.dials.give_up_after_s
        )

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

    async def _flush_periodically(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.flush_due.wait(), self.dials.flush_seconds)
            self.flush_due.clear()
            batch = self._take_unwritten()
            async with self.changed:
                self.changed.notify_all()  # workers held back by a full buffer go on
            try:
                await loop.run_in_executor(self.flushes, self._flush, batch)
            except Exception as error:
                self.unwritten[:0] = batch  # for the last flush to try again
                await self._finish(f"pages could not be written: {error}")
                raise
            self._report_page_failures()
            self.log.info(self._progress_line())

    def _progress_line(self) -> str:
        elapsed = time.monotonic() - self.started
        report = self.report
        done = report.count
        rate = done / elapsed if elapsed > 0 else 0.0
        left = max(0, self.total - done - len(report.failed))
        eta = f"{left / rate:.0f} s left" if rate > 0 else "time left unknown"
        models = " ".join(
            f"{m.stats.name} {m.stats.docs / elapsed:.2f}/s"
            + (f"@{m.concurrency.limit}" if m.concurrency.auto else "")
            for m in self.models
        )
        return (
            f"ingest progress: {done}/{self.total} docs · {elapsed:.1f} s · {rate:.2f} docs/s · "
            f"{eta} · {models} · skipped {report.skipped} · failed {len(report.failed)}"
        )

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
            (entry.page, page_text(journal, entry, landing, links)) for _, entry in pages
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


def _title_of(text: str, doc: SourceDocument) -> str:
    for line in islice((line.strip() for line in text.splitlines()), 20):
        if line:
            title = line.lstrip("#").strip()
            return title[:120] if title else doc.title_hint
    return doc.title_hint


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
