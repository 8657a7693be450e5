"""Links between pages: related links and backlinks from the journal, and the dangling-link check.

A page's related links (its model's, and its links by meaning:
:mod:`~wiki_assets.engine.state.meaning_links`) and backlinks come from the journal's link table,
and a link is rendered
only when its target has a page, so no link ever dangles: when a run adds, changes or removes
pages, the pages that link to them (and the pages they link to, whose backlinks changed) are
rendered again from the journal (:func:`relink`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from urllib.parse import unquote

from wiki_assets.engine.quality.sentences import SentenceCheck
from wiki_assets.engine.state.journal import WRITTEN, Entry, Journal
from wiki_assets.engine.wiki.files import DIGEST_DIR, STATE_DIR, Wiki
from wiki_assets.engine.wiki.record import Link, Page
from wiki_assets.engine.wiki.render import render_page

Links = tuple[Mapping[str, list[tuple[str, str]]], Mapping[str, list[str]], Mapping[str, list[str]]]
"""What :meth:`Journal.links_of` returns: the model's links from each path (target, reason), the
links to it, its links by meaning."""


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


def page_of(
    journal: Journal,
    entry: Entry,
    landing: Mapping[str, Entry] | None = None,
    links: Links | None = None,
) -> Page:
    """The page of ``entry`` with links to every page that exists, or is ``landing`` in the same
    write (path -> entry: pages written together may link to each other). ``links``: what
    :meth:`Journal.links_of` returned for a batch that includes ``entry``."""
    if links is None:
        links = journal.links_of([entry.path])
    links_from, links_to = links[0].get(entry.path, []), links[1].get(entry.path, [])
    related = [_link(journal, target, reason, landing) for target, reason in links_from]
    backlinks = [_link(journal, source, "", landing) for source in links_to]
    by_meaning = [_link(journal, target, "", landing) for target in links[2].get(entry.path, [])]
    return Page.of(
        entry,
        [link for link in related if link],
        [link for link in backlinks if link],
        [link for link in by_meaning if link],
    )


def page_text(
    journal: Journal,
    entry: Entry,
    landing: Mapping[str, Entry] | None = None,
    links: Links | None = None,
) -> str:
    """The rendered :func:`page_of` ``entry``."""
    return render_page(page_of(journal, entry, landing, links))


def page_texts(
    journal: Journal,
    entries: Iterable[Entry],
    landing: Mapping[str, Entry],
    links: Links,
    prose: dict[str, tuple[SentenceCheck, ...]],
) -> Iterator[tuple[str, str]]:
    """(page, text) of each of ``entries`` that has a page, as :func:`page_text` renders it (a
    flush's batch: ``landing`` and ``links`` as there); ``prose`` gets each one's prose as the
    page shows it, decoded once for the page and its history event."""
    for entry in entries:
        if entry.page:
            page = page_of(journal, entry, landing, links)
            prose[entry.path] = page.prose
            yield entry.page, render_page(page)


def neighbours(journal: Journal, paths: Iterable[str], links: Links | None = None) -> set[str]:
    """Documents whose pages show a link to or from ``paths``. ``links``: what
    :meth:`Journal.links_of` returned for a batch that includes every path (then no query)."""
    paths = list(paths)
    if links is None:
        links = journal.links_of(paths)
    found: set[str] = set()
    for path in paths:
        found.update(target for target, _ in links[0].get(path, ()))
        found.update(links[1].get(path, ()))
        found.update(links[2].get(path, ()))
    return found


def relink(journal: Journal, wiki: Wiki, paths: Iterable[str]) -> int:
    """Render the pages of ``paths`` again where their text changed; returns how many."""
    rewritten = 0
    for path in sorted(set(paths)):
        entry = journal.get(path)
        if entry is None or entry.status != WRITTEN or not entry.page or entry.result is None:
            continue
        if wiki.write_if_changed(entry.page, page_text(journal, entry)):
            rewritten += 1
    return rewritten


# A link's closing bracket is one no backslash escapes (link text escapes its own brackets and
# backslashes), so a title such as "see [a](b.md)" is not taken for a link.
MARKDOWN_LINK = re.compile(r"(?<!\\)(?:\\\\)*\]\(([^)\s]+\.md)\)")


def dangling_links(wiki_root: Path) -> list[tuple[str, str]]:
    """(page, target) for every relative markdown link whose target page does not exist. A
    digest is a dated record: its links to pages removed since are left out."""
    root = wiki_root.resolve()
    found = []
    exists: dict[str, bool] = {}  # one check per distinct target file
    for page in sorted(root.rglob("*.md")):
        relative = page.relative_to(root)
        if STATE_DIR in relative.parts or relative.parts[0] == DIGEST_DIR:
            continue
        folder = str(page.parent)
        for target in MARKDOWN_LINK.findall(page.read_text(encoding="utf-8")):
            file = os.path.normpath(os.path.join(folder, unquote(target)))
            if file not in exists:
                exists[file] = os.path.isfile(file)
            if not exists[file]:
                found.append((page.relative_to(root).as_posix(), target))
    return found
