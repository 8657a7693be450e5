"""Which script a text's letters are in: the Hangul classes, and a letter's Unicode script.

**Hangul syllables** (U+AC00–U+D7A3, 가 to 힣) are what Korean words are written in, and what
every check that takes a Korean word apart matches (:data:`HANGUL`, :data:`HANGUL_WORD`). The
jamo, Hangul's single letters (U+1100–U+11FF conjoining, U+3130–U+318F compatibility: ㄱ, ㅋㅋ),
are left out of them on purpose: the checks compare NFKC-normalised text
(:func:`~wiki_assets.engine.text.normalize.normalize`), which composes a word spelt in jamo into
its syllables, so what stays a jamo is a lone letter (ㅋㅋ, ㅠㅠ), no word to take apart.

**Hangul letters**, syllables and jamo alike (:data:`HANGUL_LETTERS`), are what telling a text's
language counts (:func:`hangul_letters`): it reads raw text, where a document saved decomposed
(NFD, as a Mac's file may be) spells every syllable in two or three jamo, and is still Korean.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = [
    "HANGUL",
    "HANGUL_JAMO",
    "HANGUL_LETTERS",
    "HANGUL_SYLLABLES",
    "HANGUL_WORD",
    "hangul_letters",
    "letter_script",
    "letters",
    "script_of",
]

HANGUL_SYLLABLES = "\uac00-\ud7a3"
"""The Hangul syllables as the inside of a regex class (``[...]``), for a pattern that takes
them with other characters (a topic's letters, a figure's unit)."""
HANGUL_JAMO = "\u1100-\u11ff\u3130-\u318f"
"""Hangul's single letters, conjoining and compatibility jamo, inside a regex class."""
HANGUL_LETTERS = HANGUL_SYLLABLES + HANGUL_JAMO
"""Every Hangul letter, syllables and jamo, inside a regex class: what tells a language."""

HANGUL = re.compile(f"[{HANGUL_SYLLABLES}]")
"""One Hangul syllable."""
HANGUL_WORD = re.compile(f"[{HANGUL_SYLLABLES}]+")
"""A run of Hangul syllables: a Korean word as a text spells it, with its particle (휴가는), or
the Korean part of a token that mixes scripts (``휴가는2일``)."""

_NOT_HANGUL_LETTERS = re.compile(f"[^{HANGUL_LETTERS}]+")


def hangul_letters(text: str) -> int:
    """How many characters of ``text`` are Hangul letters, syllables or jamo (what is left once
    the rest is taken out: no list of one-letter matches is built)."""
    return len(_NOT_HANGUL_LETTERS.sub("", text))


_ASCII_NOT_LETTERS = bytes(code for code in range(0x80) if not chr(code).isalpha())


def letters(text: str) -> int:
    """How many characters of ``text`` are letters (``str.isalpha``): an ASCII text is counted
    by its bytes without the others, in C, not letter by letter."""
    if text.isascii():
        return len(text.encode("ascii").translate(None, _ASCII_NOT_LETTERS))
    return sum(map(str.isalpha, text))  # counted in C: True is 1


def letter_script(letter: str) -> str:
    """The Unicode script of one letter, as the first word of its name (``LATIN``, ``HANGUL``,
    ``CJK``, ``HIRAGANA``...)."""
    return unicodedata.name(letter, "? ?").split(" ", 1)[0]


@functools.lru_cache(maxsize=1 << 16)
def script_of(text: str) -> str:
    """The Unicode script of the first letter of ``text`` (a gram, a word), or ``""`` for a
    text without letters (digits)."""
    for ch in text:
        if ch.isalpha():
            return letter_script(ch)
    return ""
