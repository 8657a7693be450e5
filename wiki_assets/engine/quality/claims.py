"""Each sentence of a page's description and summary, checked against its document by rule.

A sentence's :class:`Support`:

* **supported**: a passage of the document (at most :data:`~.evidence.MAX_CITED_LINES` lines)
  holds at least :data:`~.evidence.AGREEMENT` of its words (and two of them where it has two or
  more: one word of "Panda: SEV1" found is a coincidence, not a passage), every quantity it states
  (:mod:`.quantities`), every name it gives, says it with the same polarity (a "not" in one and
  none in the other is not the same statement), and a sentence of it states the sentence's claim,
  not only its words (:mod:`.stated`). The page cites that sentence's line.
* **contradicted**: it states a quantity (an amount, a duration, a count, a share, a version, a
  date) or a name (of a person, team or product) that the document never gives, where the
  passage that says the rest of it gives another of the same kind ("37 days" where the document
  says "30 days"; "approved by Maria Kim" where a line says the same approved by John Park). The
  page says what the document says (the figure; for a name, the line's sentence), and where.
* **unsupported**: it states a quantity the document never gives, and nothing gives another in
  its place; or a name the document never gives (where it can tell a name: "Maria Kim",
  "이지은 팀장"); or the passage that says it says it the other way round (a negation).
* **unchecked**: nothing the rules can compare settles it (a paraphrase, a claim in words the
  document does not use, or a blend of two lines: :func:`_blended`). A judge from the fleet may
  settle it (:mod:`wiki_assets.engine.verification`).

The rules work in English and in Korean (:mod:`.quantities` for numbers, particles taken off
words as :mod:`.prose` does). A sentence that is contradicted or unsupported flags its page.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from wiki_assets.engine.quality.evidence import AGREEMENT
from wiki_assets.engine.quality.names import absent_name, swapped_names
from wiki_assets.engine.quality.passages import DocumentUnits
from wiki_assets.engine.quality.polarity import CLAUSE, ONLY, negated
from wiki_assets.engine.quality.prose import claim_words, sentence_units
from wiki_assets.engine.quality.quantities import (
    Quantity,
    agrees,
    given_instead,
    may_state,
    quantities,
    stated_quantities,
)
from wiki_assets.engine.quality.sentences import ProseCheck, SentenceCheck, Support, prose_sentences
from wiki_assets.engine.quality.stated import quoted, stated_by
from wiki_assets.engine.quality.units import normalize
from wiki_assets.engine.text.sentences import SENTENCE_END

MIN_WORDS_FOUND = 2  # of a sentence's words, that its passage must hold (if it has as many)

__all__ = ["check_prose"]


class _Document:
    """A document as the rules read it: its words by passage, and its quantities by line."""

    def __init__(self, text: str, title: str, units: DocumentUnits | None = None) -> None:
        self.units = units if units is not None else DocumentUnits(text)
        self.raw = self.units.raw_lines
        self.besides = frozenset(sentence_units(normalize(title)))
        self._title = title
        self._text = text
        self._given: list[Quantity] = []  # the quantities of the lines read so far
        self._unread = iter(self.raw)  # the lines not read yet

    @functools.cached_property
    def title_words(self) -> frozenset[str]:
        """The title's claim words: asked only of a sentence whose passage holds its words (most
        sentences of a page whose prose is not its document's never get there)."""
        return frozenset(claim_words(self._title))

    @functools.cached_property
    def normalized(self) -> str:
        """The whole text normalised, for the names a sentence gives: asked only of a sentence
        whose words a passage holds, so a page whose prose is nowhere in it never pays for it."""
        return f" {normalize(self._text)} "

    def lines(self, first: int, last: int) -> list[tuple[int, str]]:
        return [(n, self.raw[n - 1]) for n in range(first, last + 1) if self.raw[n - 1].strip()]

    def states(self, quantity: Quantity) -> bool:
        """Whether a line of the document gives ``quantity``. Lines are read as far as it takes
        (a quantity the document gives is found before its last line, most often)."""
        if any(agrees(quantity, given) for given in self._given):
            return True
        for line in self._unread:
            if not may_state(line):
                continue  # most lines state no quantity
            found = quantities(line)
            self._given += found
            if any(agrees(quantity, given) for given in found):
                return True
        return False


