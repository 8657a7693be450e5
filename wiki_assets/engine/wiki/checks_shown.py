"""How a page shows its checks: after each sentence of its prose, what the document says to it
(:func:`sentence_mark`); above the prose, a note when most of it is unchecked or none of it is in
the document; the key points verified apart from the others; and the label of a page that shows
the document's own words instead of the model's answer. A reader sees how far to trust each line
where the line is."""

from __future__ import annotations

from collections.abc import Sequence

from wiki_assets.engine.documents.language import language_code
from wiki_assets.engine.quality.evidence import PointCheck
from wiki_assets.engine.quality.sentences import SentenceCheck, Support
from wiki_assets.engine.wiki.escaping import escape
from wiki_assets.engine.wiki.record import Page

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


def key_points(points: Sequence[PointCheck]) -> list[str]:
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
