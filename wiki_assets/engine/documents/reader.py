"""A document's text, whatever its format: what every reader of a document in a run asks for (the
plan's index, the embeddings, each request, the checks).

Plain text is decoded; every other format is extracted (extract.py) once per content and kept in
the text store (texts.py), so the request, the index and the checks read the same text. The plan
has the documents it will read extracted ahead, in processes of their own (extractors.py,
:meth:`Reader.extract_ahead`): converters are CPU work, and there they neither hold the run's GIL
nor its memory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

from wiki_assets.engine.documents.corpus import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    SourceDocument,
    read_text,
    title_hint,
    title_of,
)
from wiki_assets.engine.documents.extract import ISOLATED, extractor
from wiki_assets.engine.documents.extracted import Location
from wiki_assets.engine.documents.extractors import ExtractorPool, Job, Outcome, extracted
from wiki_assets.engine.documents.texts import Kept, TextStore
from wiki_assets.engine.errors import DocumentError, NoText

TABULAR = frozenset({"csv", "xlsx"})  # no heading of their own: titled by their file's name
POOL_FROM = 8  # documents to extract at once before a pool of processes pays its start


@dataclass(frozen=True, slots=True)
class DocumentText:
    """A document's text as the model sees it, its title, and for an extracted one its extractor
    (``pdf/1``) and locations (where each page, slide or sheet begins)."""

    text: str
    title: str
    extractor: str | None = None
    locations: tuple[Location, ...] = ()
    ocr: bool = False  # its text was read from pictures by OCR

    @property
    def text_hash(self) -> str:
        """What a page records of the text it was written from."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def where(self, line: int) -> str | None:
        """The page, slide or sheet line ``line`` is on (``page 3``), if the format has them."""
        label = None
        for first, name in self.locations:
            if first > line:
                break
            label = name
        return label


class Reader:
    """Reads the documents of one synced tree (see the module docstring). Not thread-safe: one
    caller at a time (a run's plan thread, then its event loop's worker thread)."""

    def __init__(
        self,
        synced_root: Path,
        texts: TextStore | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        processes: int | None = None,
    ) -> None:
        self.synced_root = synced_root
        self.texts = texts
        self.max_bytes = max_bytes
        self.max_file_bytes = max_file_bytes
        self.processes = processes or max(1, os.cpu_count() or 1)
        self._failed: dict[str, str] = {}  # content hash -> why it could not be extracted
        self._pool: ExtractorPool | None = None
        self.extracted = 0  # files extracted in this reader's life (not found in the store)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def read(self, doc: SourceDocument, data: bytes | None = None) -> DocumentText:
        """``doc``'s text, or :class:`DocumentError` (it cannot be read) or :class:`NoText` (it
        holds none), each with the reason. ``data``: a plain text document's bytes, when the
        scan has them."""
        kind = doc.format
        if kind.no_text is not None:
            raise NoText(kind.no_text)
        if doc.size > self.max_file_bytes:
            raise DocumentError(f"too large: {doc.size} bytes (limit {self.max_file_bytes})")
        if not kind.extracted:
            text = read_text(self.synced_root, doc, self.max_bytes, data)
            return DocumentText(text, title_of(text, doc.path))
        kept = self._kept(doc)
        if kept.extracted is None:
            raise NoText(kept.no_text or "no text")
        extracted = kept.extracted
        title = extracted.title or (
            title_hint(doc.path) if kind.name in TABULAR else title_of(extracted.text, doc.path)
        )
        return DocumentText(
            extracted.text, title, kept.extractor, extracted.locations, extracted.ocr
        )

    def extract_ahead(self, docs: Sequence[SourceDocument]) -> None:
        """Extract those of ``docs`` the store does not hold yet, in parallel, so that reading
        them finds their text."""
        missing = self._contents(docs)
        if len(missing) < POOL_FROM or self.processes < 2:
            # (A format that may crash or hang is read in an extracting process all the same.)
            for doc in missing:
                with contextlib.suppress(DocumentError):  # (reading it says why)
                    self._kept(doc)
            return
        outcomes = self._processes().map([self._job(doc) for doc in missing])
        for doc, outcome in zip(missing, outcomes, strict=True):
            self._keep(doc, outcome)

    def extracting(self, docs: Sequence[SourceDocument]) -> Generator[SourceDocument]:
        """Each of ``docs`` as soon as reading it is quick (:meth:`ready`): at once for those
        the store holds, the others as their extraction ends, in parallel and in the order they
        end, so that a slow file (a scan, read by OCR) holds up no other."""
        waiting: dict[str, list[SourceDocument]] = {}  # content hash -> its documents
        for doc in docs:
            if self._missing(doc):
                waiting.setdefault(doc.content_hash, []).append(doc)
            else:
                yield doc
        missing = [copies[0] for copies in waiting.values()]
        if len(missing) < POOL_FROM or self.processes < 2:
            for doc in missing:
                self.extract_ahead([doc])
                yield from waiting[doc.content_hash]
            return
        for index, outcome in self._processes().as_done([self._job(doc) for doc in missing]):
            self._keep(missing[index], outcome)
            yield from waiting[missing[index].content_hash]

    def _contents(self, docs: Sequence[SourceDocument]) -> list[SourceDocument]:
        """The first of ``docs`` with each content the store does not hold yet: copies of a
        file (the same scan in two folders, or in a zip) are extracted once."""
        first: dict[str, SourceDocument] = {}
        for doc in docs:
            if self._missing(doc):
                first.setdefault(doc.content_hash, doc)
        return list(first.values())

    def _processes(self) -> ExtractorPool:
        if self._pool is None:
            self._pool = ExtractorPool(self.processes)
        return self._pool

    def ready(self, doc: SourceDocument) -> bool:
        """Whether reading ``doc`` is quick: it is text, or its extraction is kept (or failed)."""
        return not self._missing(doc)

    def _job(self, doc: SourceDocument) -> Job:
        return str(self.synced_root / doc.path), doc.format.name, self.max_bytes

    def _missing(self, doc: SourceDocument) -> bool:
        kind = doc.format
        if not kind.extracted or kind.no_text or doc.content_hash in self._failed:
            return False
        if doc.size > self.max_file_bytes or not doc.content_hash:
            return False
        return self.texts is None or self.texts.get(doc.content_hash, extractor(kind.name)) is None

    def _kept(self, doc: SourceDocument) -> Kept:
        """What the extractor makes of ``doc``: from the store, or extracted now and kept."""
        name = extractor(doc.format.name)
        failed = self._failed.get(doc.content_hash)
        if failed is not None:
            raise DocumentError(failed)
        kept = self.texts.get(doc.content_hash, name) if self.texts is not None else None
        if kept is None:
            job = self._job(doc)
            isolated = doc.format.name in ISOLATED
            outcome = self._processes().map([job])[0] if isolated else extracted(job)
            kept = self._keep(doc, outcome)
            if kept is None:
                raise DocumentError(self._failed[doc.content_hash])
        return kept

    def _keep(self, doc: SourceDocument, outcome: Outcome) -> Kept | None:
        """Keep an extraction's outcome: in the store (a text, or no text: both hold until the
        file changes), or for this reader's life (a failure: the next run tries again)."""
        self.extracted += 1
        extracted, no_text, failure = outcome
        if failure is not None:
            self._failed[doc.content_hash] = failure
            return None
        kept = Kept(extractor(doc.format.name), extracted, no_text)
        if self.texts is not None:
            self.texts.put(doc.content_hash, kept)
        return kept


__all__ = ["DocumentText", "Reader", "TABULAR"]
