"""Checks on a written page that need no strong model, each named by its :class:`Reason`.

Each check is a small function of the page as it will be published (:class:`Written`) that is
true when the page trips it; :data:`CHECKS` holds them in reason order and :func:`check_page`
runs them all into a :class:`Verdict`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any

from wiki_assets.engine.documents.language import LANGUAGES, detect_language
from wiki_assets.engine.prompting import prompts
from wiki_assets.engine.prompting.page import PageDraft
from wiki_assets.engine.quality.evidence import PointCheck
from wiki_assets.engine.quality.passages import DocumentUnits, grounded
from wiki_assets.engine.quality.prose import says_nothing
from wiki_assets.engine.quality.sentences import NOTHING_CHECKED, ProseCheck, Support
from wiki_assets.engine.quality.topics import junk_topic, placeholder_topic
from wiki_assets.engine.quality.units import normalize, units_and_numbers, units_within
from wiki_assets.engine.quality.verdict import Reason, Verdict
from wiki_assets.engine.text.normalize import wordless
from wiki_assets.engine.text.scripts import letters

__all__ = ["CHECKS", "Written", "check_page"]


@dataclass(frozen=True, slots=True)
class Written:
    """A page as it will be published, with what the checks compare it to."""

    title: str  # the title the page shows (the document's own heading, where it has one)
    description: str
    summary: str
    points: tuple[PointCheck, ...]
    topics: tuple[str, ...]
    links: tuple[tuple[str, str], ...]  # (path, reason) of each related link
    document: str  # the document's full original text
    language: str  # the language the page should be in: a code ("en") or a name ("English")
    finish_reason: str  # the model's, for the page's answer ("length": cut by max_tokens)
    # False: the model wrote no prose (it picked the key lines of a document in a language it
    # does not write; engine/llm/compact.py), so the checks of its prose do not apply.
    prose: bool = True
    checked: ProseCheck = NOTHING_CHECKED  # each sentence of the description and the summary
    # The document's lines as the prose's rules read them, where the caller has them already.
    units: DocumentUnits | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(
        cls,
        draft: PageDraft,
        points: Sequence[PointCheck],
        *,
        document: str,
        title: str,
        language: str,
        finish_reason: str,
        prose: bool = True,
        checked: ProseCheck = NOTHING_CHECKED,
        units: DocumentUnits | None = None,
    ) -> Written:
        return cls(
            title=title or draft.title,
            description=draft.description,
            summary=draft.summary,
            points=tuple(points),
            topics=tuple(draft.topics),
            links=tuple((link.path, link.reason) for link in draft.related),
            document=document,
            language=language,
            finish_reason=finish_reason,
            prose=prose,
            checked=checked,
            units=units,
        )

    def sentences(self) -> list[str]:
        """What the model wrote in sentences: description, summary, the key points together."""
        return [self.description, self.summary, " ".join(point.text for point in self.points)]

    def everything(self) -> Iterator[str]:
        """Every text the model wrote that the page shows."""
        yield from self.sentences()
        yield from self.topics
        yield from (reason for _, reason in self.links)


def hit_max_tokens(page: Written) -> bool:
    return page.finish_reason == "length"


_CODES = {**{code: code for code in LANGUAGES}, **{n.lower(): c for c, n in LANGUAGES.items()}}
_MIN_LETTERS = 12  # fewer letters than this say nothing about a language
_LATIN_SHARE = 0.7  # of the letters of an English text at least
_PAST_LATIN = re.compile("[^\x00-\u024f]+")


def wrong_language(page: Written) -> bool:
    """A part of the prose (description, summary, key points) in another language than the
    page's. Only languages the detector knows are checked; an English page must also be mostly
    Latin letters (a small model drifts into other scripts too)."""
    expected = _CODES.get(page.language.strip().lower())
    if expected is None:
        return False
    for text in page.sentences():
        if expected != "en":
            # Letters counted as far as it takes: only English is asked its share of them.
            enough = len(list(islice(filter(str.isalpha, text), _MIN_LETTERS))) == _MIN_LETTERS
            if enough and detect_language(text) != expected:
                return True
            continue
        if text.isascii():
            continue  # Latin letters only and no Hangul: English, as far as this check can tell
        found = letters(text)
        if found < _MIN_LETTERS:
            continue
        if detect_language(text) != expected:
            return True
        # The letters past Latin Extended-B, counted in C like the others.
        other = letters("".join(_PAST_LATIN.findall(text)))
        if found - other < _LATIN_SHARE * found:
            return True
    return False


_SHINGLE = 5  # words in a row shared with the prompt that make an echo
# Markup, field names and schema phrasing: an echo when the page has them and the document not.
_MARKERS = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"</?\s*(?:document|part)\s*>|&lt;/?(?:document|part)&gt;",
        r"\b(?:key_points|prompt_version|finish_reason|response_format)\b",
        r'"\s*(?:title|description|summary|key_points|topics|related|text|quote|lines|path|reason)'
        r'\s*"\s*:',
        r"\bjson (?:object|schema)\b",
        r"\bup-to-\d",
    )
]


def prompt_echo(page: Written) -> bool:
    """The page repeats the prompt: its markup or field names, or five words in a row of its
    instructions or of the schema's descriptions, where the document does not have them."""
    texts = list(page.everything())
    # One search a marker over all the texts, a NUL between two: no marker matches a NUL (nor
    # takes it for a word's character), so it finds what a search of each text finds.
    written = "\x00".join(texts)
    for marker in _MARKERS:
        if marker.search(written) and not marker.search(page.document):
            return True
    document = f" {normalize(page.document)} "
    known = _prompt_shingles()
    for text in texts:
        for shingle in _shingles(normalize(text).split()):
            if shingle in known and f" {' '.join(shingle)} " not in document:
                return True
    return False


