"""The dry run: per collection, what an ingest with these endpoints and dials would do
(:func:`survey`), by the rule the run applies (:func:`~.fingerprints.standing`). Reads, never
writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.documents.corpus import SourceDocument, collection_version, scan
from wiki_assets.engine.documents.extract import extractor
from wiki_assets.engine.documents.ignore import Ignored
from wiki_assets.engine.ingestion.fingerprints import (
    HOLDS_NO_TEXT,
    REASONS,
    RECOVER,
    SKIP,
    extracted_by,
    fingerprints,
    standing,
)
from wiki_assets.engine.state.journal import Entry, Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.files import STATE_DIR


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
    no_text: dict[str, int] = field(default_factory=dict)  # files holding no text, by why

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
    ignored: list[Ignored] | None = None,
) -> list[CollectionState]:
    """Every collection under the synced root (and every one the wiki still has pages for), or only
    ``collections``, with its data version and what an ingest with these endpoints and dials would
    do there; the files the ignore rules leave out go to ``ignored``, if given. Reads, never
    writes."""
    dials = dials or Dials()
    current = fingerprints(endpoints, dials)
    by_collection: dict[str, list[SourceDocument]] = {}
    for doc in scan(synced_root, depth, collections, ignored):
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
            no_text: dict[str, int] = {}
            for doc in docs:
                entry = journal.get(doc.path) if journal else None
                what = standing(entry, doc, current, dials.force)
                if what == HOLDS_NO_TEXT:
                    why = doc.format.no_text or (entry.reason if entry else None) or "no text"
                    no_text[why] = no_text.get(why, 0) + 1
                    continue
                if what == SKIP and _extractor_changed(entry, doc):
                    # (Whether its text changes, the run finds out: it extracts it again.)
                    what = "extractor"
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
                    reasons={reason: counts[reason] for reason in sorted(counts, key=_order)},
                    no_text=no_text,
                )
            )
    finally:
        if journal:
            journal.close()
    return states


def _extractor_changed(entry: Entry | None, doc: SourceDocument) -> bool:
    """A page whose text a former version of its format's extractor gave."""
    used, _ = extracted_by(entry)
    return used is not None and doc.format.extracted and used != extractor(doc.format.name)


def _order(reason: str) -> tuple[int, str]:
    """Reasons in :data:`REASONS`' order; several settings at once ("max_tokens, language")
    after them."""
    return (REASONS.index(reason) if reason in REASONS else len(REASONS), reason)
