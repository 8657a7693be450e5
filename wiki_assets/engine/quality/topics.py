"""Which topics name a subject, and which are junk a page leaves out.

A topic is a subject of the document in a few words (``annual leave``, ``휴가 정책``). Models,
small ones above all, fill the field with other things:

* a **placeholder**: ``tag1``, ``up-to-5-short-tags``, ``string``, a number or a timestamp;
* a **sentence fragment**: the start of a sentence cut off (``The-document-is-for-the``,
  ``this-page-has-been-added``, ``이 문서는``), led or ended by a function word (an article, a
  pronoun, a preposition, an auxiliary; in Korean a demonstrative, a particle or a verb ending),
  or too many words for a subject;
* a **field name**: the schema's or a catalogue's (``description``, ``key points``, ``요약``), or
  only words about the document itself (``this page``, ``본 문서``).

:func:`kept_topics` is what a page and the index show: every topic but these. The checks name
the first kind ``placeholder_topics`` and the others ``junk_topics``
(:mod:`~wiki_assets.engine.quality.checks`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from wiki_assets.engine.quality.units import normalize
from wiki_assets.engine.text.scripts import letters

__all__ = ["MAX_TOPIC_WORDS", "junk_topic", "kept_topics", "placeholder_topic"]

MAX_TOPIC_WORDS = 5  # "a few words each": more is a sentence, not a subject

_PLACEHOLDER = re.compile(
    r"^(?:(?:tag|topic|keyword|label|category|string|example|sample|item|value|name|text|"
    r"placeholder|todo|tbd|none|null|n a|lorem|ipsum|foo|bar|xxx)s?(?: ?\d+)?|\d+|.*\bup to \d.*|"
    r".*\bshort (?:topic )?tags?\b.*)$"
)


@functools.lru_cache(maxsize=1024)  # asked of each topic thrice: kept_topics and two checks
def placeholder_topic(topic: str) -> bool:
    """A topic that names no subject: ``tag1``, ``up-to-5-short-tags``, ``string``, a number or
    a timestamp (more digits than letters)."""
    said = normalize(topic)
    return bool(_PLACEHOLDER.match(said)) or letters(said) <= sum(map(str.isdigit, said))


# Words that do not start a subject: articles, demonstratives, pronouns, auxiliaries and
# conjunctions, and the prepositions a cut-off sentence goes on with. (Not "on", "in", "up" or
# "off": "on call", "in app", "up time" are how some write subjects.)
_LEADING = frozenset(
    "a an the this that these those it its it's they them their we our you your he she his her "
    "i my me is are was were be been being has have had do does did will would can could should "
    "must may might shall and or but nor so yet if then than because although while whether "
    "which who whom whose what when where why how of for to with by as at from about into onto "
    "there here also not no very".split()
)
# Words that do not end one: a sentence cut after its article, preposition or verb.
_TRAILING = frozenset(
    "a an the this that these those its their our your my his her and or but nor if than "
    "because although whether which who whom whose of for to with by as at from about into onto "
    "is are was were be been being has have had do does did will would can could should must "
    "may might shall".split()
)
# Or after its object pronoun ("People-team-to-ensure-it"); "it" only as written in lower case:
# "IT", "Corporate IT" name a subject.
_TRAILING_OBJECTS = frozenset("it them us him me".split())
_IT = re.compile(r"(?<![A-Za-z])IT(?![A-Za-z])")
# Korean: a demonstrative before a noun ("이 문서", "본 페이지"), or a particle or verb ending
# after one ("문서는", "대한", "설명합니다"): a subject is a noun phrase, without either.
_LEADING_KO = frozenset("이 그 저 이런 그런 저런 이번 본 해당 여기 이것 그것 저것 우리".split())
_TRAILING_KO = re.compile(
    r"(?:는|를|니다|이다|한다|된다|했다|있다|없다|대한|위한|관한|대해|위해|통해|있는|없는|하는|"
    r"되는|하여|해서|하고|이며|에서|에게|에는|으로|입니까|세요|어요|아요|나요|까요|네요|지요)$"
)
# Field names of the page's schema and of a catalogue entry, and words about the document itself:
# a topic made only of these names nothing the document is about.
_FIELDS = frozenset(
    "title titles description descriptions summary summaries key point points keypoint "
    "keypoints key_points key_point topic topics tag tags keyword keywords related quote quotes "
    "line lines path paths reason reasons heading headings document documents doc docs "
    "text field fields value values entry entries item items info information overview "
    "detail details "
    "제목 설명 요약 핵심 주제 태그 키워드 관련 인용 "
    "출처 문서 페이지 내용 정보 본문 항목 개요 요점".split()
)
_SLUG_PARTS = 3  # ``a-b-c``: a slug of three words or more is read as its words


def _words(topic: str) -> list[str]:
    """The topic's words as written (``on-call`` stays one word), a slug of several words
    (``The-document-is-for-the``) read as its words; edge punctuation dropped, lower case."""
    text = unicodedata.normalize("NFKC", topic).lower()
    words = text.split()
    if len(words) == 1 and len(re.split(r"[-_]+", words[0].strip("-_"))) >= _SLUG_PARTS:
        words = re.split(r"[-_]+", words[0])
    return [w for w in (word.strip("\"'`.,;:!?()[]{}<>*#") for word in words) if w]


@functools.lru_cache(maxsize=1024)  # asked of each topic thrice: kept_topics and two checks
def junk_topic(topic: str) -> bool:
    """A topic that is a sentence fragment or a field name (module docstring); placeholders are
    :func:`placeholder_topic`'s."""
    words = _words(topic)
    if not words:
        return False
    if len(words) > MAX_TOPIC_WORDS:
        return True
    first, last = words[0], words[-1]
    acronym = _IT.search(topic) is not None  # "IT" is no pronoun
    if (first in _LEADING and not (first == "it" and acronym)) or last in _TRAILING:
        return True
    if first in _LEADING_KO or (last in _TRAILING_OBJECTS and not (last == "it" and acronym)):
        return True
    if len(last) >= 3 and _TRAILING_KO.search(last):
        return True  # a particle or an ending after a word ("문서는", "합니다", "주세요")
    named = normalize(" ".join(words)).replace("_", " ").split()
    return all(word in _FIELDS for word in named)


def kept_topics(topics: Iterable[str]) -> list[str]:
    """The topics a page and the index show: not placeholders, not junk."""
    return [topic for topic in topics if not placeholder_topic(topic) and not junk_topic(topic)]
