"""The wiki as a whole: links between pages, backlinks, and ``index.md``.

A page's related links and backlinks come from the journal's link table, and a link is rendered
only when its target has a page, so no link ever dangles: when a run adds, changes or removes
pages, the pages that link to them (and the pages they link to, whose backlinks changed) are
rendered again from the journal. ``build_index`` rewrites ``index.md`` and re-renders every page
that differs from what the journal says, which also repairs a wiki edited by hand.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from wiki_assets.engine.journal import WRITTEN, Entry, Journal
from wiki_assets.engine.store import StateStore
from wiki_assets.engine.wiki import STATE_DIR, Link, Wiki, link_to, render_page

INDEX_PAGE = "index.md"


def _link(
    journal: Journal, path: str, reason: str = "", landing: Mapping[str, Entry] | None = None
) -> Link | None:
    # A page landing in the same write is taken from memory: no query, no result JSON parsed
    # again just for its title (in a first run, every link points at a page of the same flush).
    entry = landing.get(path) if landing else None
    if entry is None:
        entry = journal.get(path)
        if entry is None or entry.status != WRITTEN:
            return None
    if not entry.page or entry.result is None:
        return None
    return Link(entry.page, entry.result["title"], reason)


def page_text(
    journal: Journal,
    entry: Entry,
    landing: Mapping[str, Entry] | None = None,
    links: tuple[Mapping[str, list[tuple[str, str]]], Mapping[str, list[str]]] | None = None,
) -> str:
    """The page of ``entry`` with links to every page that exists, or is ``landing`` in the same
    write (path -> entry: pages written together may link to each other). ``links``: what
    :meth:`Journal.links_of` returned for a batch that includes ``entry``."""
    assert entry.page is not None and entry.result is not None
    if links is None:
        links_from, links_to = journal.links_from(entry.path), journal.links_to(entry.path)
    else:
        links_from, links_to = links[0].get(entry.path, []), links[1].get(entry.path, [])
    related = [_link(journal, target, reason, landing) for target, reason in links_from]
    backlinks = [_link(journal, source, "", landing) for source in links_to]
    return render_page(
        entry.page,
        entry.path,
        entry.content_hash,
        entry.result,
        [link for link in related if link],
        [link for link in backlinks if link],
    )


def neighbours(journal: Journal, paths: Iterable[str]) -> set[str]:
    """Documents whose pages show a link to or from ``paths``."""
    found: set[str] = set()
    for path in paths:
        found.update(target for target, _ in journal.links_from(path))
        found.update(journal.links_to(path))
    return found


def relink(journal: Journal, wiki: Wiki, paths: Iterable[str]) -> int:
    """Render the pages of ``paths`` again where their text changed; returns how many."""
    rewritten = 0
    for path in sorted(set(paths)):
        entry = journal.get(path)
        if entry is None or entry.status != WRITTEN or not entry.page or entry.result is None:
            continue
        if _write_if_changed(wiki, entry.page, page_text(journal, entry)):
            rewritten += 1
    return rewritten


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
        return 1  # truthy: page_text uses it


def build_index(journal: Journal, wiki: Wiki) -> IndexReport:
    by_collection: dict[str, list[tuple[str, Link]]] = defaultdict(list)
    by_topic: dict[str, list[Link]] = defaultdict(list)
    rewritten = pages = 0
    written = _Written(journal)
    for chunk in _chunked(journal.pages(), 500):
        links = journal.links_of([entry.path for entry in chunk])
        for entry in chunk:
            if entry.status != WRITTEN or not entry.page or entry.result is None:
                continue
            pages += 1
            if _write_if_changed(wiki, entry.page, page_text(journal, entry, written, links)):
                rewritten += 1
            link = Link(entry.page, entry.result["title"], entry.result.get("description", ""))
            by_collection[entry.collection].append((entry.path, link))
            for topic in entry.result.get("topics", []):
                by_topic[" ".join(topic.split()).lower()].append(link)
    lines = [
        "# Wiki index",
        "",
        f"{pages} pages in {len(by_collection)} collections.",
        "",
        "## By collection",
        "",
    ]
    for collection in sorted(by_collection):
        entries = sorted(by_collection[collection])
        lines += [f"### {collection} ({len(entries)})", ""]
        for _, link in entries:
            description = f" — {_plain(link.reason)}" if link.reason else ""
            lines.append(f"- {link_to(INDEX_PAGE, link)}{description}")
        lines.append("")
    shared = {topic: links for topic, links in by_topic.items() if len(links) > 1}
    lines += ["## By topic", ""]
    for topic in sorted(shared, key=lambda t: (-len(shared[t]), t)):
        links = sorted(shared[topic], key=lambda link: link.page)
        lines += [f"### {_plain(topic)} ({len(links)})", ""]
        lines += [f"- {link_to(INDEX_PAGE, link)}" for link in links] + [""]
    if not shared:
        lines += ["No topic is shared by two pages yet.", ""]
    _write_if_changed(wiki, INDEX_PAGE, "\n".join(lines))
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


def _plain(text: str) -> str:
    return " ".join(text.split()).replace("<", "&lt;").replace(">", "&gt;")


def _write_if_changed(wiki: Wiki, page: str, text: str) -> bool:
    target = wiki.resolve(page)
    try:
        current = target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if current == text:
        return False
    wiki.write(page, text)
    return True


_MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


def index_wiki(wiki_root: Path, store: StateStore | None = None) -> IndexReport:
    """Rebuild ``index.md`` and bring every page's links and backlinks up to date."""
    wiki = Wiki(wiki_root)
    store = store or StateStore(wiki.state_dir)
    with Journal(store) as journal, store.page_writes():
        return build_index(journal, wiki)


def dangling_links(wiki_root: Path) -> list[tuple[str, str]]:
    """(page, target) for every relative markdown link whose target page does not exist."""
    root = wiki_root.resolve()
    found = []
    exists: dict[str, bool] = {}  # one check per distinct target file
    for page in sorted(root.rglob("*.md")):
        if STATE_DIR in page.relative_to(root).parts:
            continue
        folder = str(page.parent)
        for target in _MARKDOWN_LINK.findall(page.read_text(encoding="utf-8")):
            file = os.path.normpath(os.path.join(folder, unquote(target)))
            if file not in exists:
                exists[file] = os.path.isfile(file)
            if not exists[file]:
                found.append((page.relative_to(root).as_posix(), target))
    return found