def _shingles(words: Sequence[str], size: int = _SHINGLE) -> set[tuple[str, ...]]:
    """Each run of ``size`` words in a row, as a tuple of them: zip builds them in C, and a word
    has no space, so its words tell a run as well as its text does."""
    return set(zip(*(words[i:] for i in range(size)), strict=False))


@lru_cache(maxsize=1)
def _prompt_shingles() -> frozenset[tuple[str, ...]]:
    texts = [
        value
        for name, value in vars(prompts).items()
        if name.isupper() and isinstance(value, str) and name != "PROMPT_VERSION"
    ]
    texts += _descriptions(PageDraft.model_json_schema())
    found: set[tuple[str, ...]] = set()
    for text in texts:
        for segment in re.split(r"\{[a-z_]+\}", text):  # a placeholder breaks a run of words
            found |= _shingles(normalize(segment).split())
    return frozenset(found)


def _descriptions(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [text for value in schema.values() for text in _descriptions(value)]
    if isinstance(schema, list):
        return [text for value in schema for text in _descriptions(value)]
    return []


_OPENING_WORDS = 50  # the document's opening: its first words, title included (about 3 lines)
_COPY_SHARE = 0.6  # of a text's 4-word runs found in the opening
_COPY_RUNS = 3  # 4-word runs a text needs (fewer say too little to call copied)


def copies_opening(page: Written) -> bool:
    """The summary or the description is mostly the document's first lines, copied."""
    opening: set[tuple[str, ...]] | None = None  # read once a text has runs enough to compare
    for text in (page.summary, page.description):
        words = normalize(text).split()
        if len(words) < _COPY_RUNS + 3:
            continue  # fewer words than make that many runs of four
        runs = _shingles(words, 4)
        if len(runs) < _COPY_RUNS:
            continue
        if opening is None:
            opening = _shingles(normalize(page.document).split()[:_OPENING_WORDS], 4)
        if len(runs & opening) >= _COPY_SHARE * len(runs):
            return True
    return False


def missing_title(page: Written) -> bool:
    return not normalize(page.title)


def missing_description(page: Written) -> bool:
    return wordless(page.description)


def missing_summary(page: Written) -> bool:
    """Fewer letters than a sentence has ("35", a date): no summary to speak of."""
    return letters(page.summary) < _MIN_LETTERS


def title_is_description(page: Written) -> bool:
    """The description says nothing the title does not (``Leave policy.`` under Leave Policy)."""
    return _says_no_more(page.title, page.description)


@lru_cache(maxsize=64)  # asked twice of each page: here and by vacuous_description
def _says_no_more(title: str, description: str) -> bool:
    title, description = normalize(title), normalize(description)
    if not title or not description:
        return False
    if description == title:
        return True
    return units_within(description, units_and_numbers(title)[0])


def vacuous_description(page: Written) -> bool:
    """The description says nothing: only words about the document itself and the title's
    ("The document is about the document", "This page describes the leave policy." under Leave
    Policy, "이 문서는 휴가 정책에 대한 문서입니다"). One that is the title alone, or the title's
    words alone, is :func:`title_is_description`."""
    return not title_is_description(page) and says_nothing(page.description, page.title)


def placeholder_topics(page: Written) -> bool:
    """A topic that names no subject: ``tag1``, ``up-to-5-short-tags``, ``string``, a number or
    a timestamp (more digits than letters)."""
    return any(placeholder_topic(topic) for topic in page.topics)


def junk_topics(page: Written) -> bool:
    """A topic that is a sentence fragment (``The-document-is-for-the``, ``이 문서는``), too many
    words, or a field name (``description``, ``key points``): not a placeholder, left out of the
    page and the index all the same (:mod:`.topics`)."""
    return any(junk_topic(t) and not placeholder_topic(t) for t in page.topics)


def link_without_reason(page: Written) -> bool:
    """A related link whose reason is missing, one word, or only the target's path."""
    for path, reason in page.links:
        said = normalize(reason)
        if len(said.split()) < 2:
            return True
        # An ASCII path normalises to no longer a text: a longer reason is none of its forms.
        if path.isascii() and len(said) > len(path):
            continue
        if said in (normalize(path), normalize(path.rsplit(".", 1)[0])):
            return True
    return False


def unverified_points(page: Written) -> bool:
    """Fewer than half of the key points verified, or none: a page that states no fact from its
    document (not even one key point) is no page to trust without a look."""
    verified = sum(1 for point in page.points if point.verified)
    return verified == 0 or 2 * verified < len(page.points)


def ungrounded_summary(page: Written) -> bool:
    """No sentence of the description or the summary is found in the document (:mod:`.prose`):
    they cannot be checked against it, so the page says they are the model's unchecked words.
    Key points do not vouch for them: a small model's points are the document's own lines, its
    summary is not. A page with neither (a dash for each) has nothing to ground: it is flagged
    as missing them."""
    if wordless(page.description) and wordless(page.summary):
        return False
    document = page.units if page.units is not None else page.document
    return not grounded([page.description, page.summary], document, page.title)


def contradicted_prose(page: Written) -> bool:
    """A sentence of the description or the summary states a number, date or name the document
    gives otherwise (:mod:`.claims`)."""
    return page.checked.count(Support.CONTRADICTED) > 0


def unsupported_prose(page: Written) -> bool:
    """A sentence of the description or the summary states what the document never does, or
    says the other way round (:mod:`.claims`)."""
    return page.checked.count(Support.UNSUPPORTED) > 0


CHECKS: dict[Reason, Callable[[Written], bool]] = {
    Reason.HIT_MAX_TOKENS: hit_max_tokens,
    Reason.WRONG_LANGUAGE: wrong_language,
    Reason.PROMPT_ECHO: prompt_echo,
    Reason.COPIES_OPENING: copies_opening,
    Reason.MISSING_TITLE: missing_title,
    Reason.MISSING_DESCRIPTION: missing_description,
    Reason.MISSING_SUMMARY: missing_summary,
    Reason.TITLE_IS_DESCRIPTION: title_is_description,
    Reason.VACUOUS_DESCRIPTION: vacuous_description,
    Reason.PLACEHOLDER_TOPICS: placeholder_topics,
    Reason.JUNK_TOPICS: junk_topics,
    Reason.LINK_WITHOUT_REASON: link_without_reason,
    Reason.UNVERIFIED_POINTS: unverified_points,
    Reason.UNGROUNDED_SUMMARY: ungrounded_summary,
    Reason.CONTRADICTED_PROSE: contradicted_prose,
    Reason.UNSUPPORTED_PROSE: unsupported_prose,
}


# What still applies to a page whose model wrote no prose: its answer, its points, its links.
WITHOUT_PROSE = frozenset(
    {Reason.HIT_MAX_TOKENS, Reason.LINK_WITHOUT_REASON, Reason.UNVERIFIED_POINTS}
)


def check_page(page: Written) -> Verdict:
    """Every check on ``page`` (those of :data:`WITHOUT_PROSE` where the model wrote no prose):
    ok, or flagged with the reasons it trips."""
    return Verdict.of(
        reason
        for reason, trips in CHECKS.items()
        if (page.prose or reason in WITHOUT_PROSE) and trips(page)
    )
