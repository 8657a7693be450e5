"""What the model's prose says, and whether its document says it too.

Key points carry their evidence (:mod:`.evidence`); a description and a summary do not. Two
questions can still be asked of them without a strong model:

* **Does it say anything?** Take away the words about the document itself ("The document is
  about", "This page describes", "이 문서는 … 문서입니다") and the title's words: a description
  with nothing left (:func:`says_nothing`) only restates the title with filler.
* **Is any of it in the document?** A sentence is grounded (:func:`~.passages.grounded`) where
  a few lines of the document in a row (at most :data:`~.evidence.MAX_CITED_LINES`) hold at least
  :data:`~.evidence.AGREEMENT` of its content units and every number it states: the rule a key
  point is verified by, with the lines found rather than cited. Prose none of whose sentences is
  grounded cannot be checked against its document: the page says so.

Both work in English and in Korean (a Korean word's particle or ending is taken off, as content
units take Korean apart: :mod:`.units`).
"""

from __future__ import annotations

import functools

from wiki_assets.engine.quality.units import content_units, normalize
from wiki_assets.engine.text.scripts import HANGUL_WORD
from wiki_assets.engine.text.sentences import SENTENCE_END

__all__ = ["claim_words", "says_nothing", "sentence_units", "sentences"]

_STEM = 5  # as content units cut a Latin word
_STOPWORDS = frozenset(
    "a an and are as at be been but by can do does for from has have how in into is it its may "
    "must no not of on or our should so than that the their them then there these they this to "
    "up was we were what when where which who will with you your also each all any per it's "
    "here whose whom i".split()
)
# Words about the document itself, not about what it says (as stems, like content units).
_META_WORDS = (
    "document documents doc docs page pages file files article text guide section note notes "
    "describe describes described description explain explains explained outline outlines "
    "cover covers covered contain contains provide provides provided give gives list lists "
    "discuss discusses information info detail details overview content contents about "
    "regarding summary summarizes summarises purpose intended meant use uses used using reader "
    "readers anyone someone need needs want wants read topic topics"
).split()
_META = frozenset(word[:_STEM] for word in _META_WORDS)
# Korean: the words about the document, as stems (particle or ending taken off), and the
# bigrams of them that content units make.
_META_KO = frozenset(
    "이 그 저 본 해당 이것 그것 문서 페이지 파일 내용 정보 자료 설명 요약 안내 소개 정리 다룹 "
    "다루 담고 담은 담 포함 제공 목적 대해 관해 위해 대한 관한 위한 있 없 하 되 것 수 등 및 "
    "모든 글 읽 필요 사람".split()
)
_META_BIGRAMS = frozenset(
    "문서 페이 이지 파일 내용 정보 자료 설명 요약 안내 소개 정리 다룹 룹니 담고 포함 제공 목적 "
    "대한 관한 위한 대해 관해 위해".split()
)
# Particles and endings a Korean word may carry, longest first: one is taken off a word, if
# what is left is a word (two syllables left for a one-syllable particle: 휴가 keeps its 가).
_ENDINGS = sorted(
    (
        "입니다 합니다 습니다 됩니다 니다 하는 하고 하며 하여 해서 에서 에게 에는 으로 이다 "
        "한다 된다 이며 라는 이라는 에서는 으로는 는 은 이 가 을 를 에 의 로 와 과 도 만"
    ).split(),
    key=len,
    reverse=True,
)


# The endings by length, longest first: a word can end in only one ending of each length, so
# looking its last letters up is the scan of _ENDINGS in its order, without the scan.
_ENDINGS_BY_LENGTH = [
    (length, frozenset(e for e in _ENDINGS if len(e) == length))
    for length in sorted({len(e) for e in _ENDINGS}, reverse=True)
]


def _stem_ko(word: str) -> str:
    for length, endings in _ENDINGS_BY_LENGTH:
        if word[-length:] in endings and len(word) - length >= (2 if length == 1 else 1):
            return word[:-length]
    return word


def _said_words(normalized: str) -> tuple[set[str], set[str]]:
    """(Latin stems and numbers, Korean stems) of a normalised text that say something: no
    stopword and no word about the document itself. Each word is read on its own: a text's are
    its words' together."""
    latin: set[str] = set()
    korean: set[str] = set()
    for token in normalized.split():
        rest = [token]  # an ASCII token has no Hangul to take out (most tokens)
        if not token.isascii():
            for hangul in HANGUL_WORD.findall(token):
                stem = _stem_ko(hangul)
                if stem not in _META_KO:
                    korean.add(stem)
            rest = HANGUL_WORD.sub(" ", token).split()
        for word in rest:
            if word.isdigit():
                latin.add(word.lstrip("0") or "0")
            elif len(word) >= 3 and word not in _STOPWORDS and word[:_STEM] not in _META:
                latin.add(word[:_STEM])
    return latin, korean


