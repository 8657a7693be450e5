"""A document's lines as its line numbers count them, and the numbered text a model is shown, so
that a key point can cite the lines it stands on."""

from __future__ import annotations

import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NUMBERED = "{number}| {line}"


def document_lines(text: str) -> list[str]:
    """The lines of a document as its line numbers count them (``\\n``, ``\\r\\n`` or ``\\r``
    end a line; not the other separators ``str.splitlines`` knows, which editors do not show)."""
    return _LINE_BREAK.split(text)


def number_lines(text: str) -> str:
    """``text`` as the model sees it: each non-blank line prefixed with its number (``12| ``).
    Blank lines are left out (they cost tokens and cite nothing) but keep their numbers, so the
    numbers are the document's own; number the whole text before splitting it into parts."""
    return "\n".join(
        _NUMBERED.format(number=number, line=line)
        for number, line in enumerate(document_lines(text), start=1)
        if line.strip()
    )
