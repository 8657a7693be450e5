"""What the engine reads of a document's Markdown structure, defined once for every reader (the
link candidates' one-line summary, the compact request's citable lines, extractive pages), and
the one line that says what a document is."""

from __future__ import annotations

import re

from wiki_assets.engine.text.sentences import SENTENCE_END

HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
"""The start of an ATX heading line (``## Setup``), indented at most three spaces (CommonMark)."""

LINE_MAX = 160
"""Longest line that says what a document is (a link candidate's, a page's in the index)."""
LINE_MIN = 30
"""A first sentence shorter than this ("Q.", a greeting) is joined with the next one."""

FIELD = re.compile(r"^[\W_]*[^\W\d_][\w .()/'-]{0,28}?[\W_]*[:：]\s")
"""A line that opens with a short field's label ("Owner: …", "담당: …", "Last updated: …"):
metadata, not what a document says (its Markdown emphasis taken off first)."""

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


def first_sentences(prose: str) -> str:
    """The first sentence of ``prose`` (one line, its spaces single), joined with the next ones
    while shorter than :data:`LINE_MIN`, cut at a word within :data:`LINE_MAX`."""
    sentences = SENTENCE_END.split(prose)
    line = sentences[0]
    for more in sentences[1:]:
        if len(line) >= LINE_MIN:
            break
        line = f"{line} {more}"
    return clip(line)


def clip(line: str) -> str:
    """``line`` within :data:`LINE_MAX` characters: cut at a word (past half of it), with "…"."""
    if len(line) <= LINE_MAX:
        return line
    cut = line[: LINE_MAX - 1]
    space = cut.rfind(" ")
    if space > LINE_MAX // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"
