"""A page's verdict: ok, or flagged with its reasons.

The reason names are stable: they are journaled, written into front matter, listed in
``index.md`` and become metadata keys, so a name, once released, is never changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Reason", "Verdict"]


class Reason(StrEnum):
    """Why a page needs review, each with what a reader is told (:attr:`explanation`)."""

    HIT_MAX_TOKENS = "hit_max_tokens"
    WRONG_LANGUAGE = "wrong_language"
    PROMPT_ECHO = "prompt_echo"
    COPIES_OPENING = "copies_opening"
    MISSING_TITLE = "missing_title"
    MISSING_DESCRIPTION = "missing_description"
    MISSING_SUMMARY = "missing_summary"
    TITLE_IS_DESCRIPTION = "title_is_description"
    VACUOUS_DESCRIPTION = "vacuous_description"
    PLACEHOLDER_TOPICS = "placeholder_topics"
    JUNK_TOPICS = "junk_topics"
    LINK_WITHOUT_REASON = "link_without_reason"
    UNVERIFIED_POINTS = "unverified_points"
    UNGROUNDED_SUMMARY = "ungrounded_summary"
    CONTRADICTED_PROSE = "contradicted_prose"
    UNSUPPORTED_PROSE = "unsupported_prose"

    @property
    def explanation(self) -> str:
        return _EXPLANATIONS[self]


_EXPLANATIONS = {
    Reason.HIT_MAX_TOKENS: "the model hit the max_tokens limit, so the answer may be cut short",
    Reason.WRONG_LANGUAGE: "the page is not (all) in the language it should be",
    Reason.PROMPT_ECHO: "the page repeats the instructions or the schema the model was given",
    Reason.COPIES_OPENING: "the summary copies the document's opening",
    Reason.MISSING_TITLE: "the page has no title",
    Reason.MISSING_DESCRIPTION: "the page has no description",
    Reason.MISSING_SUMMARY: "the summary says nothing (a few characters, or only numbers)",
    Reason.TITLE_IS_DESCRIPTION: "the description only repeats the title",
    Reason.VACUOUS_DESCRIPTION: "the description says nothing but that this is a document about "
    "its title",
    Reason.PLACEHOLDER_TOPICS: "the topics are placeholders",
    Reason.JUNK_TOPICS: "topics that were sentence fragments or field names are left out",
    Reason.LINK_WITHOUT_REASON: "a related link gives no reason",
    Reason.UNVERIFIED_POINTS: "most key points (or all) could not be verified in the document",
    Reason.UNGROUNDED_SUMMARY: "nothing in the description or the summary could be found in the "
    "document: they are the model's words, unchecked",
    Reason.CONTRADICTED_PROSE: "a sentence of the description or the summary says what the "
    "document says otherwise",
    Reason.UNSUPPORTED_PROSE: "a sentence of the description or the summary is not backed by the "
    "document",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    """``reasons`` in :class:`Reason`'s order, each once; none means ok. A journaled reason this
    version does not know is kept as its name."""

    reasons: tuple[str, ...] = ()

    @classmethod
    def of(cls, reasons: Iterable[str]) -> Verdict:
        given = list(dict.fromkeys(str(reason) for reason in reasons))
        return cls(tuple(sorted(given, key=lambda name: _ORDER.get(name, len(_ORDER)))))

    @property
    def ok(self) -> bool:
        return not self.reasons

    @property
    def label(self) -> str:
        """``ok`` or ``flagged``: the page's front matter ``verdict``."""
        return "ok" if self.ok else "flagged"

    def explanations(self) -> list[str]:
        """What the reader is told for each reason (a name this version does not know as is)."""
        known = Reason._value2member_map_
        return [Reason(name).explanation if name in known else name for name in self.reasons]


_ORDER = {reason.value: index for index, reason in enumerate(Reason)}
"""Each reason's place: a verdict lists its reasons in :class:`Reason`'s order."""
