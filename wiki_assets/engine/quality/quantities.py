"""The facts a sentence states that a rule can compare: amounts, durations, counts, shares,
versions and dates, in English and in Korean.

A :class:`Quantity` is a value and its kind: ``30 days`` and ``30일`` are both 30 of ``day``,
``60 euros``, ``€60`` and ``60유로`` are 60 of ``euro``, ``3만 원`` is 30000 of ``krw``, ``2주``
is 14 of ``day`` (a week is counted in days, so ``two weeks`` written ``14 days`` agrees), and
``2026-03-01``, ``March 1, 2026`` and ``2026년 3월 1일`` are the same ``date``; ``2 pm`` and
``오후 2시`` are the same ``clock`` time (no duration). Full-width digits are read as digits
(NFKC), thousands separators are dropped, and 만/억/천 multiply; an English number word from two
to ninety-nine counts before a unit the rules know (``a seven-minute walk`` is 7 of ``minute``).
A number with no unit the rules know is of the kind ``""`` and agrees with the same number of any
kind.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from wiki_assets.engine.quality.dates import CLOCKS, DATES, read_clock, read_date
from wiki_assets.engine.text.scripts import HANGUL_SYLLABLES

__all__ = ["Quantity", "agrees", "given_instead", "may_state", "quantities", "stated_quantities"]


@dataclass(frozen=True, slots=True)
class Quantity:
    """One stated fact: ``value`` (a number as text, or a date ``2026-03-01`` whose unknown
    parts are ``*``), its ``kind``, and the ``text`` it was written as."""

    value: str
    kind: str
    text: str


def agrees(stated: Quantity, given: Quantity) -> bool:
    """Whether ``given`` (in the document) says what ``stated`` says: the same value, of the
    same kind or one of no kind; a date agrees with one that leaves the year out."""
    if stated.kind == "date" or given.kind == "date":
        if stated.kind != given.kind:
            return False
        return all(
            a == b or "*" in (a, b)
            for a, b in zip(stated.value.split("-"), given.value.split("-"), strict=True)
        )
    return stated.value == given.value and (
        stated.kind == given.kind or "" in (stated.kind, given.kind)
    )


def given_instead(
    quantity: Quantity, lines: Sequence[tuple[int, str]]
) -> tuple[int, Quantity] | None:
    """(line, quantity) of ``quantity``'s kind that ``lines`` (numbered) give in its place:
    the first that does not agree with it."""
    if not quantity.kind or quantity.kind == "year_number":
        return None  # a bare number has no "same kind" to be told apart from
    for number, text in lines:
        for given in quantities(text):
            if given.kind == quantity.kind and not agrees(quantity, given):
                return number, given
    return None


# A unit as written (a word's first letters, lower case; a Korean counter) -> its kind. Weeks
# are days (a factor below), so "2 weeks" and "14 days" agree.
_UNITS = {
    "day": "day", "days": "day", "business": "day", "working": "day", "calendar": "day",
    "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "yr": "year", "yrs": "year",
    "hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour", "h": "hour",
    "minute": "minute", "minutes": "minute", "min": "minute", "mins": "minute",
    "euro": "euro", "euros": "euro", "eur": "euro", "dollar": "usd", "dollars": "usd",
    "usd": "usd", "won": "krw", "krw": "krw", "percent": "percent", "per cent": "percent",
    "%": "percent", "people": "person", "persons": "person", "employees": "person",
    "times": "times", "gb": "gb", "mb": "mb", "tb": "tb", "kg": "kg", "km": "km",
    "일": "day", "영업일": "day", "근무일": "day", "주": "week", "주일": "week",
    "개월": "month", "달": "month", "년": "year", "시간": "hour", "분": "minute",
    "원": "krw", "유로": "euro", "달러": "usd", "퍼센트": "percent", "명": "person",
    "회": "times", "번": "times", "배": "times", "건": "count", "개": "count", "차": "step",
}  # fmt: skip
_FACTOR = {"week": ("day", 7)}
_CURRENCY = {"€": "euro", "$": "usd", "₩": "krw", "£": "gbp"}
_SCALE = {"억": 10**8, "천만": 10**7, "백만": 10**6, "만": 10**4, "천": 10**3}
_NUMBER = re.compile(
    r"(?P<currency>[€$₩£]\s?)?(?P<number>\d{1,3}(?:,\d{3})+|\d+)(?P<decimal>\.\d+)?"
    r"(?P<scale>(?:\s?(?:천만|백만|억|만|천)(?:\s?\d+(?:\.\d+)?\s?(?:천만|백만|억|만|천))*)?)"
    rf"(?P<unit>\s?%|[\s-]?(?:per cent|[a-z]+|[{HANGUL_SYLLABLES}]+))?",
    re.IGNORECASE,
)
_NUMBER_START = re.compile(r"[€$₩£\d]")  # what _NUMBER's first character is
# Number words before a known unit ("a seven-minute walk"): a summary writes 7 for its document's
# seven. Not "one", nor any word without a unit: "one of the", "the two teams" are no claims.
_ONES = "one two three four five six seven eight nine".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUES = {word: n for n, word in enumerate(_ONES + _TEENS, start=1)}
_WORD_VALUES.update({word: 10 * n for n, word in enumerate(_TENS, start=2)})
_WORD_NUMBER = re.compile(  # (alternatives longest first: seventeen before seven)
    rf"\b(?P<number>(?:{'|'.join(_TENS)})(?:[\s-](?:{'|'.join(_ONES)}))?"
    rf"|{'|'.join(sorted(_ONES[1:] + _TEENS, key=len, reverse=True))})"
    r"[\s-](?P<unit>per cent|[a-z]+)\b",
    re.IGNORECASE,
)
# In a lower-cased text, what _WORD_NUMBER needs: found in a fifth of the time _WORD_NUMBER takes.
# The words grouped by their first letter ("t(?:wo|hree|en|...)"): the same matches, and where a
# letter starts one, the search tries that letter's words, not all of them.
_NUMBER_WORDS = _ONES[1:] + _TEENS + _TENS
_WORD_NUMBER_HINT = re.compile(
    "(?:"
    + "|".join(
        f"{first}(?:{'|'.join(word[1:] for word in _NUMBER_WORDS if word[0] == first)})"
        for first in sorted({word[0] for word in _NUMBER_WORDS})
    )
    + r")[\s-]"
)
_KOREAN_UNITS = sorted((unit for unit in _UNITS if not unit.isascii()), key=len, reverse=True)
# The first of them a word starts with (an alternation tries them in order, longest first).
_KOREAN_COUNTER = re.compile("|".join(map(re.escape, _KOREAN_UNITS)))
_ANY_DIGIT = re.compile(r"\d")
_YEAR_ONLY = re.compile(r"^(?:19|20)\d\d$")
# Its word's start told after its first letter (no word character before it), so the search skips
# from "v" to "v" in C: the same matches as a word boundary first.
_VERSION = re.compile(
    r"(?:v(?<!\wv)(?:ersion\s)?|버(?<!\w버)전\s?)(?P<version>\d+(?:\.\d+)+|\d+)", re.IGNORECASE
)


def quantities(text: str) -> list[Quantity]:
    """The quantities ``text`` states, dates first (their numbers are not counted again)."""
    if len(text) > _CACHED_UP_TO:
        return _read(text)
    return list(_read_cached(text))


# A sentence or a line, not a document's lines together: the same lines are read again for
# each sentence they are near, and boilerplate lines come back page after page.
_CACHED_UP_TO = 1000  # characters


# A list's numbering run into prose. It numbers, it counts nothing: the next item's number after
# a comma or a semicolon at the end ("… before closing, 7.", "…; 3) Bus; 4") or after a Korean
# word there ("… 조건하면 2.": Korean puts no bare count after its predicate), a number alone in
# brackets ("(10)"), a number alone ("1."), and the items' numbers of a list run into one
# sentence ("1) Parking; 2) Shuttle Bus").
_NUMBERING = re.compile(
    r"[,;]\s*(\d{1,2})\.?\s*$|(?<=[" + HANGUL_SYLLABLES + r"])\s+(\d{1,2})\.?\s*$|\((\d{1,2})\)"
    r"|^\s*(\d{1,2})\.?\s*$"
)
_ITEM = re.compile(r"(?:^|(?<=[\s;:,]))(\d{1,2})\)")


def stated_quantities(sentence: str) -> list[Quantity]:
    """The quantities ``sentence`` states, but for a list's numbering (a number of no kind)."""
    found = quantities(sentence)
    if not found:  # (most sentences: no numbering to look for)
        return found
    # Looked for only where they may be: an item's number needs its ")", and the rest a "(" or
    # a number at the end (after it a "." and spaces at most).
    items = list(_ITEM.finditer(sentence)) if ")" in sentence else []
    numbering = [m.group(1) for m in items] if len(items) >= 2 else []
    end = sentence.rstrip().removesuffix(".")[-1:]
    for match in _NUMBERING.finditer(sentence) if "(" in sentence or end.isdigit() else ():
        numbering.append(next(group for group in match.groups() if group))
    for number in numbering:
        listed = next((q for q in found if not q.kind and q.text == number), None)
        if listed is not None:
            found.remove(listed)
    return found


