"""An extractive page: what a document says of itself, for a page whose answer was flagged.

With the ``flagged_pages`` dial at ``extract``, a flagged answer is not published: its page shows
the document's own title, its headings and its opening sentences instead, labelled as not
summarized. Nothing here is a model's: every word is the document's, so nothing needs checking.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from wiki_assets.engine.documents.markdown import FIELD, row_said
from wiki_assets.engine.text.sentences import SENTENCE_END, SENTENCE_MARKS

__all__ = ["OPENING_SENTENCES", "Extract", "extract", "opening"]

OPENING_SENTENCES = 3  # sentences of the document's opening the page shows
OPENING_CHARS = 600  # at most this much of them (a "sentence" without a stop can be a page long)
MAX_HEADINGS = 20

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_STRONG = re.compile(r"\*\*|__")  # bold marks: a sentence cut between a pair would leave one open
# A line of at most this many words with no punctuation at its end stands alone, even in a
# paragraph: a heading of a PDF, a slide or plain text ("Scope", "훈련 일정"), not a wrapped line.
_LABEL_WORDS = 5


@dataclass(frozen=True, slots=True)
class Extract:
    headings: tuple[str, ...]  # the document's headings after its title, in order
    opening: str  # its first sentences, from the first paragraphs of prose


def extract(text: str, title: str) -> Extract:
    """The headings (Markdown ``#`` headings, but the one that is ``title``; in a document
    without any, such as a PDF's or a plain text's, its short lines of their own with no
    punctuation) and the opening sentences of ``text``: the first :data:`OPENING_SENTENCES`
    sentences of its prose (not headings, front matter or code), cut at :data:`OPENING_CHARS`.

    The prose is read as paragraphs, list items and table rows, each on its own. What ends
    without a closing mark (a label, a heading of plain text, a list's fragment) is left out of
    the opening, and so is a byline (a first paragraph that opens with a field, "Owner: …
    Updated …", "담당: … / 최종 수정: …"); only a document with nothing else opens with them."""
    headings: list[str] = []
    plain: list[str] = []  # the headings of a document without Markdown ones ("Scope", "SEV1")
    opening = _Opening()
    pieces = _pieces(_without_front_matter(text.splitlines()), title)
    for index, (kind, piece) in enumerate(pieces):
        if kind in ("heading", "label"):
            found = headings if kind == "heading" else plain
            if len(found) < MAX_HEADINGS:
                found.append(piece)
        else:
            opening.take(index, kind, piece)
    return Extract(tuple(headings or plain), opening.text())


def opening(text: str, title: str) -> str:
    """:func:`extract`'s opening alone: the document is read only as far as its opening goes (the
    line a page is listed by needs no headings)."""
    taken = _Opening()
    for index, (kind, piece) in enumerate(_pieces(_without_front_matter(text.splitlines()), title)):
        if taken.gathered >= OPENING_CHARS:
            break  # no later piece is taken
        if kind not in ("heading", "label"):
            taken.take(index, kind, piece)
    return taken.text()


class _Opening:
    """The opening's pieces as the document's pieces come: enough once it holds
    :data:`OPENING_CHARS`, whatever they are."""

    __slots__ = ("gathered", "others", "sentences")

    def __init__(self) -> None:
        self.sentences: list[str] = []  # pieces that end as a sentence does
        # Pieces that do not: the opening only of a document without sentences.
        self.others: list[str] = []
        self.gathered = 0  # characters of the sentences so far

    def take(self, index: int, kind: str, piece: str) -> None:
        """A piece of prose (``index``: its place among the document's pieces)."""
        if self.gathered >= OPENING_CHARS or (kind == "byline" and index == 0):
            return
        if piece.endswith(SENTENCE_MARKS):
            self.sentences.append(piece)
            self.gathered += len(piece) + 1
        elif len(self.others) < OPENING_SENTENCES:
            self.others.append(piece)

    def text(self) -> str:
        return _opening(" ".join(self.sentences or self.others))


def _pieces(lines: list[str], title: str) -> Iterator[tuple[str, str]]:
    """``lines`` as (kind, text): ``heading`` (a Markdown heading but the title), ``label`` (a
    short line of its own without punctuation: a heading of plain text), ``row`` (a table's row
    as a sentence), ``prose`` (a paragraph's lines joined, a list item, a field on a line of its
    own) and ``byline`` (a paragraph that opens with a field: the byline, if it is
    the document's first)."""
    paragraph: list[str] = []

    def said() -> Iterator[tuple[str, str]]:
        if paragraph:
            joined = " ".join(paragraph)
            yield ("byline" if FIELD.match(joined) else "prose"), joined
            paragraph.clear()

    in_code = False
    previous = ""
    for number, line in enumerate(lines):
        previous, row = line, row_said(line, previous)
        if _FENCE.match(line):
            in_code = not in_code
            yield from said()
            continue
        heading = _HEADING.match(line) if not in_code else None
        stripped = _STRONG.sub("", line).strip()
        if in_code or not stripped or heading or row is not None or _LIST_ITEM.match(line):
            yield from said()  # a paragraph ends here
        if heading:
            name = heading.group(2).strip()
            if not (number == 0 or name == title):
                yield "heading", name
        elif in_code or row == "" or stripped == title or not stripped:
            continue  # a title given as a plain first line is already the page's title
        elif row:  # a table's row: its own sentence (a period where it ends without one)
            if row.split(": ", 1)[-1] != title:  # a sheet's "Title | …" row
                yield "row", row if row.endswith(SENTENCE_MARKS) else f"{row}."
        elif _LIST_ITEM.match(stripped):
            yield "prose", _LIST_ITEM.sub("", stripped, count=1)
        elif _stands_alone(stripped):  # ends the paragraph before it, as a heading does
            yield from said()
            yield ("prose" if ":" in stripped else "label"), stripped  # "Severity: SEV1"
        else:
            paragraph.append(stripped)
    yield from said()


def _stands_alone(line: str) -> bool:
    return len(line.split()) <= _LABEL_WORDS and line[-1].isalnum()


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
