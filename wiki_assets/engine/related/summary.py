"""One line describing a document: its first meaningful sentence, for a list of link candidates."""

from __future__ import annotations

import re

from wiki_assets.engine.documents.markdown import (
    FIELD,
    HEADING_LINE,
    LINE_MAX,
    LINE_MIN,
    clip,
    first_sentences,
    row_said,
)
from wiki_assets.engine.related.grams import MAX_CHARS
from wiki_assets.engine.text.normalize import normalize
from wiki_assets.engine.text.sentences import SENTENCE_END, SENTENCE_MARKS

__all__ = ["LINE_MAX", "LINE_MIN", "summary_line"]

_LIST = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|>|\|)")
_RULE = re.compile(r"^\s*(?:[-*_=]\s*){3,}$")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`]+")


def _plain(line: str) -> str:
    line = _LINK.sub(r"\1", line)
    line = _MARKUP.sub("", line)
    line = re.sub(r"^\s*(?:#{1,6}|[-*+]|\d+[.)]|>+)\s+", "", line)
    return " ".join(line.split())


def _is_sentence_like(line: str) -> bool:
    return (
        line.endswith(SENTENCE_MARKS)
        or bool(SENTENCE_END.search(line))
        or (len(line.split()) >= 8)
    )


def summary_line(text: str, title: str = "") -> str:
    """The first meaningful sentence of ``text``, at most :data:`LINE_MAX` characters.

    Headings, lists, quotes, tables, rules and short ``Key: value`` metadata lines
    (``Owner: ...``, ``담당: ...``) are passed over in favour of the first prose line, whose first
    sentence is returned (joined with the next while shorter than :data:`LINE_MIN`). Falls back
    to the first non-empty line (a table's first row after its header, as
    :func:`~wiki_assets.engine.documents.markdown.row_said` says it), then to ``title``.
    """
    title_key = normalize(title)
    fallback = ""
    previous = ""
    for raw in text[:MAX_CHARS].splitlines():
        previous, row = raw, row_said(raw, previous)
        if not raw.strip() or _RULE.match(raw):
            continue
        if row is not None:  # a table's: its first row that is not its header nor the title
            if row and not (title_key and normalize(row).endswith(title_key)):
                fallback = fallback or _plain(row)
            continue
        plain = _plain(raw)
        if not plain:
            continue
        if not fallback and normalize(plain) != title_key and not HEADING_LINE.match(raw):
            fallback = plain
        if HEADING_LINE.match(raw) or _LIST.match(raw) or FIELD.match(_MARKUP.sub("", raw)):
            continue
        if normalize(plain) == title_key or not _is_sentence_like(plain):
            continue
        return first_sentences(plain)
    return clip(fallback or " ".join(title.split()))
