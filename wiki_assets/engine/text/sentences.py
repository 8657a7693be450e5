"""Where a sentence ends: after its closing mark, Latin or CJK, and the space that follows.

Every reader of prose splits it here: the checks of a page's sentences and of the document's
lines that hold them, the compact request's citable lines, the one line that says what a
document is, an extractive page's opening.
"""

from __future__ import annotations

import re

__all__ = ["SENTENCE_END", "SENTENCE_MARKS", "finished_sentences"]

SENTENCE_MARKS = (".", "!", "?", "。", "！", "？")
"""The marks that close a sentence (for ``str.endswith``: a line that ends so ends its
sentence)."""
# Written as a space whose character before it is a mark (then the rest of the spaces), not as
# spaces after a mark: the same matches, and the search skips from space to space in C where a
# lookbehind first was tried at every character.
SENTENCE_END = re.compile(rf"\s(?<=[{''.join(SENTENCE_MARKS)}]\s)\s*")
"""The space after a sentence's closing mark: split prose on it for sentences."""


def finished_sentences(text: str) -> str:
    """``text`` up to the end of its last finished sentence, or all of it where it finishes none:
    the words after that are a sentence cut short (an answer cut by ``max_tokens``, or at the
    length its schema allows), and a page that shows them states what was never said."""
    text = text.rstrip()
    if text.endswith(SENTENCE_MARKS):
        return text
    ends = [match.start() for match in SENTENCE_END.finditer(text)]
    return text[: ends[-1]] if ends else text