def check_prose(
    description: str,
    summary: str,
    document: str,
    title: str = "",
    units: DocumentUnits | None = None,
) -> ProseCheck:
    """Every sentence of ``description`` and ``summary`` checked by rule against ``document``
    (its full original text). The ``title``'s words count for nothing: every document has them.
    ``units``: ``document``'s, where the caller has them (the page's checks read them too)."""
    read = _Document(document, title, units)
    return ProseCheck(
        tuple(
            _check(part, sentence, read) for part, sentence in prose_sentences(description, summary)
        )
    )


def _check(part: str, sentence: str, document: _Document) -> SentenceCheck:
    passage = document.units.passage(sentence, document.besides)
    words = len(_words(sentence))
    found = (
        passage is not None
        and passage.share >= AGREEMENT
        and round(passage.share * words) >= min(words, MIN_WORDS_FOUND)
    )
    lines = (passage.first, passage.last) if passage is not None and found else None
    stated = stated_quantities(sentence)
    missing = [quantity for quantity in stated if not document.states(quantity)]
    if missing:
        if passage is not None and found:
            # The line that says most of it first: the one whose figure the sentence changed.
            near = document.lines(passage.core, passage.core)
            near += document.lines(passage.first, passage.last)
            for quantity in missing:
                if (other := given_instead(quantity, near)) is not None:
                    return SentenceCheck(sentence, part, Support.CONTRADICTED, (other[0], other[0]),
                                         other[1].text)  # fmt: skip
        said = "the document never states " + ", ".join(quantity.text for quantity in missing)
        return SentenceCheck(sentence, part, Support.UNSUPPORTED, lines, said)
    if passage is None or not found:
        return SentenceCheck(sentence, part, Support.UNCHECKED)
    passage_lines = document.lines(passage.first, passage.last)
    for line, mine, theirs in swapped_names(sentence, passage_lines, document.normalized):
        # Contradicted only where the line says the same with its own name: the reader is shown
        # that sentence of the line. Else another claim merely shares a word with it (a name it
        # never gives is then unsupported, below, or the sentence unchecked).
        own_line = [(line, document.raw[line - 1])]
        if stated_by(sentence.replace(mine, theirs), own_line, document.title_words) is not None:
            says = _closest(sentence, document.raw[line - 1], SENTENCE_END).strip(" -*#>")
            return SentenceCheck(sentence, part, Support.CONTRADICTED, (line, line), says)
    if any(not any(agrees(q, g) for _, text in passage_lines for g in quantities(text))
           for q in stated):  # fmt: skip
        # Every quantity is in the document, but not where the rest of the sentence is.
        return SentenceCheck(sentence, part, Support.UNCHECKED)
    if _blended(stated, document.raw[passage.core - 1]):
        return SentenceCheck(sentence, part, Support.UNCHECKED)
    if absent := absent_name(sentence, document.normalized):
        said = f"the document never names {absent}"
        return SentenceCheck(sentence, part, Support.UNSUPPORTED, lines, said)
    core = _closest(sentence, document.raw[passage.core - 1], SENTENCE_END)
    # A comma is no sure clause end: only a polarity that neither the document's sentence nor
    # its clause has flags (a sentence may say the half of "not rotated; changed after a leak").
    if negated(sentence) not in (negated(core), negated(_closest(sentence, core, CLAUSE))):
        if ONLY.search(sentence):  # "only when X" says what "not, except when X" does
            return SentenceCheck(sentence, part, Support.UNCHECKED)
        if not _same_claim(sentence, _closest(sentence, core, SENTENCE_END)):
            # The "not" is another claim's ("sick leave … does not reduce annual leave" beside
            # "a policy … including annual leave and sick leave"): no reason a reader would follow.
            return SentenceCheck(sentence, part, Support.UNCHECKED)
        return SentenceCheck(sentence, part, Support.UNSUPPORTED, (passage.core, passage.core),
                             "the document says it the other way round")  # fmt: skip
    # Its words are there; supported only where a sentence of the passage states its claim.
    stating = stated_by(sentence, passage_lines, document.title_words)
    if stating is None:
        return SentenceCheck(sentence, part, Support.UNCHECKED)
    stating_lines = [text for _, text in document.lines(*stating)]
    if _about_the_document(sentence) and not _about_the_document(
        _closest(sentence, " ".join(stating_lines), SENTENCE_END)
    ):
        # What the document is, holds or is for, where it does not say so of itself.
        return SentenceCheck(sentence, part, Support.UNCHECKED)
    return SentenceCheck(sentence, part, Support.SUPPORTED, stating,
                         quoted=quoted(sentence, [" ".join(stating_lines)]))  # fmt: skip


