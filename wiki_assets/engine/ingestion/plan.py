"""What a run does about the documents whose page is not current.

What makes a page current is :mod:`~wiki_assets.engine.ingestion.currency`'s. :func:`survey`
says per collection what an ingest would do (the dry run). :class:`RunPlan` is an ingest's own plan:
one pass over the synced tree that reads and hashes each file once, brings the related-document
index up to date with the same read, counts what the run will summarize and keeps, in path order,
the documents that need a model or a recovered page, and has the index answer their link
candidates; :meth:`RunPlan.jobs` streams them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.dispatch import Job
from wiki_assets.engine.ingestion.currency import Currency, fingerprints, is_current
from wiki_assets.engine.model.prompts import PROMPT_VERSION
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.service import SERVICE_MIN
from wiki_assets.engine.state.journal import SUMMARIZED, WRITTEN, Entry, Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.text.corpus import (
    DocumentError,
    SourceDocument,
    collection_version,
    read_text,
    scan,
    scan_contents,
    title_of,
)
from wiki_assets.engine.wiki.files import DIGEST_DIR, INDEX_PAGE, STATE_DIR, page_for

# The related-document index is derived from the synced text alone (rebuildable at any time), so it
# stays a SQLite file in the wiki's state folder whatever store holds the per-document state.
RELATED_FILE = "related.sqlite"
RELATED_CANDIDATES = 8  # documents offered to the model as link targets
LOOKAHEAD = 64  # planned documents whose link candidates are computed or looked up together
GROUP_BYTES = 8 << 20  # scanned documents' bytes the planning pass holds while it looks them up


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


class RunPlan:
    """An ingest's plan, made in one pass over the whole synced tree: each file is read and hashed
    once. Link candidates come from the whole corpus, not only this run's collections, so the same
    read (re)indexes every document whose content changed, and the documents that are gone leave
    the related index; then the index answers the link candidates of the documents to summarize.
    Per document of the run's collections only its standing is kept (path, hash and a word; no
    text), for :meth:`jobs` to stream."""

    def __init__(
        self,
        *,
        synced_root: Path,
        depth: int,
        collections: Sequence[str],
        journal: Journal,
        related: RelatedIndex,
        current: Currency,
        force: bool,
        max_bytes: int,
        helper_wanted: Callable[[], None] | None = None,
        stopped: Callable[[], bool] = lambda: False,
    ) -> None:
        """``helper_wanted`` is called (once, from the pass) as soon as the pass knows that a
        helper process will answer the link candidates: documents are being indexed and at
        least :data:`SERVICE_MIN` are to summarize. The caller can start the helper then, so that
        it starts while the rest of the corpus is indexed. Once ``stopped()`` says so (a signal
        came), the pass ends at its next group of documents: what it indexed is kept, nothing is
        pruned (it has not seen the whole tree) and no candidates are answered
        (:attr:`interrupted`)."""
        self.journal = journal
        self.related = related
        self.todo: list[tuple[SourceDocument, str]] = []  # to summarize or recover, with standing
        self.seen: set[str] = set()  # the run's documents that exist: the others' pages go
        self.skipped = 0  # documents whose page is current
        self.total = 0  # documents this run expects to summarize, for done/total and time left
        self.interrupted = False  # stopped before it saw the whole tree
        present: set[str] = set()
        wanted = set(collections)
        to_summarize = 0  # so far (a recovered page needs no candidates)
        call_helper = helper_wanted  # called once, then None

        def stale_in_related_index() -> Iterator[tuple[str, str, str, str]]:
            nonlocal to_summarize, call_helper
            for group in _groups(scan_contents(synced_root, depth, keep_up_to=max_bytes)):
                if stopped():
                    self.interrupted = True
                    return
                # The journal and the index are asked about a group of documents at once.
                entries = journal.get_many([d.path for d, _ in group if d.collection in wanted])
                indexed = related.current_among({d.path: d.content_hash for d, _ in group})
                for doc, data in group:
                    present.add(doc.path)
                    if doc.collection in wanted:
                        to_summarize += self._note(doc, entries.get(doc.path), current, force)
                    if doc.path in indexed:
                        continue
                    try:
                        text = read_text(synced_root, doc, max_bytes, data)
                    except DocumentError:
                        continue
                    if call_helper is not None and to_summarize >= SERVICE_MIN:
                        call_helper()  # this document is indexed: every stored answer expires
                        call_helper = None
                    yield doc.path, title_of(text, doc.path), text, doc.content_hash

        self.indexed = related.update_many(stale_in_related_index())
        self.pruned = 0 if self.interrupted else related.prune(lambda path: path in present)
        # When two page names collide (a.txt, a.txt.md), the page is the first's in path order,
        # whatever order the run takes them in.
        self.page_claims: dict[str, str] = {}
        for doc, what in self.todo:
            if what != RECOVER:
                self.page_claims.setdefault(page_for(doc.path), doc.path)
        # Longest first (by size; in path order among equals): a long document's parts then
        # spread over the fleet from the start, instead of holding up the end of the run.
        self.todo.sort(key=lambda planned: -planned[0].size)
        # Link candidates of the documents to summarize. When the index changed (every stored
        # answer expired) and they are many, the run asks a helper process for them beside its
        # requests (:mod:`~wiki_assets.engine.related.service`); else they are answered here, a
        # lookahead per call, for the run to look up as a re-run does.
        asks = [] if self.interrupted else [doc.path for doc, what in self.todo if what != RECOVER]
        beside = bool(self.indexed or self.pruned) and len(asks) >= SERVICE_MIN
        self.answers_beside = asks if beside else []  # for a helper process to answer
        if not beside:
            for start in range(0, len(asks), LOOKAHEAD):
                related.answer(asks[start : start + LOOKAHEAD], RELATED_CANDIDATES)

    def _note(
        self, doc: SourceDocument, entry: Entry | None, current: Currency, force: bool
    ) -> bool:
        """Note what the run does with ``doc`` (``entry``: its journal entry); True when it is to
        be summarized."""
        self.seen.add(doc.path)
        if force or not is_current(entry, doc, current):
            self.total += 1
        what = standing(entry, doc, current, force)
        if what == SKIP:
            self.skipped += 1
        else:
            self.todo.append((doc, what))
        return what not in (SKIP, RECOVER)

    def jobs(
        self,
        owner: Callable[[str, SourceDocument], str],
        fail: Callable[[SourceDocument, str], None],
    ) -> Iterator[Job | Recovered]:
        """The run's jobs, in order, with the link candidates the index still has stored for them
        (looked up :data:`LOOKAHEAD` documents at a time), and its recovered pages
        (:class:`Recovered`, for the run to route to its pages) as the stream reaches them.
        Streamed as workers claim them: ``owner(page, doc)`` says which document writes a page
        (see :meth:`~wiki_assets.engine.ingestion.flush.Pages.owner`), and a page name that
        cannot be written fails its document when the stream reaches it."""
        if self.answers_beside:  # none is stored: the helper answers them as they are prepared
            yield from self._jobs(owner, fail)
            return
        ahead: list[Job] = []
        for found in self._jobs(owner, fail):
            if isinstance(found, Recovered):
                yield found
                continue
            ahead.append(found)
            if len(ahead) >= LOOKAHEAD:
                yield from self._with_stored_candidates(ahead)
                ahead = []
        yield from self._with_stored_candidates(ahead)

    def _with_stored_candidates(self, jobs: list[Job]) -> list[Job]:
        stored = self.related.stored_answers([job.doc.path for job in jobs], RELATED_CANDIDATES)
        for job in jobs:
            job.candidates = stored.get(job.doc.path)
        return jobs

    def _jobs(
        self,
        owner: Callable[[str, SourceDocument], str],
        fail: Callable[[SourceDocument, str], None],
    ) -> Iterator[Job | Recovered]:
        for doc, what in self.todo:
            if what == RECOVER:
                entry = self.journal.get(doc.path)
                assert entry is not None and entry.page is not None
                # A run that died after the model answered: write the page, ask no model.
                yield Recovered(Job(doc, entry.page), entry)
                continue
            page = page_for(doc.path)
            if page == INDEX_PAGE:
                fail(doc, f"page name {page!r} is reserved for the wiki's index")
                continue
            if page.split("/", 1)[0] == DIGEST_DIR:
                fail(doc, f"page name {page!r} is in {DIGEST_DIR}/, reserved for the daily digests")
                continue
            claimant = self.page_claims.get(page, doc.path)
            page_owner = claimant if claimant != doc.path else owner(page, doc)
            if page_owner != doc.path:
                fail(doc, f"page name {page!r} is already the page of {page_owner!r}")
                continue
            yield Job(doc, page)


@dataclass(frozen=True, slots=True)
class Recovered:
    """A page whose answer a run that died had journaled: the run writes it and asks no model."""

    job: Job
    entry: Entry


def _groups(
    scanned: Iterable[tuple[SourceDocument, bytes | None]],
) -> Iterator[list[tuple[SourceDocument, bytes | None]]]:
    """The scanned documents, :data:`LOOKAHEAD` at a time (fewer when their bytes pass
    :data:`GROUP_BYTES`)."""
    group: list[tuple[SourceDocument, bytes | None]] = []
    held = 0
    for doc, data in scanned:
        group.append((doc, data))
        held += len(data or b"")
        if len(group) >= LOOKAHEAD or held >= GROUP_BYTES:
            yield group
            group, held = [], 0
    if group:
        yield group
