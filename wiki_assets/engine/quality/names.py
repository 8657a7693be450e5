"""The names a sentence gives, of people, teams and products, in English and Korean: which of them
its document never gives (:func:`absent_name`), and which stand where a line of the document
gives another name in their place (:func:`swapped_names`). Telling a name takes what a reader
takes: capitalised words that are not a sentence's common first word, and a Korean word before
a role or a form of address (김민수 팀장) or ending in a team's word (인사팀)."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence

from wiki_assets.engine.quality.units import normalize
from wiki_assets.engine.text.scripts import HANGUL_WORD

__all__ = ["absent_name", "swapped_names"]

# Capitalised words in a row (an acronym among them). It opens with its capital, the word's start
# told after it (no word character before), so the search skips from capital to capital in C.
_LATIN_NAME = re.compile(r"[A-Z](?<!\w[A-Z])[a-zA-Z]+(?:\s+[A-Z][a-zA-Z]+)*\b")
_NOT_NAMES = frozenset(
    "the a an this that these those it its i we our you your they their he she his her "
    "employees employee staff all each every any some no not if when in on at for from to of "
    "by with and or but please note also".split()
)
# Korean: a word before one of these (a role, a form of address) or ending in one of the
# team-like words is a name: 김민수 팀장, 인사팀, 보안센터.
_ROLES = ("팀장", "부장", "과장", "차장", "대리", "사원", "이사", "대표", "실장", "본부장",
          "센터장", "매니저", "님", "씨", "담당자", "책임", "선임", "수석", "주임", "파트장",
          "리드", "상무", "전무", "사장", "연구원")  # fmt: skip
_TEAMS = ("팀", "부", "실", "센터", "본부", "그룹")
_PARTICLE = re.compile(r"(?:은|는|이|가|을|를|에게|에서|의|와|과|로|으로|께서|도|만)$")


@functools.lru_cache(maxsize=1024)
def _names(text: str) -> tuple[tuple[str, str, str], ...]:
    """(name, the word before it, the word after it) of each name ``text`` gives (the words
    normalised); a common word that starts a sentence is not part of a name. Cached: a line
    near several sentences is read for each."""
    text = unicodedata.normalize("NFKC", text)
    found: list[tuple[str, str, str]] = []
    for match in _LATIN_NAME.finditer(text):
        words = match.group(0).split()
        while words and words[0].lower() in _NOT_NAMES:
            words = words[1:]
        if not words:
            continue
        name = " ".join(words)
        before = text[: match.start()].split()[-1:] or [""]
        after = text[match.end() :].split()[:1] or [""]
        found.append((name, normalize(before[0]), normalize(after[0])))
    korean = [] if text.isascii() else HANGUL_WORD.findall(text)
    for i, word in enumerate(korean):
        stem = _PARTICLE.sub("", word) if len(word) > 2 else word
        next_word = korean[i + 1] if i + 1 < len(korean) else ""
        if next_word.startswith(_ROLES) or (len(stem) >= 3 and stem.endswith(_TEAMS)):
            found.append((stem, korean[i - 1] if i else "", _PARTICLE.sub("", next_word)))
    return tuple(found)


def swapped_names(
    sentence: str, lines: Sequence[tuple[int, str]], document: str
) -> Iterator[tuple[int, str, str]]:
    """Each name of ``sentence`` that the document never gives, where a line of ``lines`` gives
    another in the same place (the same word before or after it): (that line, the sentence's
    name, the document's)."""
    own = _names(sentence)
    owned = {normalize(mine) for mine, _, _ in own}
    for name, before, after in own:
        if f" {normalize(name)} " in document or not normalize(name):
            continue
        for number, text in lines:
            for other, other_before, other_after in _names(text):
                mine, theirs = ({w.removesuffix("s") for w in normalize(n).split()}
                                for n in (name, other))  # fmt: skip
                if normalize(other) in owned or mine <= theirs or theirs <= mine:
                    continue  # the same, longer or shorter, or plural ("Berlin Share", "Mondays")
                if (before and before == other_before) or (after and after == other_after):
                    yield number, name, other


# Common Korean family names: a three-syllable word that starts with one and stands before a role
# (이지은 팀장) is a person's name; "소속 팀장" or "담당 팀장" is not.
_SURNAMES = frozenset(
    "김이박최정강조윤장임한오서신권황안송류전홍고문양손배백허유남심노하곽성차주우구민진지엄채원천"
)


def absent_name(sentence: str, document: str) -> str:
    """A name of ``sentence`` that the document never gives, where it is surely a name: two
    capitalised words besides the sentence's first, one of them new ("Berlin Share" of two
    run-together sentences is none), or a Korean full name before a role."""
    text = unicodedata.normalize("NFKC", sentence)
    for match in _LATIN_NAME.finditer(text):
        words = [w for w in match.group(0).split() if w.lower() not in _NOT_NAMES]
        # (Most matches are one capitalised word: no name, whatever the document gives.)
        if len(words) - (match.start() == 0) >= 2 and any(
            f" {normalize(word)} " not in document for word in words
        ):
            return " ".join(words)
    if text.isascii():
        return ""  # no Korean name in it
    # A full name is three syllables as written: 이지은 keeps its 은, which is no particle here.
    words = HANGUL_WORD.findall(text)
    korean = (word for word, after in zip(words, words[1:], strict=False)
              if len(word) == 3 and after.startswith(_ROLES))  # fmt: skip
    return next((n for n in korean if n[0] in _SURNAMES and n not in document), "")