@functools.lru_cache(maxsize=4096)
def _read_cached(text: str) -> tuple[Quantity, ...]:
    return tuple(_read(text))


def may_state(text: str) -> bool:
    """Whether ``text`` states a quantity at all: cheaper to ask of every line than quantities."""
    return _ANY_DIGIT.search(text) is not None or bool(_worded(text.lower(), text))


def _read(text: str) -> list[Quantity]:
    text = unicodedata.normalize("NFKC", text)
    lowered = text.lower()  # for the patterns' hints, worked out once
    worded = _worded(lowered, text)
    if not _ANY_DIGIT.search(text):
        return worded  # every pattern below needs a digit: most sentences state no quantity
    found: list[Quantity] = []
    taken = [False] * len(text)
    asked: object = None  # the hint asked last, and its answer: a month's three patterns share one
    holds = True
    for pattern, needs in DATES:
        if needs is not None:
            if needs is not asked:
                asked, holds = needs, needs(text, lowered)
            if not holds:
                continue
        for match in pattern.finditer(text):
            if any(taken[match.start() : match.end()]):
                continue
            date = read_date(match)
            if date is None:
                continue
            found.append(Quantity(date, "date", match.group(0).strip()))
            taken[match.start() : match.end()] = [True] * (match.end() - match.start())
    for pattern, needs in CLOCKS:
        if needs is not None and not needs(text, lowered):
            continue
        for match in pattern.finditer(text):
            clock = read_clock(match)
            if clock is not None and not any(taken[match.start() : match.end()]):
                found.append(Quantity(clock, "clock", match.group(0).strip()))
                taken[match.start() : match.end()] = [True] * (match.end() - match.start())
    # A version needs its "v", "version" or "버전" (IGNORECASE takes no other letter for "v").
    versions = _VERSION.finditer(text) if "v" in lowered or "버전" in text else ()
    for match in versions:
        if not any(taken[match.start() : match.end()]):
            found.append(Quantity(match.group("version"), "version", match.group(0)))
            taken[match.start() : match.end()] = [True] * (match.end() - match.start())
    # Most texts have no date, time or version: then no number is one's part.
    anything_taken = bool(found)
    for match in _numbers(text):
        if anything_taken and any(taken[match.start("number") : match.end("number")]):
            continue
        quantity = _number(match)
        if quantity is not None:
            found.append(quantity)
    return found + worded


