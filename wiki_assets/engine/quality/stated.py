"""Whether a sentence of the document states what a sentence of the prose states: its claim, not
only its words.

Word overlap is a weak pass rule: a small model's false sentences are mostly made of the
document's true words in a wrong relation ("the customer asked to share their findings", where
the team shares them), or join two real words into a thing the document never names ("feature
credit", beside "SLA credits" and "feature requests"). So the rules call a sentence supported
only where the document says it nearly word for word, in one of its sentences (which may run on
over a line break) (:func:`stated_by`):

* it holds all of the prose sentence's claim words (content words; one of the title's may be
  missing), or all but one in eight (the word left out is often the claim: "caused by"), and
  no two of the missing ones stand together: two words in a row that the document's sentence
  lacks name a thing it never names ("… small equipment under 100,000 KRW, and business plans");
* in the same order (a wrong actor or a turned-round relation reorders them);
* each two claim words that stand together in the prose stand within a few words of each other
  in the document's sentence (two words from two clauses are not one thing).

A sentence of fewer than two claim words (beside the title's; a word said again counts once)
asserts nothing the rules can place ("SHOCKED: SEV1", "Postmortem: Postmortem: …"); nor does a
heading or a Korean sentence whose last word is no predicate (:func:`asserts`). Anything else
may be true, but the rules cannot know: it is unchecked, for a judge. :func:`quoted` tells a
sentence that is the document's own words, which a digest may quote without a judge.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from wiki_assets.engine.quality.prose import claim_words
from wiki_assets.engine.quality.units import normalize
from wiki_assets.engine.text.scripts import HANGUL_WORD
from wiki_assets.engine.text.sentences import SENTENCE_END, SENTENCE_MARKS

__all__ = ["MIN_CLAIM", "asserts", "quoted", "stated_by"]

MIN_CLAIM = 2  # claim words (besides the title's) a sentence needs to assert something checkable
_MISSING = 8  # claim words per one a sentence may have that its document sentence lacks
_GAP = 3  # claim words at most between two that stand together in the prose sentence
_QUOTE_WORDS = 4  # a quote shorter than this is a phrase, not a sentence of the document
_HEADING = re.compile(r"\s*#{1,6}\s")
# How a Korean predicate ends: a final ending (합니다, 해요, 하십시오, 하죠, 할까, 하네), a
# predicate made a noun as notes write them (삭제됨, 없음, 필요함, 제출할 것), or a noun that is
# a predicate there (출시 예정, 승인 필요, 반출 금지).
_KOREAN_PREDICATE = re.compile(
    r"(?:다|요|오|죠|까|네|지|음|함|됨|임|짐|것|듯|예정|필요|가능|불가|금지)$"
)


def stated_by(
    sentence: str, lines: Sequence[tuple[int, str]], title_words: frozenset[str]
) -> tuple[int, int] | None:
    """The lines among ``lines`` (number, text; a passage in a row) that state ``sentence``'s
    claim (see the module docstring): one of its sentences, a whole line, or the passage read
    as one text (a sentence the model copied across a line break); None where none does."""
    words = claim_words(sentence)
    if len({word for word in words if word not in title_words}) < MIN_CLAIM:
        return None
    if not asserts(sentence):
        return None
    for number, line in lines:
        if _lacks(words, title_words, line):
            continue  # the whole line lacks too many of its words: so does each sentence of it
        if any(_states(words, title_words, piece) for piece in _pieces((line,))):
            return number, number
    # A sentence that runs on over a line break (a wrapped line, a list's items without a
    # closing mark) is one sentence of the document; two sentences of two lines are not.
    start = 0
    for end in range(1, len(lines) + 1):
        if end == len(lines) or lines[end - 1][1].rstrip().endswith(SENTENCE_MARKS):
            if end - start > 1:
                joined = " ".join(line for _, line in lines[start:end])
                if any(_states(words, title_words, piece) for piece in _pieces((joined,))):
                    return lines[start][0], lines[end - 1][0]
            start = end
    return None


def asserts(sentence: str) -> bool:
    """Whether ``sentence`` may assert something: it is no Markdown heading copied ("# Stats:
    …": a heading names a topic), and it has a predicate where its language puts one. Korean
    puts it last: a sentence whose last word ends in no predicate's ending is a noun phrase (a
    list item's label: "집결 장소", "이전 버전 자동 삭제") and names a topic without saying
    anything of it, true or false. An English sentence's verb may stand anywhere, and no rule
    short of a tagger finds it: English sentences are taken to assert."""
    if _HEADING.match(sentence):
        return False
    if sentence.isascii():
        return True  # an English sentence (no Hangul word in it)
    words = HANGUL_WORD.findall(sentence)
    if not words:
        return True  # an English sentence
    latin = sum(1 for word in sentence.split() if word.isascii() and word.isalpha())
    if latin > len(words):
        return True  # an English sentence with a Korean word or two in it, as a name
    return _KOREAN_PREDICATE.search(words[-1]) is not None


def quoted(sentence: str, lines: Iterable[str]) -> bool:
    """Whether ``sentence`` is, word for word, a sentence of ``lines`` or a run of one that
    states its claim (case, spacing and punctuation aside)."""
    said = normalize(sentence)
    if len(said.split()) < _QUOTE_WORDS:
        return False
    words = claim_words(sentence)
    for piece in _pieces(lines):
        if f" {said} " in f" {normalize(piece)} " and _states(words, frozenset(), piece):
            return True
    return False


def _pieces(lines: Iterable[str]) -> Iterable[str]:
    for line in lines:
        parts = [part for part in SENTENCE_END.split(line) if part.strip()]
        yield from parts
        if len(parts) > 1:
            yield line


def _lacks(words: tuple[str, ...], title_words: frozenset[str], text: str) -> bool:
    """Whether ``text`` lacks more of ``words`` than a text that states them may."""
    theirs = _positions(text)
    return (
        _missing([word for word in words if word not in theirs], title_words)
        > len(words) // _MISSING
    )


def _missing(absent: list[str], title_words: frozenset[str]) -> int:
    """How many of ``absent`` count as missing: one word of the title may be (the document's
    subject, which a sentence about it names and its lines need not)."""
    of_title = sum(1 for word in absent if word in title_words)
    return len(absent) - of_title + max(0, of_title - 1)


def _states(words: tuple[str, ...], title_words: frozenset[str], piece: str) -> bool:
    theirs = _positions(piece)
    found: list[int | None] = []
    last = -1
    for word in words:
        places = theirs.get(word, ())
        if len(places) <= 1:  # most words: said once or not at all
            found.append(places[0] if places else None)
        else:  # a word said twice: its next place after the last word placed, where it has one
            found.append(next((at for at in places if at > last), places[0]))
        last = found[-1] if found[-1] is not None else last
    if None in found:  # (where it holds every word, as a quote does, none is missing)
        absent = [w for w, at in zip(words, found, strict=True) if at is None]
        if _missing(absent, title_words) > len(words) // _MISSING:
            return False
        lacking = [at is None and w not in title_words for w, at in zip(words, found, strict=True)]
        if any(a and b for a, b in zip(lacking, lacking[1:], strict=False)):
            return False  # two words in a row the sentence lacks: a thing it never names
    placed = [at for at in found if at is not None]
    if len(placed) < MIN_CLAIM:
        return False
    inversions = sum(1 for a, b in zip(placed, placed[1:], strict=False) if b < a)
    if inversions > (1 if len(placed) >= 5 else 0):
        return False
    # Neighbours in the prose stand near each other in the document's sentence.
    return all(
        abs(b - a) <= _GAP + 1
        for a, b in zip(found, found[1:], strict=False)
        if a is not None and b is not None
    )


@functools.lru_cache(maxsize=4096)
def _positions(piece: str) -> dict[str, tuple[int, ...]]:
    """Each claim word of ``piece`` and its places (counted in claim words), in order."""
    at: dict[str, list[int]] = {}
    for index, word in enumerate(claim_words(piece)):
        at.setdefault(word, []).append(index)
    return {word: tuple(places) for word, places in at.items()}
