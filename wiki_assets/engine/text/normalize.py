"""Text normalised for comparing: NFKC, lower case, what is not a letter, mark or number a space,
whitespace collapsed.

The link index compares documents by the grams of their normalised text, and the quality checks
match a quote, a sentence or a name in its document by it, whatever its case, spacing, bullets,
markup or full-width forms.
"""

from __future__ import annotations

import re
import unicodedata

from wiki_assets.engine.text.scripts import HANGUL_SYLLABLES

__all__ = ["normalize", "wordless"]


class _Separators(dict[int, int]):
    """``str.translate`` table: characters that are not letters, marks or numbers become spaces.

    Filled lazily, one entry per distinct character ever met, so lookups after the first run in C.
    """

    def __missing__(self, codepoint: int) -> int:
        kept = unicodedata.category(chr(codepoint))[0] in "LMN"
        value = codepoint if kept else 0x20
        self[codepoint] = value
        return value


_SEPARATORS = _Separators()
# Its ASCII half as a bytes table: ``bytes.translate`` maps ASCII text byte by byte by index,
# where the dict is looked up character by character (most texts compared are ASCII).
_ASCII_SEPARATORS = bytes(_SEPARATORS[code] if code < 0x80 else 0x20 for code in range(256))
# The separators most other texts have beside ASCII and Hangul: general punctuation (dashes,
# quotes, bullets), currency signs and the middle dot. A text of those alone has for words the
# runs of ASCII letters and digits (lower case by then) and of syllables, found in C.
_COMMON_SEPARATORS = "".join(
    chr(code)
    for code in (*range(0x2000, 0x2070), *range(0x20A0, 0x20D0), 0xB7)
    if _SEPARATORS[code] == 0x20
)
_BEYOND_COMMON = re.compile(f"[^\x00-\x7f{HANGUL_SYLLABLES}{re.escape(_COMMON_SEPARATORS)}]")
_COMMON_WORD = re.compile(f"[0-9a-z{HANGUL_SYLLABLES}]+")


def normalize(text: str) -> str:
    """NFKC, lowercase, every character that is not a letter, mark or number becomes a space, and
    runs of whitespace collapse to one space."""
    text = unicodedata.normalize("NFKC", text).lower()
    if text.isascii():
        return " ".join(text.encode("ascii").translate(_ASCII_SEPARATORS).decode("ascii").split())
    if _BEYOND_COMMON.search(text) is None:
        return " ".join(_COMMON_WORD.findall(text))
    return " ".join(text.translate(_SEPARATORS).split())


def wordless(text: str) -> bool:
    """Whether ``text`` has no letter and no number ("-", "…", "—"; what :func:`normalize`
    leaves nothing of): a description or summary of that is none (the checks flag it missing, a
    page shows nothing), and a sentence of that is none to check."""
    return not any(map(str.isalnum, text))  # stops at the first letter: most texts start so
