"""The quantity patterns that open with a digit or a letter, their boundary told after it (the
search skips from candidate to candidate in C), find what their forms that open with a
lookbehind or a word boundary find: the same spans and the same groups."""

from __future__ import annotations

import itertools
import re

from wiki_assets.engine.quality.dates import CLOCKS, DATES
from wiki_assets.engine.quality.quantities import _NUMBER_WORDS, _VERSION, _WORD_NUMBER_HINT

_I = re.IGNORECASE
# Each pattern as a boundary first writes it.
_BOUNDARY_FIRST = [
    (DATES[0][0], re.compile(
        r"(?<!\d)(?P<year>\d{4})[-./]\s?(?P<month>\d{1,2})[-./]\s?(?P<day>\d{1,2})(?!\d)\.?")),
    (CLOCKS[0][0], re.compile(
        r"(?<![\d:])(?P<hour>\d{1,2}):(?P<minute>\d{2})(?![\d:])"
        r"(?:\s?(?P<half>[ap])\.?m\b\.?)?", _I)),
    (CLOCKS[1][0], re.compile(r"(?<![\d:])(?P<hour>\d{1,2})\s?(?P<half>[ap])\.?m\b\.?", _I)),
    (_VERSION, re.compile(r"\b(?:v|version\s|버전\s?)(?P<version>\d+(?:\.\d+)+|\d+)", _I)),
]  # fmt: skip
_PIECES = ["1", "12", "2026", "-", ".", "/", ":", " ", "30", "pm", "A.M.", "v", "V", "ersion ",
           "version ", "버전", "새", "x", "까지", "\n"]  # fmt: skip


def _texts() -> list[str]:
    # Every run of three pieces, and some of six: digits beside colons, letters and Korean.
    runs = ["".join(run) for run in itertools.product(_PIECES, repeat=3)]
    mixed = ("".join(_PIECES[(i * 7 + j * j) % len(_PIECES)] for j in range(6)) for i in range(400))
    return [*runs, *mixed]


def test_a_pattern_led_by_its_first_character_finds_what_its_boundary_first_form_finds() -> None:
    texts = _texts() + ["Effective 2026-01-01, 10:30 am to 3pm (v2.1; version 3; 버전 2)"]
    for fast, reference in _BOUNDARY_FIRST:
        found = 0
        for text in texts:
            expected = [(m.span(), m.groupdict()) for m in reference.finditer(text)]
            assert [(m.span(), m.groupdict()) for m in fast.finditer(text)] == expected, text
            found += len(expected)
        assert found > 0  # (each pattern matched somewhere: the texts try it)


def test_the_number_words_hint_matches_where_their_plain_alternation_does() -> None:
    plain = re.compile(rf"(?:{'|'.join(_NUMBER_WORDS)})[\s-]")
    words = [*_NUMBER_WORDS, "often", "seventh", "tent", "x"]
    for first, second in itertools.product(words, repeat=2):
        for text in (f"{first} {second}", f"{first}-{second}", f"{first}{second}"):
            assert (plain.search(text) is None) == (_WORD_NUMBER_HINT.search(text) is None), text
