"""Text as the quality checks compare it: normalised, and as content units.

Normalisation is :func:`~wiki_assets.engine.text.normalize.normalize` (NFKC, lower case,
punctuation and markup become spaces, whitespace collapsed), so a quote matches whatever its
case, spacing, bullets or full-width forms. Content units make "the point and its evidence say
the same thing" countable in any script: a Latin word is cut to a short stem (``employees`` and
``employee`` agree), a number is kept whole (a changed number is a changed fact), and a Hangul
word becomes its character bigrams, since Korean attaches particles to words (``휴가는``,
``휴가를``).
"""

from __future__ import annotations

import functools
import re

from wiki_assets.engine.text.normalize import normalize as _normalize
from wiki_assets.engine.text.scripts import HANGUL_WORD

__all__ = ["content_units", "normalize", "numbers", "units_and_numbers", "units_within"]

_STEM = 5  # letters of a Latin word that count: "accrue", "accrues" and "accrued" agree
_DIGITS = re.compile(r"\d+")
_STOPWORDS = frozenset(
    "a an and are as at be been but by can do does for from has have how in into is it its may "
    "must no not of on or our should so than that the their them then there these they this to "
    "up was we were what when where which who will with you your also each all any per".split()
)
# Bigrams of Korean verb endings and particles: in nearly every sentence, so they prove nothing.
_STOP_BIGRAMS = frozenset(
    "니다 합니 습니 입니 됩니 있습 없습 세요 하세 주세 "
    "에서 으로 하는 하고 있는 되는 이다 한다".split()
)


def normalize(text: str) -> str:
    """:func:`~wiki_assets.engine.text.normalize.normalize`, remembered: the checks normalise a
    page's title, its sentences and the words around a name again and again, and its whole
    document three times (the prose's rules, prompt_echo, copies_opening)."""
    return _normalize_short(text) if len(text) <= _SHORT else _normalize_long(text)


_SHORT = 300  # characters: a title, a sentence, a line
_normalize_short = functools.lru_cache(maxsize=8192)(_normalize)
# A document: too big to keep many, and one page's checks are done before the next page's.
_normalize_long = functools.lru_cache(maxsize=2)(_normalize)


def numbers(normalized: str) -> set[str]:
    """The numbers in a normalised text, leading zeros dropped (``05`` is ``5``)."""
    if normalized.replace(" ", "").isalpha():
        return set()  # letters alone (most words and many texts): no digit to look for
    found = _DIGITS.findall(normalized)
    return {number.lstrip("0") or "0" for number in found} if found else set()


def content_units(normalized: str) -> set[str]:
    """What a normalised text says, as comparable units (see the module docstring)."""
    return _read(normalized)[0]


def units_within(normalized: str, allowed: frozenset[str]) -> bool:
    """Whether each content unit of a normalised text is one of ``allowed``: told word by word
    (a text's units are its words' together), to the first word with one that is not (most
    texts compared so have one early, and the rest of their units are never worked out)."""
    return all(_read(token)[0] <= allowed for token in normalized.split())


def units_and_numbers(normalized: str) -> tuple[frozenset[str], frozenset[str]]:
    """:func:`content_units` and :func:`numbers` of a normalised text, remembered for short
    texts: a document's lines come back page after page (boilerplate, a template's headings),
    and each is compared with several sentences and key points."""
    if len(normalized) <= _SHORT:
        return _units_and_numbers(normalized)
    units, found = _read(normalized)
    return frozenset(units), frozenset(found)


@functools.lru_cache(maxsize=8192)
def _units_and_numbers(normalized: str) -> tuple[frozenset[str], frozenset[str]]:
    units, found = _read(normalized)
    return frozenset(units), frozenset(found)


def _read(normalized: str) -> tuple[set[str], set[str]]:
    """(content units, numbers) of a normalised text, in one pass over its words: a number is
    a unit too, and no run of digits spans a space, so each word's numbers are the text's."""
    # A loop into two sets (no generator): the checks ask this of every sentence and line.
    units: set[str] = set()
    found: set[str] = set()
    for token in normalized.split():
        if token.isascii():
            if token.isalpha():
                # Most tokens: a plain Latin word has no number and no Hangul to take out.
                if len(token) >= 3 and token not in _STOPWORDS:
                    units.add(token[:_STEM])
                continue
            if token.isdigit():
                number = token.lstrip("0") or "0"  # a number alone: no word left beside it
                units.add(number)
                found.add(number)
                continue
        letters = token.isalpha()  # (a word of letters alone, Hangul or not, has no digit)
        if not letters:
            of_token = numbers(token)
            units.update(of_token)
            found.update(of_token)
        hanguls = HANGUL_WORD.findall(token)
        for hangul in hanguls:
            units.update(
                bigram
                for bigram in (hangul[i : i + 2] for i in range(len(hangul) - 1))
                if bigram not in _STOP_BIGRAMS
            )
        if hanguls and len(hanguls[0]) == len(token):
            continue  # a Korean word alone (most tokens of a Korean text): nothing besides it
        word = HANGUL_WORD.sub("", token) if hanguls else token
        if not letters:
            word = _DIGITS.sub("", word)
        if len(word) >= 3 and word not in _STOPWORDS:
            units.add(word[:_STEM])
    return units, found
