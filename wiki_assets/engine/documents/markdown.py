"""What the engine reads of a document's Markdown structure, defined once for every reader (the
link candidates' one-line summary, the compact request's citable lines, extractive pages)."""

from __future__ import annotations

import re

HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
"""The start of an ATX heading line (``## Setup``), indented at most three spaces (CommonMark)."""

SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
"""The space after a sentence's closing mark, Latin or CJK: split prose on it for sentences."""

_TABLE_DELIMITER = re.compile(r"^[\s|:-]*-[\s|:-]*$")  # |---|:--:| (and nothing else)


def row_said(line: str, previous: str) -> str | None:
    """A Markdown table row (``| a | b |``: the readers of spreadsheets, Word and HWP tables
    write them, and wiki exports have them) as a sentence says it: ``| 한도 | 1박 18만 원 |`` is
    "한도: 1박 18만 원", a row of more cells has them joined by " · ". A table's first row
    (``previous`` is no row: it is the header) and a delimiter row (``|---|---|``) say nothing:
    "". None for a line that is no table row."""
    cells = _cells(line)
    if cells is None:
        return None
    if _TABLE_DELIMITER.match(line) or _cells(previous) is None:
        return ""
    said = [cell for cell in cells if cell]
    return ": ".join(said) if len(said) == 2 else " · ".join(said)


def _cells(line: str) -> list[str] | None:
    stripped = line.strip()
    if len(stripped) < 3 or stripped[0] != "|" or stripped[-1] != "|":
        return None
    return [cell.strip() for cell in stripped[1:-1].split("|")]
