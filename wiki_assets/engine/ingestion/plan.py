"""What a run does about the documents whose page is not current.

What makes a page current, and what a run does with each document, is
:mod:`~wiki_assets.engine.ingestion.fingerprints`'s; the dry run is
:mod:`~wiki_assets.engine.ingestion.survey`'s. :class:`RunPlan` is an ingest's own plan
(:meth:`RunPlan.make`): one pass over the synced tree that reads and hashes each file once, brings
the related-document index up to date with the same read, counts what the run will summarize and
keeps, in path order, the documents that need a model or a recovered page, and has the index
answer their link candidates; :meth:`RunPlan.jobs` streams them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from wiki_assets.engine.dispatch import Job
from wiki_assets.engine.documents.corpus import Corpus, DocumentError, SourceDocument
from wiki_assets.engine.documents.extract import extractor
from wiki_assets.engine.documents.reader import Reader
from wiki_assets.engine.errors import NoText
from wiki_assets.engine.ingestion.fingerprints import (
    HOLDS_NO_TEXT,
    RECOVER,
    SKIP,
    Currency,
    extracted_by,
    is_current,
    standing,
)
from wiki_assets.engine.ingestion.tree import Read, TreePass
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.embed_missing import Embedded, Embedder, embed_first_or_beside
from wiki_assets.engine.related.service import SERVICE_MIN
from wiki_assets.engine.state.journal import NO_TEXT, Entry, Journal
from wiki_assets.engine.wiki.files import DIGEST_DIR, INDEX_PAGE, page_for

# The related-document index is derived from the synced text alone (rebuildable at any time), so it
# stays a SQLite file in the wiki's state folder whatever store holds the per-document state.
RELATED_FILE = "related.sqlite"
RELATED_CANDIDATES = 8  # documents offered to the model as link targets
LOOKAHEAD = 64  # planned documents whose link candidates are computed or looked up together
# Deferred documents (text to extract) the plan extracts itself before the requests: a few files
# take less than a second; more are extracted beside the requests (arrivals.py).
EXTRACT_FIRST = 32


class RunPlan:
    """An ingest's plan, made in one pass over the whole synced tree: each file is read and hashed
    once. Link candidates come from the whole corpus, not only this run's collections, so the same
    read (re)indexes every document whose content changed, and the documents that are gone leave
    the related index; then the index answers the link candidates of the documents to summarize.
    Per document of the run's collections only its standing is kept (path, hash and a word; no
    text), for :meth:`jobs` to stream."""

    def __init__(self, journal: Journal, related: RelatedIndex) -> None:
        """An empty plan; :meth:`make` makes the run's."""
        self.journal = journal
        self.related = related
        self.todo: list[tuple[SourceDocument, str]] = []  # to summarize or recover, with standing
        self.seen: set[str] = set()  # the run's documents that exist: the others' pages go
        self.skipped = 0  # documents whose page is current
        self.total = 0  # documents this run expects to summarize, for done/total and time left
        self.interrupted = False  # stopped before it saw the whole tree (a signal came)
        self.indexed = 0  # documents the pass (re)indexed in the related index
        self.pruned = 0  # documents gone from the synced tree that left the related index
        self.embedded = Embedded()  # documents embedded before the first request, or none
        # When two page names collide (a.txt, a.txt.md), the page is the first's in path order,
        # whatever order the run takes them in.
        self.page_claims: dict[str, str] = {}
        self.answers_beside: list[str] = []  # documents whose candidates a helper answers
        self.no_text: list[NoTextFile] = []  # the run's files that hold no text, and why
        # Documents whose text is extracted beside the run's requests (too many to wait for):
        # to index, and those of the run's collections to summarize, with their standing.
        self.deferred: list[SourceDocument] = []
        self.later: dict[str, str] = {}
        self.opening: Callable[[str], str | None] = lambda path: None  # a document's text

    @classmethod
    def make(
        cls,
        corpus: Corpus,
        *,
        journal: Journal,
        related: RelatedIndex,
        current: Currency,
        force: bool,
        reader: Reader,
        helper_wanted: Callable[[], None] | None = None,
        stopped: Callable[[], bool] = lambda: False,
        embedder: Embedder | None = None,
    ) -> RunPlan:
        """The run's plan for the ``corpus``: the pass over the synced tree
        (:class:`~.tree.TreePass`) with the related index brought up to date, the page names
        claimed, the longest documents first, and the link candidates answered.

        ``helper_wanted`` is called (once, from the pass) as soon as the pass knows that a
        helper process will answer the link candidates: documents are being indexed and at
        least :data:`SERVICE_MIN` are to summarize. The caller can start the helper then, so that
        it starts while the rest of the corpus is indexed. Once ``stopped()`` says so (a signal
        came), the pass ends at its next group of documents: what it indexed is kept, nothing is
        pruned (it has not seen the whole tree) and no candidates are answered
        (:attr:`interrupted`).

        With an ``embedder``, the indexed documents without a vector are embedded after the
        pass, before any candidates are answered, when they are few; else beside the requests
        (:func:`~wiki_assets.engine.related.embed_missing.embed_first_or_beside`), and then no
        candidates are answered before the requests (they would have fewer vectors than those
        asked later)."""
        plan = cls(journal, related)

        def note(doc: SourceDocument, entry: Entry | None, read: Read, ready: bool) -> bool:
            return plan._note(doc, entry, current, force, read, ready)

        # A forced run summarizes each document whatever its result says (see standing()).
        scan = TreePass(corpus, reader, journal, related, note, helper_wanted, results=not force)
        plan.indexed = related.update_many(scan.stale_in_related_index(stopped))
        plan.interrupted = scan.interrupted
        plan.deferred = [] if plan.interrupted else scan.deferred
        plan.opening = scan.opening
        if len(plan.deferred) <= EXTRACT_FIRST:
            plan.indexed += plan._extract_now(reader, current, force)
        if not plan.interrupted:
            plan.pruned = related.prune(lambda path: path in scan.present)
            if reader.texts is not None:
                reader.texts.prune(scan.hashes)  # the texts of files that changed or went
        if embedder is not None and not plan.interrupted:
            later = len(plan.deferred)
            plan.embedded = embed_first_or_beside(related, embedder, scan.opening, later, stopped)
        plan._claim_pages()
        # Longest first (by size; in path order among equals): a long document's parts then
        # spread over the fleet from the start, instead of holding up the end of the run.
        plan.todo.sort(key=lambda planned: -planned[0].size)
        plan._answer_candidates()
        return plan

    def _extract_now(self, reader: Reader, current: Currency, force: bool) -> int:
        """Extract the few deferred documents before the run's requests (they take less than
        the fleet would wait), note them again with their text ready, and index them: how many
        were indexed."""
        deferred, self.deferred = self.deferred, []
        reader.extract_ahead(deferred)
        entries = self.journal.get_many([doc.path for doc in deferred if doc.path in self.later])
        items = []
        for doc in deferred:
            if self.later.pop(doc.path, None) is not None:
                self.total -= 1  # noted again, now with its text
                read = functools.partial(reader.read, doc)
                self._note(doc, entries.get(doc.path), current, force, read, True)
            try:
                text = reader.read(doc)
            except (DocumentError, NoText):
                continue
            items.append((doc.path, text.title, text.text, doc.content_hash))
        return self.related.update_many(items)

    def _claim_pages(self) -> None:
        """Each page name to the first document in path order that would write it."""
        later = [doc for doc in self.deferred if doc.path in self.later]
        for doc, what in sorted([*self.todo, *((d, self.later[d.path]) for d in later)],
                                key=lambda planned: planned[0].path):  # fmt: skip
            if what != RECOVER:
                self.page_claims.setdefault(page_for(doc.path), doc.path)

    def _answer_candidates(self) -> None:
        """Link candidates of the documents to summarize. When the index changed (every stored
        answer expired) and they are many, the run asks a helper process for them beside its
        requests (:mod:`~wiki_assets.engine.related.service`); else they are answered here, a
        lookahead per call, for the run to look up as a re-run does."""
        asks = [] if self.interrupted else [doc.path for doc, what in self.todo if what != RECOVER]
        changed = self.indexed or self.pruned or self.embedded.embedded
        beside = bool(changed) and len(asks) >= SERVICE_MIN
        self.answers_beside = asks if beside else []  # for a helper process to answer
        if not beside and not self.embedded.beside:
            for start in range(0, len(asks), LOOKAHEAD):
                self.related.answer(asks[start : start + LOOKAHEAD], RELATED_CANDIDATES)

    def _note(
        self,
        doc: SourceDocument,
        entry: Entry | None,
        current: Currency,
        force: bool,
        read: Read,
        ready: bool,
    ) -> bool:
        """Note what the run does with ``doc`` (``entry``: its journal entry; ``read``: its text,
        when the note needs it, quick when ``ready``); True when it is to be summarized. One
        whose text is not ready is to be summarized once extracted (:attr:`later`)."""
        self.seen.add(doc.path)
        what = standing(entry, doc, current, force)
        if what == HOLDS_NO_TEXT:
            known = entry is not None and entry.status == NO_TEXT
            why = doc.format.no_text or (entry.reason if entry else None) or "no text"
            unchanged = known and entry is not None and entry.content_hash == doc.content_hash
            self.no_text.append(NoTextFile(doc, why, new=not unchanged))
            return False
        try:
            if what in (SKIP, RECOVER):
                what = _text_changed(entry, doc, read) or what
            elif not ready:
                self.later[doc.path] = what  # extracted first: whether it holds text, then
                self.total += 1
                return True
            elif doc.format.extracted:
                read()  # a file that holds no text (a scan, a locked file) is found out here
        except NoText as error:
            self.no_text.append(NoTextFile(doc, str(error), new=True))
            return False
        except DocumentError:
            pass  # it fails with the reason when its request is prepared
        if what not in (SKIP, RECOVER) or force or not is_current(entry, doc, current):
            self.total += 1
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
        if self.answers_beside or self.embedded.beside:
            # None is stored: they are asked for as they are prepared (with every vector that
            # is in by then).
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
            job = self.job(doc, owner, fail)
            if job is not None:
                yield job

    def job(
        self,
        doc: SourceDocument,
        owner: Callable[[str, SourceDocument], str],
        fail: Callable[[SourceDocument, str], None],
    ) -> Job | None:
        """``doc``'s job, or None when its page name cannot be written (it fails, with why)."""
        page = page_for(doc.path)
        if page == INDEX_PAGE:
            fail(doc, f"page name {page!r} is reserved for the wiki's index")
            return None
        if page.split("/", 1)[0] == DIGEST_DIR:
            fail(doc, f"page name {page!r} is in {DIGEST_DIR}/, reserved for the daily digests")
            return None
        claimant = self.page_claims.get(page, doc.path)
        page_owner = claimant if claimant != doc.path else owner(page, doc)
        if page_owner != doc.path:
            fail(doc, f"page name {page!r} is already the page of {page_owner!r}")
            return None
        return Job(doc, page)


@dataclass(frozen=True, slots=True)
class NoTextFile:
    """A file of the run that holds no text: why, and whether this run found it so (it is
    journaled, and a page it had goes) or an earlier one did."""

    doc: SourceDocument
    reason: str
    new: bool


def _text_changed(entry: Entry | None, doc: SourceDocument, read: Read) -> str | None:
    """ "extractor" when a new version of the page's extractor gives its file another text than
    the page was written from (the page is redone, as for a new prompt); else None."""
    used, text_hash = extracted_by(entry)
    if used is None or not doc.format.extracted or used == extractor(doc.format.name):
        return None
    try:
        return "extractor" if read().text_hash != text_hash else None
    except DocumentError:
        return "extractor"


@dataclass(frozen=True, slots=True)
class Recovered:
    """A page whose answer a run that died had journaled: the run writes it and asks no model."""

    job: Job
    entry: Entry
