"""Where a sentence of the model's prose is in its document: the passage (at most
:data:`~.evidence.MAX_CITED_LINES` lines in a row) that holds the most of its words, and whether a
passage holds it (:func:`grounded`). The words are read as :mod:`.prose` reads them.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wiki_assets.engine.quality.evidence import AGREEMENT, MAX_CITED_LINES, Source
from wiki_assets.engine.quality.prose import sentence_units, sentences
from wiki_assets.engine.quality.units import normalize, units_and_numbers

__all__ = ["DocumentUnits", "Passage", "grounded"]


class DocumentUnits(Source):
    """A document's lines, to look for any number of sentences in them. A line's content units
    are worked out when a passage with it is looked at (most sentences are found, or ruled out,
    after a few lines), so a long document costs what its candidate lines do."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._units: dict[int, frozenset[str]] = {}
        self._numbers: dict[int, frozenset[str]] = {}
        self._found: dict[str, set[int]] = {}  # unit -> the lines with it (_lines_with)
        self._searched: dict[tuple[str, frozenset[str]], tuple[Passage | None, bool | None]] = {}

    def _lines_with(self, unit: str) -> set[int]:
        """The lines whose text has ``unit`` in it (a unit is part of the word it comes from).
        Kept: the prose's rules and the grounded check look for the same words."""
        found = self._found.get(unit)
        if found is None:
            found = self._found[unit] = set()
            at = self._joined.find(unit)
            while at >= 0:
                found.add(bisect.bisect_right(self._starts, at) - 1)
                at = self._joined.find(unit, at + 1)
        return found

    def _written(self, numbers: frozenset[str]) -> bool:
        """Whether each of ``numbers`` is written in the document's text (a line's numbers are in
        it: ``5`` in ``05``): no window holds a sentence that states a number written nowhere."""
        return all(map(self._joined.__contains__, numbers))

    def _units_of(self, index: int) -> frozenset[str]:
        if index not in self._units:
            self._units[index], self._numbers[index] = units_and_numbers(self._lines[index])
        return self._units[index]

    def holds(self, sentence: str, besides: frozenset[str] = frozenset()) -> bool:
        """Whether a passage of at most :data:`MAX_CITED_LINES` lines holds at least
        :data:`AGREEMENT` of ``sentence``'s content units (but those of ``besides``) and every
        number it states."""
        said = normalize(sentence)
        holds = self._search(said, besides)[1]
        if holds is None:  # numbers alone: looked for only now that it is asked
            units, _, stated = _sought(said, besides)
            holds = self._holds(units, units, stated)
            self._searched[said, besides] = (None, holds)
        return holds

    def passage(self, sentence: str, besides: frozenset[str] = frozenset()) -> Passage | None:
        """The passage of at most :data:`MAX_CITED_LINES` lines that holds the most of
        ``sentence``'s words (numbers aside: a rule compares those), or None when no line has
        any. Its lines are trimmed to those that hold some of the words."""
        return self._search(normalize(sentence), besides)[0]

    def _search(self, said: str, besides: frozenset[str]) -> tuple[Passage | None, bool | None]:
        """:meth:`passage` and :meth:`holds` of a normalised sentence, worked out together (the
        same windows answer both) and remembered: the prose's rules ask the one and the grounded
        check the other of the same sentences."""
        key = (said, besides)
        found = self._searched.get(key)
        if found is None:
            found = self._searched[key] = self._look(*_sought(said, besides))
        return found

    def _look(
        self, units: frozenset[str], words: frozenset[str], stated: frozenset[str]
    ) -> tuple[Passage | None, bool | None]:
        """(passage, holds) of a sentence's units, words and numbers (:func:`_sought`). A
        sentence of numbers alone has no passage, and whether a window holds it is left None
        until :meth:`holds` asks (the prose's rules never do)."""
        if not words:
            return None, (None if units else False)
        needed = AGREEMENT * len(units)
        # Candidate passages start at a line that has one of the sentence's words (a number is
        # in too many lines to say where to look).
        seen = self._found  # (the words looked for so far: a page's sentences share many)
        lines_of = [seen[word] if word in seen else self._lines_with(word) for word in words]
        # Not even the whole document has enough of them, or all its numbers: no window holds it.
        held_anywhere = sum(map(bool, lines_of)) + len(units) - len(
            words
        ) >= needed and self._written(stated)
        holds = False
        best: Passage | None = None
        known = self._units  # (the lines' units worked out so far)
        for start in sorted(set().union(*lines_of)):
            window = range(start, min(start + MAX_CITED_LINES, len(self._lines)))
            # Once for the three questions.
            window_units = [known[i] if i in known else self._units_of(i) for i in window]
            in_window = set().union(*window_units)
            if held_anywhere and not holds:
                holds = len(units & in_window) >= needed
                holds = holds and stated <= set().union(*(self._numbers[i] for i in window))
            held = [(i, line) for i, line in enumerate(window_units, start) if words & line]
            if not held:
                continue  # the word was only part of a longer one
            # (The words a window holds are those of its lines that hold any.)
            share = len(words & in_window) / len(words)
            if best is None or share > best.share:
                # The lines that hold most of the words: where the sentence's polarity is read.
                core = held[0][0]  # (one line, most often)
                if len(held) > 1:
                    core = max(held, key=lambda line: len(words & line[1]))[0]
                best = Passage(
                    self.line_numbers[held[0][0]], self.line_numbers[held[-1][0]], share,
                    self.line_numbers[core],
                )  # fmt: skip
        return best, holds

    def _holds(self, units: frozenset[str], words: frozenset[str], stated: frozenset[str]) -> bool:
        """Whether a window starting at a line with one of ``words`` holds the sentence."""
        if not self._written(stated):
            return False  # a number no line has: no window holds the sentence
        needed = AGREEMENT * len(units)
        lines_of = {unit: self._lines_with(unit) for unit in words}
        if sum(map(bool, lines_of.values())) + len(units - words) < needed:
            return False  # not even the whole document has enough of them
        for start in sorted(set().union(*lines_of.values())):
            window = range(start, min(start + MAX_CITED_LINES, len(self._lines)))
            found = set().union(*(self._units_of(i) for i in window))
            if len(units & found) >= needed and stated <= set().union(
                *(self._numbers[i] for i in window)
            ):
                return True
        return False


