"""``index.md``: the pages that need review, every page by collection and by shared topic, and the
check that every page's links and backlinks are current.

:func:`build_index` re-renders every page that differs from what the journal says (which also
repairs a wiki edited by hand), then rewrites ``index.md`` and ``catalog.jsonl`` (the same pages,
one JSON record each, :mod:`.catalog`).
"""

from __future__ import annotations

import os
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from wiki_assets.engine.quality.verdict import Verdict
from wiki_assets.engine.state.journal import WRITTEN, Entry, Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.catalog import (
    CATALOG_FILE,
    CatalogRecord,
    catalog_record,
    render_catalog,
)
from wiki_assets.engine.wiki.files import INDEX_PAGE, Wiki
from wiki_assets.engine.wiki.links import page_of
from wiki_assets.engine.wiki.record import Link
from wiki_assets.engine.wiki.render import render_index, render_page


@dataclass(frozen=True, slots=True)
class IndexReport:
    pages: int
    collections: int
    topics: int
    rewritten: int  # pages whose links or backlinks were out of date


class _Written(Mapping[str, Entry]):
    """Written pages by path, read through from the journal and kept for the most recently used
    :data:`REMEMBERED` of them: checking every page of a large wiki looks up each link target's
    title, and the same targets come up again and again."""

    REMEMBERED = 2_000

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._kept: OrderedDict[str, Entry | None] = OrderedDict()

    def __getitem__(self, path: str) -> Entry:
        if path in self._kept:
            self._kept.move_to_end(path)
            entry = self._kept[path]
        else:
            entry = self._journal.get(path)
            if entry is not None and entry.status != WRITTEN:
                entry = None
            self._kept[path] = entry
            if len(self._kept) > self.REMEMBERED:
                self._kept.popitem(last=False)
        if entry is None:
            raise KeyError(path)
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(())  # only looked up, never listed

    def __len__(self) -> int:
        return 1  # truthy: page_of uses it


def build_index(journal: Journal, wiki: Wiki) -> IndexReport:
    by_collection: dict[str, list[tuple[str, Link]]] = defaultdict(list)
    by_topic: dict[str, list[Link]] = defaultdict(list)
    review: list[Link] = []  # flagged pages, their reasons as the link's
    catalog: list[CatalogRecord] = []
    rewritten = pages = 0
    written = _Written(journal)
    for chunk in _chunked(journal.pages(), 500):
        links = journal.links_of([entry.path for entry in chunk])
        for entry in chunk:
            if entry.status != WRITTEN or not entry.page or entry.result is None:
                continue
            pages += 1
            page = page_of(journal, entry, written, links)
            if wiki.write_if_changed(entry.page, render_page(page)):
                rewritten += 1
            catalog.append(catalog_record(page, entry.collection))
            # In the index a link's reason is the page in one line (its description).
            link = Link(entry.page, page.title, page.one_line)
            by_collection[entry.collection].append((entry.path, link))
            if entry.result.get("flags"):
                flags = ", ".join(Verdict.of(entry.result["flags"]).reasons)
                review.append(Link(entry.page, link.title, flags))
            for topic in page.topics:  # without the junk the checks leave out
                by_topic[" ".join(topic.split()).lower()].append(link)
    collections = [
        (collection, [link for _, link in sorted(by_collection[collection])])
        for collection in sorted(by_collection)
    ]
    shared = {topic: links for topic, links in by_topic.items() if len(links) > 1}
    topics = [
        (topic, sorted(shared[topic], key=lambda link: link.page))
        for topic in sorted(shared, key=lambda t: (-len(shared[t]), t))
    ]
    review.sort(key=lambda link: link.page)
    wiki.write_if_changed(INDEX_PAGE, render_index(pages, collections, topics, review))
    wiki.write_if_changed(CATALOG_FILE, render_catalog(catalog))
    return IndexReport(pages, len(by_collection), len(shared), rewritten)


def _chunked(entries: Iterable[Entry], size: int) -> Iterator[list[Entry]]:
    chunk: list[Entry] = []
    for entry in entries:
        chunk.append(entry)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def unfinished(wiki_root: Path, store: StateStore) -> list[str] | None:
    """What an earlier run left undone that only an index build finishes, in words: ``index.md``
    or ``catalog.jsonl`` missing, or pages the journal has as written missing from disk (the
    build writes them again from their journaled answers, asking no model). ``None`` when the
    journal has no written page (a new wiki, which its first run builds). Reads only."""
    if not store.has_state():
        return None
    root = wiki_root.resolve()
    with Journal(store) as journal:
        pages = list(journal.written_pages())
    if not pages:
        return None
    files = (INDEX_PAGE, CATALOG_FILE)
    found = [f"{name} is missing" for name in files if not (root / name).is_file()]
    missing = sum(1 for page in pages if not os.path.isfile(root / page))
    if missing:
        found.append(f"{missing} of {len(pages)} written pages are missing")
    return found


def index_wiki(wiki_root: Path, store: StateStore | None = None) -> IndexReport:
    """Rebuild ``index.md`` and bring every page's links and backlinks up to date."""
    wiki = Wiki(wiki_root)
    store = store or StateStore(wiki.state_dir)
    with Journal(store) as journal, store.page_writes():
        return build_index(journal, wiki)
