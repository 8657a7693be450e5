"""A page's prose as sentences, each with what its document says to it: the types the rules
(:mod:`.claims`), a judge (:mod:`wiki_assets.engine.verification`), the page, the catalog and
the digest share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from wiki_assets.engine.documents.markdown import first_sentences
from wiki_assets.engine.text.normalize import wordless
from wiki_assets.engine.text.sentences import SENTENCE_END

__all__ = [
    "DESCRIPTION",
    "NOTHING_CHECKED",
    "OPENS",
    "RULES",
    "SUMMARY",
    "ProseCheck",
    "SentenceCheck",
    "Support",
    "opening_line",
    "page_line",
    "prose_sentences",
    "quotable",
]

DESCRIPTION = "description"
SUMMARY = "summary"
RULES = "rules"  # who checked a sentence, when no judge did


class Support(StrEnum):
    """What the document says to a sentence. The values are journaled and shown: never rename."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    UNCHECKED = "unchecked"


_SUPPORT = {status.value: status for status in Support}  # a journaled value -> its status


@dataclass(frozen=True, slots=True)
class SentenceCheck:
    """One sentence of the description (``part`` ``description``) or the summary, its status,
    the document's lines it stands on or that say otherwise, what the document says instead
    (``document_says``, for a contradicted one; why, for an unsupported one) and who checked it
    (``rules``, or the judging model's name)."""

    text: str
    part: str
    status: Support
    lines: tuple[int, int] | None = None
    document_says: str = ""
    checked_by: str = RULES
    # The document's own words (a sentence of it, or a run of one): quotable without a judge.
    quoted: bool = False

    @property
    def reference(self) -> str:
        if self.lines is None:
            return ""
        first, last = self.lines
        return f"line {first}" if first == last else f"lines {first}\u2013{last}"

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "part": self.part,
            "status": self.status.value,
            "lines": list(self.lines) if self.lines else None,
            "document_says": self.document_says or None,
            "checked_by": self.checked_by,
            "quoted": self.quoted,
        }

    @classmethod
    def from_json(cls, value: Any) -> SentenceCheck | None:
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return None
        lines = value.get("lines")
        found = None
        if isinstance(lines, list) and len(lines) == 2 and all(isinstance(n, int) for n in lines):
            found = (lines[0], lines[1])
        status = str(value.get("status"))
        return cls(
            value["text"],
            _part(value),
            _SUPPORT.get(status, Support.UNCHECKED),
            found,
            str(value.get("document_says") or ""),
            str(value.get("checked_by") or RULES),
            value.get("quoted") is True,
        )


@dataclass(frozen=True, slots=True)
class ProseCheck:
    """The sentences of a page's prose, each checked."""

    sentences: tuple[SentenceCheck, ...] = ()

    def count(self, status: Support) -> int:
        return sum(1 for sentence in self.sentences if sentence.status is status)

    @property
    def checked(self) -> int:
        """Sentences whose status is known (all but the unchecked)."""
        return len(self.sentences) - self.count(Support.UNCHECKED)

    def unchecked(self) -> list[int]:
        return [i for i, s in enumerate(self.sentences) if s.status is Support.UNCHECKED]

    def to_json(self) -> list[dict[str, Any]]:
        return [sentence.to_json() for sentence in self.sentences]

    @classmethod
    def from_json(cls, value: Any) -> ProseCheck:
        if not isinstance(value, list):
            return cls()
        found = (SentenceCheck.from_json(item) for item in value)
        return cls(tuple(sentence for sentence in found if sentence is not None))


NOTHING_CHECKED = ProseCheck()


def quotable(description: str, checked: Sequence[SentenceCheck]) -> str:
    """What may be quoted of a page's ``description`` (the index, a digest, a bot): its sentences
    that a judge found supported, or that are the document's own words (``quoted``). A sentence
    the rules call supported but that is not a quote stays out: the rules can miss a wrong
    relation between true words, a judge reading the document less so."""
    if wordless(description):  # "-": no description, as the page and the index show it
        return ""
    return " ".join(
        s.text
        for s in checked
        if s.part == DESCRIPTION
        and s.status is Support.SUPPORTED
        and (s.quoted or s.checked_by != RULES)
    )


OPENS = "The document opens: "
"""What the index and the digest say before a page's line where nothing of its description may be
quoted (:func:`quotable`) and the line is the document's own opening."""


def page_line(description: str, checked: Sequence[SentenceCheck], opening: str) -> str:
    """The line that lists a summarized page (the index, the digest): what may be quoted of its
    description, else its document's ``opening`` sentence, saying so (empty where it has none)."""
    said = quotable(description, checked)
    if said:
        return said
    return f"{OPENS}{opening}" if opening else ""


def opening_line(opening: str) -> str:
    """What a list of pages (the index, the digest) shows for a page the model did not summarize:
    the first sentence of its opening, which is the document's own words (an extractive page's
    summary), as a link candidate's line is cut
    (:func:`~wiki_assets.engine.documents.markdown.first_sentences`). Such a page has no
    description, and a blank line in a list tells a reader nothing of the document."""
    prose = " ".join(opening.split())
    return "" if wordless(prose) else first_sentences(prose)


def _part(value: dict[str, Any]) -> str:
    """The part a journaled sentence is of (the summary, where it does not say)."""
    return str(value.get("part") or SUMMARY)


def prose_sentences(description: str, summary: str) -> list[tuple[str, str]]:
    """(part, sentence) of the description and the summary, in order: split at a sentence's
    closing mark or a line break, as the page shows them (a piece with no word, such as a
    dash, is no sentence)."""
    found: list[tuple[str, str]] = []
    for part, text in ((DESCRIPTION, description), (SUMMARY, summary)):
        for line in text.splitlines():
            found += [
                (part, piece.strip()) for piece in SENTENCE_END.split(line) if not wordless(piece)
            ]
    return found
