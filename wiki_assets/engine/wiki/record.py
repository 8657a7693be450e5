"""The typed page record: everything a page shows, read once from the journal entry.

The journal keeps a page's result as the JSON object it has always stored; this record is built
from it where a page is composed (:func:`wiki_assets.engine.wiki.links.page_of`), so the renderer
reads typed fields instead of string keys. Results journaled by older versions may lack the later
fields; they get the defaults those versions rendered with: key points journaled as plain
strings, or as a draft's points before their evidence was checked, are ``unchecked``, and a
result without ``flags`` has no verdict (``None``, shown as ``unchecked``); one without
``summarized`` was summarized (extractive pages came later). Topics that are placeholders or junk
(:func:`~wiki_assets.engine.quality.topics.kept_topics`) are left out, also of a result journaled
before those checks: no page or index lists them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from wiki_assets.engine.quality.evidence import PointCheck, Status
from wiki_assets.engine.quality.sentences import (
    ProseCheck,
    SentenceCheck,
    opening_line,
    page_line,
)
from wiki_assets.engine.quality.topics import kept_topics
from wiki_assets.engine.quality.verdict import Verdict
from wiki_assets.engine.state.journal import Entry
from wiki_assets.engine.text.normalize import wordless


@dataclass(frozen=True, slots=True)
class Link:
    page: str  # the target's page, relative to the wiki root
    title: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Page:
    """One wiki page, with the links it shows (only to pages that exist)."""

    name: str  # the page's path relative to the wiki root
    source: str  # the document's path relative to the synced root
    source_hash: str
    title: str
    description: str
    summary: str
    key_points: tuple[PointCheck, ...]
    topics: tuple[str, ...]
    language: str
    parts: int  # how many parts the document was summarized in (1: read whole)
    model: str
    prompt_version: str
    generated: str  # ISO time the model answered
    prompt_tokens: int
    completion_tokens: int
    hit_max_tokens: bool
    related: tuple[Link, ...] = ()
    backlinks: tuple[Link, ...] = ()
    # The documents nearest in meaning that its model was not offered and it does not link
    # (engine/state/meaning_links.py): shown with the related links, marked as such.
    by_meaning: tuple[Link, ...] = ()
    verdict: Verdict | None = None  # None: journaled before pages were checked
    # False: an extractive page (a flagged answer replaced by the document's own title, headings
    # and opening sentences: engine.quality.extractive_page); ``summary`` is that opening.
    summarized: bool = True
    headings: tuple[str, ...] = ()
    # True (with summarized False): the key points are the lines the model picked, on a page
    # in a language it does not write (engine/llm/compact.py), not a flagged answer replaced.
    picked: bool = False
    original: str | None = None  # the link to the document's file (relative to the page)
    extractor: str | None = None  # what read its text (``pdf/1``); None: plain text
    ocr: bool = False  # its text was read from pictures by OCR (a scan, an image)
    # Each sentence of the description and the summary as checked against the document (none:
    # journaled before sentences were checked, or a page without the model's prose).
    prose: tuple[SentenceCheck, ...] = ()
    # The first sentence of the document's opening, kept where nothing of the description may
    # be quoted (the index lists the page by it then).
    opening: str = ""

    def __post_init__(self) -> None:
        # A page built by hand may list its points as plain strings, like old results.
        if any(isinstance(point, str) for point in self.key_points):
            points = tuple(
                PointCheck(point, Status.UNCHECKED) if isinstance(point, str) else point
                for point in self.key_points
            )
            object.__setattr__(self, "key_points", points)

    @property
    def one_line(self) -> str:
        """The page in one line, as the index lists it: what may be quoted of its description
        (:func:`~wiki_assets.engine.quality.sentences.page_line`); for a page the model did not
        summarize, the first sentence of the document's opening."""
        if not self.summarized:
            return opening_line(self.summary)
        return page_line(self.description, self.prose, self.opening)

    @property
    def verified_points(self) -> int:
        return sum(1 for point in self.key_points if point.verified)

    @classmethod
    def of(
        cls,
        entry: Entry,
        related: Iterable[Link] = (),
        backlinks: Iterable[Link] = (),
        by_meaning: Iterable[Link] = (),
    ) -> Page:
        """The page of a journal entry that has one (a page name and a result)."""
        result = entry.result
        assert entry.page is not None and result is not None
        return cls(
            name=entry.page,
            source=entry.path,
            source_hash=entry.content_hash,
            title=result["title"],
            # A description or summary with no word in it ("-") is none: the page shows nothing.
            description=_said(result.get("description", "")),
            summary=_said(result["summary"]),
            key_points=tuple(
                point
                for point in map(PointCheck.from_json, result.get("key_points") or ())
                if point is not None
            ),
            topics=tuple(kept_topics(result.get("topics") or ())),
            language=result.get("language", ""),
            parts=result.get("parts", 1),
            model=result["model"],
            prompt_version=result["prompt_version"],
            generated=result["generated"],
            prompt_tokens=result["prompt_tokens"],
            completion_tokens=result["completion_tokens"],
            hit_max_tokens=result.get("finish_reason") == "length",
            related=tuple(related),
            backlinks=tuple(backlinks),
            by_meaning=tuple(by_meaning),
            verdict=Verdict.of(result["flags"]) if "flags" in result else None,
            summarized=result.get("summarized", True),
            headings=tuple(result.get("headings") or ()),
            picked=result.get("picked", False),
            original=result.get("original"),
            extractor=result.get("extractor"),
            ocr=bool(result.get("ocr")),
            prose=ProseCheck.from_json(result.get("prose")).sentences,
            opening=str(result.get("opening") or ""),
        )


def _said(text: str) -> str:
    return "" if wordless(text) else text


def now_iso() -> str:
    """The time a result is recorded, as its page shows it (``generated``)."""
    return datetime.now(UTC).isoformat(timespec="seconds")
