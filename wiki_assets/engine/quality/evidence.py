"""Is a key point's evidence in its document, and does it say what the point says?

A point cites its evidence as a quote (the document's words, copied) and/or a line range (the
numbers the prompt showed; the whole document's numbers, also when it was summarized in parts).
Verification is always against the original document's text:

1. The quote is looked for in the normalised document (any case, spacing, bullets or markup,
   across line breaks, on word boundaries; a Korean quote may stop before a word's ending).
   Where it stands fixes the lines the page shows. A quote too short to locate anything (a
   word or two) counts as no quote.
2. Without a quote that is found, a cited range of at most :data:`MAX_CITED_LINES` lines that
   exists in the document is the evidence (a small model copies inexactly but cites well).
3. The point must agree with the evidence's lines: at least :data:`AGREEMENT` of the point's
   content units occur there, and every number in the point does. A real quote under an invented
   claim is not a verified point.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from wiki_assets.engine.documents.lines import document_lines
from wiki_assets.engine.prompting.page import KeyPoint, key_point
from wiki_assets.engine.quality.units import normalize, units_and_numbers
from wiki_assets.engine.text.scripts import HANGUL

__all__ = ["AGREEMENT", "MAX_CITED_LINES", "PointCheck", "Source", "Status", "verify_points"]

MAX_CITED_LINES = 6  # a wider range would "support" any claim about the document
AGREEMENT = 0.5  # share of the point's content units its evidence must contain
_MIN_QUOTE_CHARS = 8  # normalised; shorter quotes ("20 days") occur everywhere


class Status(StrEnum):
    """What became of a point's evidence. The values are journaled and shown; never rename."""

    VERIFIED = "verified"  # found, and it says what the point says
    NOT_FOUND = "not_found"  # the quote is not in the document and no cited lines exist
    DISAGREES = "disagrees"  # the evidence is there but says something else
    NO_EVIDENCE = "no_evidence"  # the model cited nothing
    UNCHECKED = "unchecked"  # journaled before evidence was checked


_STATUS = {status.value: status for status in Status}  # a journaled value -> its status
_EXPLAINED = {
    Status.VERIFIED: "",
    Status.NOT_FOUND: "not found in the document",
    Status.DISAGREES: "the cited text says something else",
    Status.NO_EVIDENCE: "no evidence given",
    Status.UNCHECKED: "not checked",
}


@dataclass(frozen=True, slots=True)
class PointCheck:
    """One key point as its page shows it: the text, the verdict on its evidence, and the
    document's lines the evidence stands on (first, last; ``None`` when nothing was found)."""

    text: str
    status: Status
    lines: tuple[int, int] | None = None
    where: str | None = None  # the page, slide or sheet of those lines, where the format has them

    @property
    def verified(self) -> bool:
        return self.status is Status.VERIFIED

    @property
    def reference(self) -> str:
        """``line 12`` or ``lines 12–14`` (``page 3, line 12`` where the format has pages);
        empty without lines."""
        if self.lines is None:
            return ""
        first, last = self.lines
        lines = f"line {first}" if first == last else f"lines {first}\u2013{last}"
        return f"{self.where}, {lines}" if self.where else lines

    @property
    def explanation(self) -> str:
        """Why an unverified point is not shown as fact, for the page."""
        return _EXPLAINED[self.status]

    def to_json(self) -> dict[str, Any]:
        """The form journaled in a page's result (read back by :meth:`from_json`)."""
        found = list(self.lines) if self.lines else []
        return {"text": self.text, "status": self.status.value, "found": found}

    @classmethod
    def from_json(cls, value: Any) -> PointCheck | None:
        """A journaled point: this class's JSON, a draft's key point (not yet checked), or a
        plain string (results journaled before evidence existed). ``None``: nothing usable."""
        point = key_point(value)
        if point is None:
            return None
        status = value.get("status") if isinstance(value, dict) else None
        found = value.get("found") if isinstance(value, dict) else None
        lines = None
        if isinstance(found, list) and len(found) == 2 and all(isinstance(n, int) for n in found):
            lines = (found[0], found[1])
        where = value.get("where") if isinstance(value, dict) else None
        return cls(
            point["text"],
            _STATUS.get(status, Status.UNCHECKED) if isinstance(status, str) else Status.UNCHECKED,
            lines,
            where if isinstance(where, str) else None,
        )


