"""The page and ``index.md`` templates.

Titles, collection names and everything a model wrote are data, never markup: each goes through
:func:`~.escaping.escape` wherever it is shown. Front matter values are JSON-quoted besides, which
is valid YAML and cannot break out of the front matter. How a page shows its checks (the marks
after its sentences, its notes) is :mod:`.checks_shown`'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from wiki_assets.engine.documents.language import language_code
from wiki_assets.engine.quality.sentences import DESCRIPTION, SUMMARY
from wiki_assets.engine.quality.verdict import Reason
from wiki_assets.engine.wiki.checks_shown import (
    checked_prose,
    key_points,
    mostly_unchecked,
    not_summarized_line,
    unchecked_note,
    ungrounded_note,
)
from wiki_assets.engine.wiki.escaping import escape, link_to
from wiki_assets.engine.wiki.files import INDEX_PAGE
from wiki_assets.engine.wiki.record import Link, Page

LAYOUT_VERSION = "2026-12-06.2"
"""The layout of the wiki's files: its pages, ``index.md`` and ``catalog.jsonl``. Bump it whenever
what they show of the same journaled answers changes: the next run, or the schedule's next tick,
then rebuilds them from the journal and asks no model (it is ``wiki_index``'s code version)."""


BY_MEANING = {"en": "close in meaning", "ko": "의미가 가까운 문서"}
"""How a page marks a link by meaning (one its model did not choose), in the page's language
(English for a language not listed)."""


_FRONT_VALUE = json.JSONEncoder(ensure_ascii=False).encode
"""A front matter value as JSON: one encoder for every value (``json.dumps`` with an argument
builds a new one per call, a page has twenty values)."""
_FRONT_STRING: Callable[[str], str] = json.encoder.encode_basestring
"""A string as that encoder writes it, without the encoder's dispatch (most values are strings)."""


def _front_value(value: object) -> str:
    if isinstance(value, str):
        return _FRONT_STRING(value)
    if type(value) is int:  # (not a bool) as JSON writes it, without the encoder
        return int.__repr__(value)
    if type(value) is bool:
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return f"[{', '.join(map(_FRONT_STRING, value))}]"
    return _FRONT_VALUE(value)


def render_page(page: Page) -> str:
    """Markdown with YAML front matter."""
    title = escape(page.title)
    # Escaped in front matter too: viewers show it and tools read it like the body.
    description = escape(page.description)
    tags = [tag for tag in (_tag(topic) for topic in page.topics) if tag]
    front = {
        "title": title,
        "description": description,
        "source": page.source,
        "source_hash": page.source_hash,
        "model": page.model,
        "prompt_version": page.prompt_version,
        "generated": page.generated,
        "language": page.language,
        "parts": page.parts,
        "prompt_tokens": page.prompt_tokens,
        "completion_tokens": page.completion_tokens,
        "hit_max_tokens": page.hit_max_tokens,
        "points_verified": page.verified_points,
        "points_total": len(page.key_points),
        "verdict": page.verdict.label if page.verdict else "unchecked",
        "flags": list(page.verdict.reasons) if page.verdict else [],
        "summarized": page.summarized,
        **({"extracted_by": page.extractor} if page.extractor else {}),
        **({"ocr": True} if page.ocr else {}),
        "tags": tags,
        "related": [link.page for link in page.related],
        # Only when it has some: the pages of a wiki without them render as they did.
        **({"related_by_meaning": [link.page for link in page.by_meaning]}
           if page.by_meaning else {}),
    }  # fmt: skip
    lines = ["---"]
    lines += [f"{key}: {_front_value(value)}" for key, value in front.items()]
    lines += ["---", "", f"# {title}", ""]
    if description:
        lines += [f"> {checked_prose(page.description, page.prose, DESCRIPTION, inline=True)}", ""]
    if page.parts > 1:
        lines += [f"*Summarized from the whole document in {page.parts} parts.*", ""]
    if not page.summarized:
        lines += [not_summarized_line(page), ""]
    elif page.verdict and not page.verdict.ok:
        said = "; ".join(escape(reason) for reason in page.verdict.explanations())
        lines += [f"> [!warning] Needs review: {said}.", ""]
        if Reason.UNGROUNDED_SUMMARY in page.verdict.reasons:
            lines += [ungrounded_note(page.language), ""]
    elif page.hit_max_tokens:
        lines += ["> [!warning] The model hit the max_tokens limit on this page.", ""]
    ungrounded = page.verdict is not None and Reason.UNGROUNDED_SUMMARY in page.verdict.reasons
    if page.summarized and mostly_unchecked(page.prose) and not ungrounded:  # that note says so
        lines += [unchecked_note(page.prose, page.language), ""]
    if page.summary:
        lines += [checked_prose(page.summary, page.prose, SUMMARY), ""]
    lines += key_points(page.key_points)
    if page.headings:
        lines += ["## Headings", ""]
        lines += [f"- {escape(heading)}" for heading in page.headings] + [""]
    if tags:
        lines += ["## Topics", "", " ".join(f"#{tag}" for tag in tags), ""]
    if page.related or page.by_meaning:
        lines += ["## Related", ""]
        for link in page.related:
            reason = f" — {escape(link.reason)}" if link.reason else ""
            lines.append(f"- {link_to(page.name, link)}{reason}")
        marked = BY_MEANING.get(language_code(page.language), BY_MEANING["en"])
        lines += [f"- {link_to(page.name, link)} — *{marked}*" for link in page.by_meaning]
        lines.append("")
    if page.backlinks:
        lines += ["## Backlinks", ""]
        lines += [f"- {link_to(page.name, link)}" for link in page.backlinks] + [""]
    shown = page.source.replace("`", "'")
    read = " · *text read by OCR from its pictures: it may hold misread words*" if page.ocr else ""
    if page.original and not set("<>\n").intersection(page.original):
        # In angle brackets: a file name may hold spaces. Outside the wiki, so never a page.
        lines += [f"*Source:* [`{shown}`](<{page.original}>){read}", ""]
    else:
        lines += [f"*Source:* `{shown}`{read}", ""]
    return "\n".join(lines)


def render_index(
    pages: int,
    collections: Sequence[tuple[str, Sequence[Link]]],
    topics: Sequence[tuple[str, Sequence[Link]]],
    review: Sequence[Link] = (),
) -> str:
    """``index.md``: the pages that need review first (a link's ``reason`` is the page's flags),
    then every page by collection (a link's ``reason`` is the page in one line,
    :attr:`~wiki_assets.engine.wiki.record.Page.one_line`), then the topics two or more pages
    share, each in the order given."""
    counts = f"{pages} pages in {len(collections)} collections."
    if review:
        counts += f" {len(review)} need review."
    lines = ["# Wiki index", "", counts, ""]
    if review:
        lines += ["## Needs review", ""]
        for link in review:
            lines.append(f"- {link_to(INDEX_PAGE, link)} — {escape(link.reason)}")
        lines.append("")
    lines += ["## By collection", ""]
    for collection, links in collections:
        lines += [f"### {escape(collection)} ({len(links)})", ""]
        for link in links:
            description = f" — {escape(link.reason)}" if link.reason else ""
            lines.append(f"- {link_to(INDEX_PAGE, link)}{description}")
        lines.append("")
    lines += ["## By topic", ""]
    for topic, links in topics:
        lines += [f"### {escape(topic)} ({len(links)})", ""]
        lines += [f"- {link_to(INDEX_PAGE, link)}" for link in links] + [""]
    if not topics:
        lines += ["No topic is shared by two pages yet.", ""]
    return "\n".join(lines)


_TAG_JUNK = re.compile(r"[^\w/-]+")


def _tag(topic: str) -> str:
    """An Obsidian tag: no spaces or punctuation, not only digits."""
    tag = re.sub(r"-{2,}", "-", _TAG_JUNK.sub("", "-".join(topic.split()))).strip("-/")
    return "" if not tag or tag.isdigit() else tag[:40]
