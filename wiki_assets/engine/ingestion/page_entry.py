"""What the journal keeps of a model's answer, and its page is rendered from: the draft with its
key points as checked (:func:`result`), an extractive page in place of a flagged answer
(:func:`extractive`, the ``extract`` dial) or of a compact answer without prose (:func:`picked`),
and how two answers for one document rank (:func:`rank`, for a second opinion; a judged one:
:func:`rank_judged`).
"""

from __future__ import annotations

from typing import Any

from wiki_assets.engine.documents.reader import DocumentText
from wiki_assets.engine.prompting.prompts import PROMPT_VERSION
from wiki_assets.engine.prompting.results import Summary
from wiki_assets.engine.quality import Assessment
from wiki_assets.engine.quality.extractive_page import extract, opening
from wiki_assets.engine.quality.sentences import ProseCheck, opening_line, quotable
from wiki_assets.engine.verification.verdicts import JudgedPage
from wiki_assets.engine.wiki.record import now_iso

Rank = tuple[bool, int, int]


def rank(assessment: Assessment) -> Rank:
    """How two answers for one document compare: not flagged beats flagged, then more verified
    points, then fewer reasons."""
    verdict = assessment.verdict
    return verdict.ok, assessment.verified, -len(verdict.reasons)


def rank_judged(judged: JudgedPage) -> Rank:
    """How an answer that a judge's verdicts changed ranks against a second opinion, as
    :func:`rank` ranks it."""
    points = (judged.entry.result or {}).get("key_points") or []
    verified = sum(1 for p in points if isinstance(p, dict) and p.get("status") == "verified")
    return not judged.flags_after, verified, -len(judged.flags_after)


def extractive(
    title: str, text: str, language: str, summary: Summary, assessment: Assessment
) -> dict[str, Any]:
    """The result of a flagged answer replaced by an extractive page (the ``extract`` dial):
    the document's title, headings and opening sentences, marked ``summarized: False``. The
    answer's figures and flags stay (Needs review still says why); its words, points, topics
    and links are dropped."""
    taken = extract(text, title)
    fields = result(title, language, summary, assessment)
    fields.update(
        description="", summary=taken.opening, topics=[], related=[], key_points=[],
        summarized=False, headings=list(taken.headings), prose=[],
    )  # fmt: skip
    return fields


def picked(
    title: str, text: str, language: str, summary: Summary, assessment: Assessment
) -> dict[str, Any]:
    """The result of a compact answer without prose (a language the model does not write): an
    extractive page whose key points are the lines the model picked, checked, with its links;
    marked ``summarized: False`` and ``picked: True`` (the page says the model chose them)."""
    fields = extractive(title, text, language, summary, assessment)
    fields.update(
        key_points=assessment.result_fields()["key_points"],
        related=[link.model_dump() for link in summary.draft.related],
        picked=True,
    )
    return fields


def result(title: str, language: str, summary: Summary, assessment: Assessment) -> dict[str, Any]:
    """What the journal keeps of an answer, and the page is rendered from: the draft, with its
    key points as checked against the document and the page's flags (``assessment``)."""
    draft = summary.draft
    return {
        "title": title,
        "description": draft.description,
        "summary": draft.summary,
        "topics": draft.topics,
        "related": [link.model_dump() for link in draft.related],
        "language": language,
        "parts": summary.parts,
        "model": summary.model,
        "prompt_version": PROMPT_VERSION,
        "generated": now_iso(),
        "prompt_tokens": summary.prompt_tokens,
        "completion_tokens": summary.completion_tokens,
        "finish_reason": summary.finish_reason,
        **assessment.result_fields(),  # key_points (checked) and flags
    }


def with_opening(fields: dict[str, Any], prose: ProseCheck, text: str, title: str) -> None:
    """The document's opening sentence kept beside an answer nothing of whose description may
    be quoted (:func:`~wiki_assets.engine.quality.sentences.quotable`; ``prose``: its sentences
    as checked): the index and the digest list the page by it, saying so."""
    if not quotable(str(fields.get("description") or ""), prose.sentences):
        fields["opening"] = opening_line(opening(text, title))


def from_source(fields: dict[str, Any], source: DocumentText | None, original: str) -> None:
    """What a page keeps of its document's text, beside the answer: the link to the original
    file (relative to the page); for an extracted document the extractor and the text's hash (a
    new extractor version redoes the page only if the text changed), where that text is kept,
    and for each key point the page, slide or sheet its lines are on."""
    fields["original"] = original
    if source is None or source.extractor is None:
        return
    fields["extractor"] = source.extractor
    fields["text_hash"] = source.text_hash
    if source.ocr:
        fields["ocr"] = True
    for point in fields.get("key_points", []):
        found = point.get("found") if isinstance(point, dict) else None
        where = source.where(found[0]) if found else None
        if where is not None:
            point["where"] = where