class Source:
    """A document's text, normalised once to check any number of points against it (and, as
    :class:`~.passages.DocumentUnits`, any number of sentences)."""

    def __init__(self, text: str) -> None:
        self.raw_lines = document_lines(text)  # as written (the prose's rules quote them)
        self.line_count = len(self.raw_lines)
        self.line_numbers: list[int] = []  # each kept line's number
        self._lines: list[str] = []  # each kept line, normalised
        self._by_number: dict[int, str] = {}
        # One string, lines joined by a space, so a quote may run across a line break; each
        # line's offset in it maps a match back to line numbers.
        self._starts: list[int] = []
        offset = 1
        for number, line in enumerate(self.raw_lines, start=1):
            said = normalize(line)
            if not said:
                continue  # blank lines part no passage
            self.line_numbers.append(number)
            self._lines.append(said)
            self._by_number[number] = said
            self._starts.append(offset)
            offset += len(said) + 1
        self._joined = " " + " ".join(self._lines) + " "

    def find(self, quote: str, near: tuple[int, int] | None = None) -> tuple[int, int] | None:
        """The lines (first, last) where the normalised ``quote`` stands, preferring a match
        that overlaps ``near``; ``None`` if it is not in the document."""
        # On word boundaries, except after a Hangul syllable: a quote may leave off the particle
        # or ending Korean attaches to its last word (승인 for 승인합니다).
        needle = f" {quote}" if HANGUL.match(quote[-1:]) else f" {quote} "
        found: list[tuple[int, int]] = []
        start = self._joined.find(needle)
        while start >= 0:
            first = self._line_at(start + 1)
            last = self._line_at(start + len(quote))
            if near is None or (first <= near[1] and last >= near[0]):
                return first, last
            found.append((first, last))
            start = self._joined.find(needle, start + 1)
        return found[0] if found else None

    def text_of(self, first: int, last: int) -> str:
        """The normalised text of lines ``first`` to ``last``."""
        if first == last:  # (most citations: one line, a normalised one or none)
            return self._by_number.get(first, "")
        return " ".join(self._by_number.get(n, "") for n in range(first, last + 1)).strip()

    def _line_at(self, offset: int) -> int:
        return self.line_numbers[bisect.bisect_right(self._starts, offset) - 1]

    def cited(self, lines: Sequence[int]) -> tuple[int, int] | None:
        """A cited range, if it is one the document has and narrow enough to mean something."""
        if not lines:
            return None
        first, last = lines[0], lines[-1]
        if first > last or last > self.line_count or last - first >= MAX_CITED_LINES:
            return None
        # Some line of it has words (the kept lines are those with words).
        if first == last:  # (most citations: one line)
            return (first, last) if first in self._by_number else None
        return (first, last) if any(n in self._by_number for n in range(first, last + 1)) else None


def agrees(point: str, evidence: str) -> bool:
    """Whether normalised ``evidence`` says what normalised ``point`` says (module docstring)."""
    units, stated = units_and_numbers(point)
    if not units:
        return False
    found, given = units_and_numbers(evidence)
    return stated <= given and len(units & found) >= AGREEMENT * len(units)


def verify(point: KeyPoint, source: Source) -> PointCheck:
    """The verdict on one point's evidence (the module docstring says how)."""
    quote = normalize(point["quote"])
    cited = source.cited(point["lines"])
    found = source.find(quote, cited) if len(quote) >= _MIN_QUOTE_CHARS else None
    evidence = found or cited
    if evidence is None:
        missing = not quote and not point["lines"]
        return PointCheck(point["text"], Status.NO_EVIDENCE if missing else Status.NOT_FOUND)
    said = agrees(normalize(point["text"]), source.text_of(*evidence))
    return PointCheck(point["text"], Status.VERIFIED if said else Status.DISAGREES, evidence)


def verify_points(points: Iterable[KeyPoint], document: str | Source) -> tuple[PointCheck, ...]:
    """Every point of a draft checked against its document's full original text (or the
    :class:`Source` read from it, where the caller has one)."""
    source = document if isinstance(document, Source) else Source(document)
    return tuple(verify(point, source) for point in points)