def _numbers(text: str) -> Iterator[re.Match[str]]:
    """``_NUMBER.finditer(text)``, the pattern tried only where a number may start (a currency
    sign or a digit): finditer tries it at every character, and most characters are neither."""
    start = _NUMBER_START.search(text)
    while start is not None:
        match = _NUMBER.match(text, start.start())
        if match is None:  # a currency sign before no number
            start = _NUMBER_START.search(text, start.start() + 1)
            continue
        yield match
        start = _NUMBER_START.search(text, match.end())


def _worded(lowered: str, text: str) -> list[Quantity]:
    """The quantities ``text`` (``lowered``: it in lower case) states in number words (most
    texts have none)."""
    if _WORD_NUMBER_HINT.search(lowered) is None:
        return []
    return [q for match in _WORD_NUMBER.finditer(text) if (q := _word_number(match))]


def _word_number(match: re.Match[str]) -> Quantity | None:
    """``seven-minute``: 7 of ``minute``; None where the rules do not know the unit."""
    words = re.split(r"[\s-]", match.group("number").lower())
    value = sum(_WORD_VALUES[word] for word in words)
    kind = _UNITS.get(match.group("unit").lower(), "")
    if not kind:
        return None
    if kind in _FACTOR:
        kind, factor = _FACTOR[kind]
        value *= factor
    return Quantity(str(value), kind, match.group(0))


