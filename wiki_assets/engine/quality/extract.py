"""An extractive page: what a document says of itself, for a page whose answer was flagged.

With the ``flagged_pages`` dial at ``extract``, a flagged answer is not published: its page shows
the document's own title, its headings and its opening sentences instead, labelled as not
summarized. Nothing here is a model's: every word is the document's, so nothing needs checking.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wiki_assets.engine.documents.markdown import SENTENCE_END, row_said

__all__ = ["OPENING_SENTENCES", "Extract", "extract"]

OPENING_SENTENCES = 3  # sentences of the document's opening the page shows
OPENING_CHARS = 600  # at most this much of them (a "sentence" without a stop can be a page long)
MAX_HEADINGS = 20

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_MARKS = (".", "!", "?", "。", "！", "？")  # SENTENCE_END's
# A sentence ends at . ! ? (or their full-width forms) followed by a space or the end.


@dataclass(frozen=True, slots=True)
class Extract:
    headings: tuple[str, ...]  # the document's headings after its title, in order
    opening: str  # its first sentences, from the first paragraph of prose


def extract(text: str, title: str) -> Extract:
    """The headings (Markdown ``#`` headings, but the one that is ``title``) and the opening
    sentences of ``text``: the first :data:`OPENING_SENTENCES` sentences of its prose (not
    headings, front matter or code), cut at :data:`OPENING_CHARS`."""
    headings: list[str] = []
    prose: list[str] = []
    gathered = 0  # characters of prose so far: enough for the opening, whatever its lines
    in_code = False
    previous = ""
    for number, line in enumerate(_without_front_matter(text.splitlines())):
        previous, row = line, row_said(line, previous)
        if _FENCE.match(line):
            in_code = not in_code
            continue
        heading = _HEADING.match(line) if not in_code else None
        if heading:
            name = heading.group(2).strip()
            if not (number == 0 or name == title) and len(headings) < MAX_HEADINGS:
                headings.append(name)
            continue
        stripped = line.strip()
        if in_code or (not prose and stripped == title) or row == "":
            continue  # a title given as a plain first line is already the page's title
        if row:  # a table's row: its own sentence (a period where it ends without one)
            stripped = row if row.endswith(_SENTENCE_MARKS) else f"{row}."
        if stripped and gathered < OPENING_CHARS:
            prose.append(stripped)
            gathered += len(stripped) + 1
    return Extract(tuple(headings), _opening(" ".join(prose)))


def _without_front_matter(lines: list[str]) -> list[str]:
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:], start=1):
            if line.strip() == "---":
                return lines[index + 1 :]
    return lines


def _opening(prose: str) -> str:
    sentences = SENTENCE_END.split(" ".join(prose.split()))
    opening = " ".join(sentences[:OPENING_SENTENCES])
    if len(opening) > OPENING_CHARS:
        opening = opening[:OPENING_CHARS].rsplit(" ", 1)[0] + " …"
    return opening