# A sentence whose subject is the document itself ("It includes …", "The document is for …",
# "이 문서는 …").
_ABOUT_THE_DOCUMENT = re.compile(
    r"^(?:(?:it|this)(?:\s+(?:document|page|file|guide|note|memo|policy|procedure|report|"
    r"presentation|deck|sheet|spreadsheet|workbook|notice|text))?|the\s+(?:document|page|file|"
    r"guide|note|memo|report|presentation|deck|sheet|spreadsheet|workbook|notice|text))\b"
    r"|^(?:이|본|해당)\s*(?:문서|자료|안내|페이지|파일|글|공지|보고서|발표)",
    re.IGNORECASE,
)


def _about_the_document(sentence: str) -> bool:
    """Whether ``sentence`` says what the document is, holds or is for ("It includes a
    full-colour logo on white backgrounds" of a guide that says which logo to use where). Its
    claim is the relation of the document to its words, and a line that holds the words states
    it only where the document speaks of itself there ("This policy covers …"): elsewhere the
    rules leave it unchecked, for a judge."""
    return _ABOUT_THE_DOCUMENT.match(sentence.strip(" -*>\"'")) is not None


def _same_claim(sentence: str, theirs: str) -> bool:
    """Whether ``theirs`` (a sentence of the document) holds at least half of ``sentence``'s
    claim words: the two speak of the same thing, so a "not" in one only is a flipped claim."""
    words = set(claim_words(sentence))
    return bool(words) and 2 * len(words & set(claim_words(theirs))) >= len(words)


def _blended(stated: Sequence[Quantity], core: str) -> bool:
    """Whether a sentence's figures come from another line than the one that says most of it,
    which gives another figure of their kind instead: "a seven-minute walk from Gangnam station
    during the first month" blends "a seven-minute walk from Pangyo station" with the next line's
    "a shuttle from Gangnam station every 20 minutes during the first month". Each line holds,
    together they do not; a judge may settle it, the rules do not call it supported."""
    kinds = {quantity.kind for quantity in stated}
    here = [given for given in quantities(core) if given.kind in kinds] if kinds else []
    return bool(here) and not any(agrees(q, given) for q in stated for given in here)


@functools.lru_cache(maxsize=1024)
def _words(text: str) -> frozenset[str]:
    # Cached: a sentence's words are asked for again and again (its passage, its closest
    # sentence and clause of a line, the share the line holds), and a line's for each clause.
    return frozenset(unit for unit in sentence_units(normalize(text)) if not unit.isdigit())


def _closest(sentence: str, line: str, end: re.Pattern[str]) -> str:
    """The sentence (or clause, split at ``end``) of ``line`` that shares the most words with
    ``sentence`` (a line may hold several; only the one that says it tells its polarity)."""
    parts = end.split(line)
    if len(parts) == 1:
        return line  # one sentence (or clause): the closest, whatever its words
    words = _words(sentence)
    pieces = [(piece, theirs) for piece in parts if (theirs := _words(piece))]
    if not pieces:
        return line
    return max(pieces, key=lambda piece: len(words & piece[1]))[0]
