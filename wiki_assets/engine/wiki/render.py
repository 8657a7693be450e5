"""The page and ``index.md`` templates, and the one escaping function both use.

Titles, collection names and everything a model wrote are data, never markup: each goes through
:func:`escape` wherever it is shown, so the same text renders the same on a page and in the index.
Front matter values are JSON-quoted besides, which is valid YAML and cannot break out of the front
matter.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re
from collections.abc import Callable, Sequence
from urllib.parse import quote

from wiki_assets.engine.documents.language import language_code
from wiki_assets.engine.quality.evidence import PointCheck
from wiki_assets.engine.quality.sentences import DESCRIPTION, SUMMARY, SentenceCheck, Support
from wiki_assets.engine.quality.verdict import Reason
from wiki_assets.engine.wiki.files import INDEX_PAGE
from wiki_assets.engine.wiki.record import Link, Page

LAYOUT_VERSION = "2026-12-06.2"
"""The layout of the wiki's files: its pages, ``index.md`` and ``catalog.jsonl``. Bump it whenever
what they show of the same journaled answers changes: the next run, or the schedule's next tick,
then rebuilds them from the journal and asks no model (it is ``wiki_index``'s code version)."""


BY_MEANING = {"en": "close in meaning", "ko": "의미가 가까운 문서"}
"""How a page marks a link by meaning (one its model did not choose), in the page's language
(English for a language not listed)."""


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
    lines += _key_points(page.key_points)
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


NOT_SUMMARIZED = "Not summarized"


def not_summarized_line(page: Page) -> str:
    """The label of an extractive page: why the model's answer is not shown, and what is."""
    if page.picked:
        return (
            f"> [!note] {NOT_SUMMARIZED}: {escape(page.model)} does not write "
            f"{escape(page.language)}; the key points are the lines of the document it picked, "
            "and the page shows the document's own headings and opening sentences."
        )
    reasons = page.verdict.explanations() if page.verdict else []
    said = "; ".join(escape(reason) for reason in reasons)
    why = f" (needs review: {said})" if said else ""
    return (
        f"> [!warning] {NOT_SUMMARIZED}: the model's answer was flagged{why}, so this page shows "
        "the document's own title, headings and opening sentences."
    )


UNGROUNDED_NOTES = {
    "en": "> [!caution] Unchecked: the description above and the summary below are the model's "
    "own words. None of their sentences could be found in the document; check the source "
    "before relying on them.",
    "ko": "> [!caution] 확인되지 않음: 위의 설명과 아래의 요약은 모델이 쓴 문장입니다. 문서에서 "
    "그 근거를 찾지 못했으니, 믿기 전에 원문을 확인하세요.",
}
"""What a page whose prose is ungrounded (``ungrounded_summary``) says under its description, in its
language (English for a language without a note of its own)."""


def ungrounded_note(language: str) -> str:
    return UNGROUNDED_NOTES.get(language_code(language), UNGROUNDED_NOTES["en"])


UNCHECKED_NOTES = {
    "en": "> [!note] Mostly unchecked: {unchecked} of the {total} sentences below could not be "
    "checked against the document, by rule or by a judge; they are the model's words.",
    "ko": "> [!note] 대부분 확인되지 않음: 아래 {total}개 문장 중 {unchecked}개는 규칙으로도 "
    "검증 모델로도 문서와 대조하지 못했습니다. 모델이 쓴 문장입니다.",
}
"""What a page most of whose prose is unchecked says above its summary, in its language."""


def mostly_unchecked(prose: Sequence[SentenceCheck]) -> bool:
    """More than half of the description's and summary's sentences are unchecked."""
    unchecked = sum(1 for sentence in prose if sentence.status is Support.UNCHECKED)
    return 2 * unchecked > len(prose)


def unchecked_note(prose: Sequence[SentenceCheck], language: str) -> str:
    unchecked = sum(1 for sentence in prose if sentence.status is Support.UNCHECKED)
    note = UNCHECKED_NOTES.get(language_code(language), UNCHECKED_NOTES["en"])
    return note.format(unchecked=unchecked, total=len(prose))


def checked_prose(
    text: str, checked: Sequence[SentenceCheck], part: str, *, inline: bool = False
) -> str:
    """``text`` (the description, or the summary) escaped, each sentence followed by what the
    document says to it (:func:`sentence_mark`): the lines that back it, or that it is
    contradicted (struck through, with what the document says), unsupported or unchecked.
    Without checked sentences (an older page), the text as it is."""
    mine = [sentence for sentence in checked if sentence.part == part]
    if not mine:
        return escape(text, block=not inline)
    shown, cursor = [], 0
    for sentence in mine:
        at = text.find(sentence.text, cursor)
        if at < 0:
            continue
        end = at + len(sentence.text)
        said = escape(sentence.text)
        if sentence.status is Support.CONTRADICTED:
            said = f"~~{said}~~"
        shown += [escape(text[cursor:at], block=not inline), said, f" {sentence_mark(sentence)}"]
        cursor = end
    shown.append(escape(text[cursor:], block=not inline))
    return "".join(shown)


def sentence_mark(sentence: SentenceCheck) -> str:
    """What a page shows after a sentence of its prose: ``*(lines 3–4)*``, ``*(contradicted: the
    document says "30 days", line 3)*``, ``*(unsupported: …)*`` or ``*(unchecked)*``; a judge's
    verdict names the judge."""
    where = sentence.reference
    by = "" if sentence.checked_by == "rules" else f"checked by {escape(sentence.checked_by)}"
    if sentence.status is Support.SUPPORTED:
        said = ", ".join(part for part in (where, by) if part) or "supported"
    elif sentence.status is Support.CONTRADICTED:
        says = escape(sentence.document_says)
        said = "contradicted: the document says" + (f' "{says}"' if says else " otherwise")
        said += "".join(f", {part}" for part in (where, by) if part)
    elif sentence.status is Support.UNSUPPORTED:
        said = "unsupported" + (
            f": {escape(sentence.document_says)}"
            if sentence.document_says
            else ": not in the document"
        )
        said += "".join(f", {part}" for part in (where, by) if part)
    else:
        said = "unchecked"
    return f"*({said})*"


UNVERIFIED_NOTE = (
    "*The model wrote these, but the document does not back them; check the source before "
    "relying on them.*"
)


def _key_points(points: Sequence[PointCheck]) -> list[str]:
    """Verified points under "Key points", each with the document's lines it stands on; the
    others apart, under "Not verified", each with why: never shown as fact."""
    lines = []
    verified = [point for point in points if point.verified]
    if verified:
        lines += ["## Key points", ""]
        lines += [f"- {escape(point.text)} *({point.reference})*" for point in verified] + [""]
    others = [point for point in points if not point.verified]
    if others:
        lines += ["## Not verified", "", UNVERIFIED_NOTE, ""]
        lines += [f"- {escape(point.text)} *({point.explanation})*" for point in others] + [""]
    return lines


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