def _number(match: re.Match[str]) -> Quantity | None:
    currency, number, decimal, scale, unit_written = match.groups()
    digits = number.replace(",", "")
    if not (currency or decimal or scale or unit_written) and len(digits) <= _EXACT_DIGITS:
        # Most numbers: a whole number alone, its text the digits as written (below, the same).
        kind = "year_number" if len(number) == 4 and _YEAR_ONLY.match(number) else ""
        return Quantity(str(int(digits)), kind, number)
    scale = scale.replace(" ", "")
    value: int | Decimal
    if not decimal and not scale and len(digits) <= _EXACT_DIGITS:
        value = int(digits)  # most numbers: a whole number, written as Decimal would write it
    else:
        try:
            value = Decimal(digits + (decimal or ""))
            if scale:
                value = _scaled(value, scale)
        except InvalidOperation:
            return None
    kind = _CURRENCY.get(currency.strip(), "") if currency else ""
    written = unit_written or ""
    unit = written.strip(" -").lower()
    text = match.group(0).strip()
    if unit:
        kind = kind or _unit_kind(unit)
        if not unit.isascii():  # shown without the particle it carries: 30일, not 30일까지
            counter = _counter(unit)
            text = (
                text[: len(text) - len(written.rstrip())]
                + written[: len(written) - len(unit) + len(counter)]
            )
        elif kind == "":
            text = text[: len(text) - len(written)]  # an unknown word is not part of it
    if kind in _FACTOR:
        kind, factor = _FACTOR[kind]
        value *= factor
    text = text.strip()
    if not kind and len(number) == 4 and _YEAR_ONLY.match(number):
        kind = "year_number"  # "in 2026": a year, not an amount
    normal = str(value) if isinstance(value, int) else format(value.normalize(), "f")
    return Quantity(normal, kind, text)


# Digits of a whole number read as an int: Decimal's context (28 digits) rounds a longer one,
# times the factor of a week, and the value is to be the same either way.
_EXACT_DIGITS = 20


def _scaled(value: Decimal, scale: str) -> Decimal:
    """``3`` and ``만`` is 30000; ``1`` and ``억2천만`` is 120000000 (each scale word multiplies
    the number before it; a run of them adds up, largest first)."""
    total = Decimal(0)
    current = value
    for part in re.finditer(r"(\d+(?:\.\d+)?)?(천만|백만|억|만|천)", scale):
        if part.group(1):
            current = Decimal(part.group(1))
        total += current * _SCALE[part.group(2)]
        current = Decimal(0)
    return total + current


def _unit_kind(unit: str) -> str:
    if unit in _UNITS:
        return _UNITS[unit]
    if not unit.isascii():  # a counter may carry a particle: 30일까지, 6만원을
        counter = _counter(unit)
        return _UNITS[counter] if counter else ""
    return ""


def _counter(unit: str) -> str:
    """The Korean counter ``unit`` starts with (the longest), or ""."""
    found = _KOREAN_COUNTER.match(unit)
    return found.group(0) if found else ""
