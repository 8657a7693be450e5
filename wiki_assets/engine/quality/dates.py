"""Dates and times of day as a sentence writes them, in English and in Korean, each read to one
form: ``2026-03-01``, ``March 1, 2026`` and ``2026년 3월 1일`` are the date ``2026-03-01`` (a part
left out is ``*``), ``2 pm`` and ``오후 2시`` the time ``14:00``. :mod:`.quantities` reads them
before the other numbers of a sentence, which they hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["CLOCKS", "DATES", "Hinted", "read_clock", "read_date"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
            ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
            ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
# Each pattern with what a text must have for it to match at all (None: nothing cheaper to
# look for than the pattern), asked of the text and of it in lower case: most sentences name no
# month and tell no time, and running every pattern over every sentence was most of what
# quantities() cost.
_MONTH_STEM = re.compile("|".join(sorted({name[:3] for name in _MONTHS})))  # every month's start


def _names_month(text: str, lowered: str) -> bool:
    # str.lower() and IGNORECASE agree on these letters in NFKC text (the one other letter
    # IGNORECASE takes for one of them, the long s, NFKC has made an "s").
    return _MONTH_STEM.search(lowered) is not None


def _has(mark: str) -> Callable[[str, str], bool]:
    return lambda text, lowered: mark in text


Hinted = list[tuple[re.Pattern[str], Callable[[str, str], bool] | None]]
# A pattern that opens with a digit, its boundary told after it ("\d(?<!\d\d)" is a digit with
# none before it), is searched from digit to digit in C; one that opens with a lookbehind was
# tried at every character. The same matches.
_FIRST_DIGIT = r"\d(?<![\d:]\d)"  # a digit with no digit or colon before it (a time's hour)
DATES: Hinted = [
    # Digit boundaries, not word ones: a Korean particle may follow (2027-03-31까지).
    (re.compile(r"(?P<year>\d(?<!\d\d)\d{3})[-./]\s?(?P<month>\d{1,2})[-./]\s?(?P<day>\d{1,2})(?!\d)\.?"),
     lambda text, lowered: "-" in text or "." in text or "/" in text),
    (re.compile(rf"(?:{_YEAR}\s*년\s*)?(?P<month>\d{{1,2}})\s*월\s*(?:(?P<day>\d{{1,2}})\s*일)?"),
     _has("월")),
    (re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?:,?\s+{_YEAR}\b)?", re.IGNORECASE), _names_month),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b(?:,?\s+{_YEAR}\b)?", re.IGNORECASE),
     _names_month),
    (re.compile(rf"\b{_MONTH}\s+{_YEAR}\b", re.IGNORECASE), _names_month),
]  # fmt: skip
# A time of day is a kind of its own: unread, "10시" and "10:00" would be bare numbers, and a bare
# number agrees with any (a summary's "10 days" would be found in "오전 10시").
_DIGIT_THEN_HALF = re.compile(r"\d\s?[ap]", re.IGNORECASE)
CLOCKS: Hinted = [
    (re.compile(rf"(?P<hour>{_FIRST_DIGIT}\d?):(?P<minute>\d{{2}})(?![\d:])(?:\s?(?P<half>[ap])\.?m\b\.?)?",
                re.IGNORECASE), _has(":")),
    (re.compile(rf"(?P<hour>{_FIRST_DIGIT}\d?)\s?(?P<half>[ap])\.?m\b\.?", re.IGNORECASE),
     lambda text, lowered: _DIGIT_THEN_HALF.search(text) is not None),
    (re.compile(r"(?:(?P<half>오전|오후)\s?)?(?<![\d:])(?P<hour>\d{1,2})시(?!간)"
                r"(?:\s?(?P<minute>\d{1,2})\s?분|\s?(?P<thirty>반))?"), _has("시")),
]  # fmt: skip


def read_date(match: re.Match[str]) -> str | None:
    """``YYYY-MM-DD`` of a match of :data:`DATES`, ``*`` for a part it leaves out (``*-03-01``);
    None where it names no date (a 13th month)."""
    groups = match.groupdict()
    month_text = groups.get("month") or ""
    month = (
        _MONTHS.get(month_text.lower().rstrip(".")) if not month_text.isdigit() else int(month_text)
    )
    day = int(groups["day"]) if groups.get("day") else None
    year = groups.get("year")
    if month is None or not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
        return None
    return f"{year or '*'}-{month:02d}-{f'{day:02d}' if day else '*'}"


def read_clock(match: re.Match[str]) -> str | None:
    """``HH:MM`` on a 24-hour clock (2 pm and 오후 2시 are 14:00)."""
    groups = match.groupdict()
    hour = int(groups["hour"])
    minute = 30 if groups.get("thirty") else int(groups.get("minute") or 0)
    if (groups.get("half") or "").lower() in ("p", "오후") and hour < 12:
        hour += 12
    return f"{hour:02d}:{minute:02d}" if hour <= 24 and minute < 60 else None
