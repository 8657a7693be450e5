"""A title or description with markup characters renders the same on its page, in other pages'
links and in index.md, and its links still resolve."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import page_record

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.quality.sentences import OPENS
from wiki_assets.engine.wiki.escaping import escape
from wiki_assets.engine.wiki.files import INDEX_PAGE
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.engine.wiki.links import dangling_links
from wiki_assets.engine.wiki.record import Link, Page
from wiki_assets.engine.wiki.render import render_index, render_page
from wiki_assets.simulator import SimModel, SimServer

TITLE = "R&D <beta> | [draft] \\ Q&A"
DESCRIPTION = "Q&A for <ops> | [on-call] & R&D"


def page(name: str, title: str, description: str, **links: tuple[Link, ...]) -> Page:
    return page_record(name, title=title, description=description, **links)


def link_text(markdown: str, target: str) -> str:
    """The text of the link to ``target`` in ``markdown``, its escapes undone."""
    found = re.search(r"- \[((?:\\.|[^\\\]])*)\]\(" + re.escape(target) + r"\)", markdown)
    assert found, (target, markdown)
    return re.sub(r"\\(.)", r"\1", found.group(1))


def test_page_and_index_escape_a_title_and_description_alike() -> None:
    special = page("c/rd.md", TITLE, DESCRIPTION)
    other = page("c/ops.md", "Ops", "", backlinks=(Link("c/rd.md", TITLE),))
    shown = render_page(special)
    index = render_index(2, [("c", [Link("c/rd.md", TITLE, DESCRIPTION)])], [])

    title, description = escape(TITLE), escape(DESCRIPTION)
    assert title == "R&amp;D &lt;beta&gt; | [draft] \\ Q&amp;A"
    assert f"\n# {title}\n" in shown and f"title: {json.dumps(title)}\n" in shown
    assert f"\n> {description}\n" in shown
    # The index shows the same description the page does (it once left "&" unescaped).
    assert f"](c/rd.md) — {description}\n" in index
    # Link text, here and in other pages, is the page's heading with only its brackets and
    # backslashes escaped for the link syntax.
    assert link_text(index, "c/rd.md") == title
    assert link_text(render_page(other), "rd.md") == title


def test_special_titles_render_alike_and_their_links_resolve(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    (synced / "c").mkdir(parents=True)
    title = "R&D <beta> | [draft] Q&A"
    (synced / "c" / "rd.md").write_text(f"# {title}\n\n" + "Q&A for <ops> & R&D teams. " * 6)
    (synced / "c" / "ops.md").write_text("# Ops handbook\n\n" + "R&D and ops share on-call. " * 6)
    wiki = tmp_path / "wiki"
    with SimServer(SimModel(model="sim")) as server:
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=wiki,
            fleet=Fleet([Endpoint(name="sim", base_url=server.base_url, model="sim")]),
            dials=Dials(flush_seconds=0.2),
        )
    assert report.count == 2 and not report.failed
    index_wiki(wiki)
    index = (wiki / INDEX_PAGE).read_text(encoding="utf-8")
    shown = (wiki / "c" / "rd.md").read_text(encoding="utf-8")
    heading = next(line for line in shown.splitlines() if line.startswith("# "))[2:]
    assert heading == escape(title)
    assert link_text(index, "c/rd.md") == heading
    # The other page links to this one (a related link or a backlink): the same text again.
    assert link_text((wiki / "c" / "ops.md").read_text(encoding="utf-8"), "rd.md") == heading
    # Descriptions too: a page's description line is what index.md shows for it (without what
    # the document says to each sentence after it, on the page) where it quotes the document;
    # else the index shows the document's opening and says so.
    for name in ("c/rd.md", "c/ops.md"):
        description = next(
            line[2:] for line in (wiki / name).read_text(encoding="utf-8").splitlines()
            if line.startswith("> ")
        )  # fmt: skip
        shown_in_index = re.sub(r" \*\((?:unchecked|unsupported|contradicted|line)[^)]*\)\*", "",
                                description)  # fmt: skip
        by_collection = index.split("## By collection", 1)[1]
        listed_as = by_collection.split(f"]({name}) — ", 1)[1].split("\n", 1)[0]
        assert listed_as == shown_in_index or listed_as.startswith(escape(OPENS)), listed_as
    # (Its line under "By collection": a flagged page is listed first under "Needs review", with
    # its reasons.)
    listed = index.split("## By collection", 1)[1]
    assert "&amp;" in listed.split("](c/rd.md) — ", 1)[1].split("\n", 1)[0], "an & in a description"
    assert dangling_links(wiki) == []
    for target in re.findall(r"\]\(([^)\s]+\.md)\)", index):
        assert (wiki / target).is_file(), target


def test_a_title_that_looks_like_a_link_is_not_taken_for_one(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.md").write_text("# A\n")
    text = render_index(1, [("c", [Link("c/a.md", "see [b](b.md) \\")])], [])
    (tmp_path / INDEX_PAGE).write_text(text)
    assert "[see \\[b\\](b.md) \\\\](c/a.md)" in text
    assert dangling_links(tmp_path) == []
    (tmp_path / "c" / "a.md").unlink()
    assert dangling_links(tmp_path) == [(INDEX_PAGE, "c/a.md")]
