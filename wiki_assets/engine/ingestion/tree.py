"""The plan's one pass over the synced tree (:class:`TreePass`): each file read and hashed once,
each document of the run's collections noted by the plan, and the documents the related index
does not have as they are handed to it to index. A document whose text is yet to be extracted
(a PDF, a deck… new or changed) is not read here: it is *deferred*, for the plan to extract
(a few) or for the run to extract beside its requests (:mod:`~.arrivals`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from wiki_assets.engine.documents import archives
from wiki_assets.engine.documents.corpus import (
    Corpus,
    DocumentError,
    SourceDocument,
    scan_contents,
)
from wiki_assets.engine.documents.encodings import decode
from wiki_assets.engine.documents.reader import DocumentText, Reader
from wiki_assets.engine.errors import NoText
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.service import SERVICE_MIN
from wiki_assets.engine.state.journal import Entry, Journal

GROUP = 64  # documents looked up (journal, index) and extracted together
GROUP_BYTES = 8 << 20  # scanned documents' bytes the pass holds while it looks them up
Read = Callable[[], DocumentText]  # a document's text, read when asked for
# What the plan does with a document of the run (its journal entry, its text when needed, whether
# that text is ready to read): True when it is to be summarized.
Note = Callable[[SourceDocument, Entry | None, Read, bool], bool]


@dataclass(eq=False)
class TreePass:
    """See the module docstring."""

    corpus: Corpus
    reader: Reader
    journal: Journal
    related: RelatedIndex
    note: Note
    helper_wanted: Callable[[], None] | None  # called once, then None
    # Whether ``note`` reads the journaled results (a forced run's plan does not: none decoded).
    results: bool = True
    present: set[str] = field(default_factory=set)  # every document seen, of any collection
    hashes: set[str] = field(default_factory=set)  # their content hashes
    extracted: dict[str, SourceDocument] = field(default_factory=dict)  # those extracted, by path
    deferred: list[SourceDocument] = field(default_factory=list)  # to index once extracted
    to_summarize: int = 0  # so far (a recovered page needs no candidates)
    interrupted: bool = False  # stopped before it saw the whole tree

    def stale_in_related_index(
        self, stopped: Callable[[], bool]
    ) -> Iterator[tuple[str, str, str, str]]:
        """``(path, title, text, hash)`` of each document to (re)index, read once; the pass
        ends early once ``stopped()`` (:attr:`interrupted`)."""
        reader, corpus = self.reader, self.corpus
        wanted = set(corpus.collections)
        for group in _groups(
            scan_contents(corpus.synced_root, corpus.depth, keep_up_to=reader.max_bytes)
        ):
            if stopped():
                self.interrupted = True
                return
            # The journal and the index are asked about a group of documents at once.
            paths = [d.path for d, _ in group if d.collection in wanted]
            entries = self.journal.get_many(paths, results=self.results)
            indexed = self.related.current_among({d.path: d.content_hash for d, _ in group})
            for doc, data in group:
                self.present.add(doc.path)
                self.hashes.add(doc.content_hash)
                if doc.format.extracted:
                    self.extracted[doc.path] = doc
                ready = reader.ready(doc)
                summarized = False
                if doc.collection in wanted:
                    read = functools.partial(reader.read, doc, data)
                    summarized = self.note(doc, entries.get(doc.path), read, ready)
                    self.to_summarize += summarized
                if not ready and (summarized or doc.path not in indexed):
                    # Read once extracted: indexed then (an unchanged one is skipped), and
                    # summarized if the plan said so.
                    self.deferred.append(doc)
                    continue
                if doc.path in indexed:
                    continue
                try:
                    text = reader.read(doc, data)
                except (DocumentError, NoText):
                    continue
                self._call_helper()  # this document is indexed: every stored answer expires
                yield doc.path, text.title, text.text, doc.content_hash

    def _call_helper(self) -> None:
        """Ask for the helper, once, as soon as a document is indexed and enough are to be
        summarized (:data:`SERVICE_MIN`)."""
        if self.helper_wanted is not None and self.to_summarize >= SERVICE_MIN:
            self.helper_wanted()
            self.helper_wanted = None

    def opening(self, path: str) -> str | None:
        """The text of the synced document at ``path`` (for its embedding), or None when it
        cannot be read now."""
        doc = self.extracted.get(path)
        try:
            if doc is not None:
                return self.reader.read(doc).text
            data = archives.read_bytes(self.corpus.synced_root / path)
            return decode(data) if len(data) <= self.reader.max_bytes else None
        except (OSError, DocumentError, NoText):
            return None


def _groups(
    scanned: Iterable[tuple[SourceDocument, bytes | None]],
) -> Iterator[list[tuple[SourceDocument, bytes | None]]]:
    """The scanned documents, :data:`GROUP` at a time (fewer when their bytes pass
    :data:`GROUP_BYTES`)."""
    group: list[tuple[SourceDocument, bytes | None]] = []
    held = 0
    for doc, data in scanned:
        group.append((doc, data))
        held += len(data or b"")
        if len(group) >= GROUP or held >= GROUP_BYTES:
            yield group
            group, held = [], 0
    if group:
        yield group