# Korean auxiliary and light verbs as their stems come out (합니다, 됩니다, 해야, 주세요): they
# carry a sentence's tense and mood, not its claim, so two of them are no claim to place.
_AUXILIARY_KO = frozenset("합 됩 해야 해야 하여 해 돼 되어 주 주세 주세요 있습 없습 입 이".split())
_KO_UNITS = frozenset("원일주개년월시분초명건회번배억만천")  # a figure's unit, spaced off: "6만 원"
_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)


@functools.lru_cache(maxsize=8192)
def claim_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` that make its claim, in order: Latin stems, Korean words with their
    particle or ending off, no stopword, figure or word about the document (as
    :func:`_said_words` reads them). Cached: a document's sentences are read for each sentence
    of its page."""
    found: list[str] = []
    figure = False  # the token before was a figure: a short Korean word after it is its unit
    for token in normalize(text).split():
        # (A word of letters alone, most tokens, has no digit: no letter is one.)
        if not token.isalpha() and any(map(str.isdigit, token)):
            figure = True  # a figure ("15일", "2027"): the rules compare quantities on their own
            continue
        unit = figure and len(token) <= 3 and token[0] in _KO_UNITS
        figure = False
        if unit or token in _MONTHS:
            continue  # "6만 원까지", "March 31": part of a quantity or a date
        hangul = [] if token.isascii() else HANGUL_WORD.findall(token)
        word = ""
        if hangul:
            stem = _stem_ko("".join(hangul))
            word = "" if stem in _META_KO or stem in _AUXILIARY_KO else stem
        elif token.isalpha() and len(token) >= 3 and token not in _STOPWORDS:
            word = "" if token[:_STEM] in _META else token[:_STEM]
        if word:
            found.append(word)
    return tuple(found)


def says_nothing(text: str, title: str) -> bool:
    """``text`` (a description) has words, and none but words about the document and the
    title's (a Korean word counts as the title's where the title has it, spaces aside)."""
    said = normalize(text)
    if not said:
        return False
    title_said = normalize(title)
    title_latin, title_korean = _said_words(title_said)
    title_hangul = "" if title_said.isascii() else "".join(HANGUL_WORD.findall(title_said))
    # Word by word, to the first that says something the title does not (most descriptions
    # have one early).
    for token in said.split():
        latin, korean = _said_words(token)
        if not latin <= title_latin or not all(
            word in title_korean or word in title_hangul for word in korean
        ):
            return False
    return True


def sentences(*texts: str) -> list[str]:
    """The sentences of ``texts`` (split at a sentence's closing mark or a line break)."""
    found: list[str] = []
    for text in texts:
        for line in text.splitlines():
            found += [part for part in SENTENCE_END.split(line) if part.strip()]
    return found


@functools.lru_cache(maxsize=2048)
def sentence_units(normalized: str) -> frozenset[str]:
    """A sentence's content units without the words about the document (they are in no
    document's lines). A Korean word's particle or ending is taken off before its bigrams are
    (``문서는`` would give ``서는``, which a document may have anywhere). Cached: a page's
    sentences and its title are read by the prose's rules and by the grounded check alike."""
    # The whole text at once, not token by token: no Hangul word spans a space, and content
    # units read each token on its own, so this is the same set at a fraction of the calls.
    if normalized.isascii():  # no Hangul word to take apart (most texts)
        units = content_units(normalized)
    else:
        units = content_units(HANGUL_WORD.sub(" ", normalized))
        for hangul in HANGUL_WORD.findall(normalized):
            units |= _korean_units(hangul)
    units.difference_update(_META, _META_BIGRAMS)
    return frozenset(units)


@functools.lru_cache(maxsize=4096)
def _korean_units(word: str) -> frozenset[str]:
    """A Hangul word's content units, its particle or ending taken off (none for a word about
    the document). Cached: a sentence is read several times over (:mod:`.claims`), and the same
    words come back in every page of a language."""
    stem = _stem_ko(word)
    return frozenset() if stem in _META_KO else frozenset(content_units(stem))
