"""Text and links written into the wiki's markdown as data, never markup: :func:`escape` for
every title, collection name and word a model wrote, wherever it is shown (a page, the index, the
digest), so the same text renders the same everywhere; :func:`link_to` for a relative link that
Obsidian resolves like a wikilink and any viewer follows."""

from __future__ import annotations

import functools
import posixpath
from urllib.parse import quote

from wiki_assets.engine.wiki.record import Link

__all__ = ["escape", "link_to", "relative_path"]


def escape(text: str, *, block: bool = False) -> str:
    """``text`` as literal markdown: HTML neutralised (``&``, ``<``, ``>``) and no line that could
    open or close front matter (``---``). Inline text (the default) is folded onto one line;
    ``block`` keeps the lines of a paragraph such as a summary."""
    if not block:  # (most calls: one line, no generator)
        line = " ".join(text.split())
        return "\\---" if line == "---" else _html(line)
    return "\n".join(
        "\\---" if line.strip() == "---" else _html(line) for line in text.splitlines()
    )


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def relative_path(page: str, folder: str) -> str:
    """``posixpath.relpath(page, folder)`` for two paths relative to the wiki root, without the
    ``os.getcwd()`` call relpath makes for each (rendering a page computes a dozen of these)."""
    target = posixpath.normpath(page).split("/")
    start = [part for part in posixpath.normpath(folder or ".").split("/") if part != "."]
    common = 0
    while common < min(len(target), len(start)) and target[common] == start[common]:
        common += 1
    return "/".join([".."] * (len(start) - common) + target[common:]) or "."


def link_to(from_page: str, link: Link) -> str:
    """A relative markdown link, which Obsidian resolves like a wikilink and any viewer follows.
    Backslashes and brackets in the title are escaped so that they cannot end the link text."""
    # Backslashes first: a title ending in one would otherwise escape the closing bracket.
    title = escape(link.title.replace("\\", "\\\\")).replace("[", "\\[").replace("]", "\\]")
    return f"[{title}]({_href(link.page, posixpath.dirname(from_page))})"


@functools.lru_cache(maxsize=4096)
def _href(page: str, folder: str) -> str:
    """The quoted relative path to ``page`` from ``folder``: pages of a folder link to the same
    pages again and again (related links one way, backlinks the other)."""
    return quote(relative_path(page, folder))