@functools.lru_cache(maxsize=2048)
def _sought(
    said: str, besides: frozenset[str]
) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """What a passage is looked for by, of a normalised sentence: its content units but those
    of ``besides``, the words among them (no number), and the numbers it states. Cached: the
    prose's rules (passage) and the grounded check (holds) ask it of the same sentences."""
    said_units = sentence_units(said)
    units = said_units - besides
    # Its numbers are its units of digits: a sentence's units keep every number it states, and
    # no other unit is one (a word's stem has its digits taken out).
    stated = frozenset(filter(str.isdecimal, said_units))
    return units, frozenset(itertools.filterfalse(str.isdigit, units)), stated


@dataclass(frozen=True, slots=True)
class Passage:
    """Lines of a document (``first`` to ``last``, the document's numbers) and the ``share`` of
    a sentence's words they hold; ``core``: the line that holds the most of them."""

    first: int
    last: int
    share: float
    core: int


def grounded(
    texts: Sequence[str] | Iterable[str], document: str | DocumentUnits, title: str = ""
) -> bool:
    """Whether any sentence of ``texts`` is held by a passage of ``document``. The words of the
    ``title`` count for nothing: the document has them, and a sentence that only names what the
    document is ("The document is for the on-call runbook") says nothing to find."""
    units = document if isinstance(document, DocumentUnits) else DocumentUnits(document)
    besides = frozenset(sentence_units(normalize(title)))
    return any(units.holds(sentence, besides) for sentence in sentences(*texts))
