"""How a page shows its points and verdict: verified points with the lines they stand on,
unverified ones apart and never as fact, the verdict and counts in front matter; index.md lists
flagged pages under "Needs review"; results journaled before checks existed still render."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from conftest import page_record

from wiki_assets.engine.prompting.page import PageDraft
from wiki_assets.engine.quality import PointCheck, Status, Verdict, assess
from wiki_assets.engine.quality.sentences import DESCRIPTION, SUMMARY, SentenceCheck, Support
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.checks_shown import UNCHECKED_NOTES, UNGROUNDED_NOTES, UNVERIFIED_NOTE
from wiki_assets.engine.wiki.files import INDEX_PAGE, Wiki
from wiki_assets.engine.wiki.index import build_index
from wiki_assets.engine.wiki.record import Link, Page
from wiki_assets.engine.wiki.render import render_index, render_page

# What a journaled result records of its answer, beside the page's own fields.
ANSWERED: dict[str, Any] = {
    "model": "m",
    "prompt_version": "1",
    "generated": "now",
    "prompt_tokens": 1,
    "completion_tokens": 1,
    "finish_reason": "stop",
}


def front_matter(text: str) -> dict[str, Any]:
    header = text.split("\n---\n", 1)[0].splitlines()[1:]
    return {key: json.loads(value) for key, value in (line.split(": ", 1) for line in header)}


def page(points: tuple[PointCheck, ...], verdict: Verdict | None, cut: bool = False) -> Page:
    return page_record(
        "people/leave.md",
        title="Leave Policy",
        description="How much leave staff get.",
        summary="Seoul and Berlin differ.",
        key_points=points,
        topics=("leave",),
        hit_max_tokens=cut,
        verdict=verdict,
    )


VERIFIED = PointCheck("Berlin staff get 28 <working> days.", Status.VERIFIED, (7, 7))
RANGE = PointCheck("Seoul staff get 20 days.", Status.VERIFIED, (6, 8))
INVENTED = PointCheck("It is an object storage system.", Status.NOT_FOUND)
MISQUOTED = PointCheck("Berlin closes in August.", Status.DISAGREES, (7, 7))


def test_verified_points_show_their_lines_and_unverified_ones_stand_apart() -> None:
    flagged = Verdict.of(["unverified_points", "hit_max_tokens"])
    text = render_page(page((VERIFIED, INVENTED, RANGE, MISQUOTED), flagged, cut=True))
    meta = front_matter(text)
    assert meta["points_verified"] == 2 and meta["points_total"] == 4
    assert meta["verdict"] == "flagged"
    assert meta["flags"] == ["hit_max_tokens", "unverified_points"]
    body = text.split("\n---\n", 1)[1]
    key_points = body.split("## Key points\n\n", 1)[1].split("\n\n", 1)[0]
    assert key_points.splitlines() == [
        "- Berlin staff get 28 &lt;working&gt; days. *(line 7)*",
        "- Seoul staff get 20 days. *(lines 6\u20138)*",
    ]
    unverified = body.split("## Not verified\n\n", 1)[1]
    assert unverified.startswith(UNVERIFIED_NOTE + "\n\n")
    assert "- It is an object storage system. *(not found in the document)*" in unverified
    assert "- Berlin closes in August. *(the cited text says something else)*" in unverified
    assert "object storage" not in key_points and body.index("## Key points") < body.index(
        "## Not verified"
    )
    # One callout says why the page needs review (the max_tokens one is among the reasons).
    assert body.count("[!warning]") == 1
    assert "> [!warning] Needs review: the model hit the max_tokens limit" in body


def test_an_ok_page_has_no_review_callout_and_no_unverified_section() -> None:
    text = render_page(page((VERIFIED,), Verdict()))
    meta = front_matter(text)
    assert (meta["verdict"], meta["flags"], meta["points_verified"]) == ("ok", [], 1)
    assert "[!warning]" not in text and "## Not verified" not in text


def test_results_journaled_before_checks_still_render(tmp_path: Path) -> None:
    """An old result: plain-string key points, no flags, cut by max_tokens."""
    old: dict[str, Any] = {
        "title": "Leave Policy",
        "description": "How much leave staff get.",
        "summary": "Seoul and Berlin differ.",
        "key_points": ["Berlin staff get 28 days."],
        "topics": ["leave"],
        "related": [],
        "model": "m",
        "prompt_version": "2026-11-30.2",
        "generated": "2026-11-30T00:00:00+00:00",
        "prompt_tokens": 10,
        "completion_tokens": 200,
        "finish_reason": "length",
    }
    _build(tmp_path, {"people/leave.md": old})
    text = (tmp_path / "people" / "leave.md").read_text(encoding="utf-8")
    meta = front_matter(text)
    assert meta["verdict"] == "unchecked" and meta["flags"] == []
    assert (meta["points_verified"], meta["points_total"]) == (0, 1)
    assert "- Berlin staff get 28 days. *(not checked)*" in text.split("## Not verified", 1)[1]
    assert "> [!warning] The model hit the max_tokens limit on this page." in text
    assert "## Needs review" not in (tmp_path / INDEX_PAGE).read_text(encoding="utf-8")


def test_index_lists_flagged_pages_under_needs_review(tmp_path: Path) -> None:
    def result(title: str, flags: list[str]) -> dict[str, Any]:
        return {
            "title": title,
            "description": f"About {title}.",
            "summary": "S.",
            "key_points": [VERIFIED.to_json()],
            "topics": [],
            "related": [],
            **ANSWERED,
            "flags": flags,
        }

    _build(
        tmp_path,
        {
            "a/good.md": result("Good", []),
            "b/echo.md": result("Echo <x>", ["unverified_points", "prompt_echo"]),
            "a/cut.md": result("Cut", ["hit_max_tokens"]),
        },
    )
    index = (tmp_path / INDEX_PAGE).read_text(encoding="utf-8")
    assert "3 pages in 2 collections. 2 need review.\n" in index
    review = index.split("## Needs review\n\n", 1)[1].split("\n\n", 1)[0]
    assert review.splitlines() == [
        "- [Cut](a/cut.md) — hit_max_tokens",
        "- [Echo &lt;x&gt;](b/echo.md) — prompt_echo, unverified_points",
    ]
    assert index.index("## Needs review") < index.index("## By collection")
    good = front_matter((tmp_path / "a" / "good.md").read_text(encoding="utf-8"))
    assert good["verdict"] == "ok" and good["points_verified"] == 1
    assert "## Needs review" not in render_index(1, [("a", [Link("a/good.md", "Good")])], [])


def test_a_page_says_when_its_prose_is_unchecked_in_its_language() -> None:
    """``ungrounded_summary``: between the description and the summary, a note in the page's
    language says they are the model's unchecked words; a page without it has no such note."""
    flagged = Verdict.of(["ungrounded_summary"])
    english = render_page(page((VERIFIED,), flagged))
    body = english.split("\n---\n", 1)[1]
    note = UNGROUNDED_NOTES["en"]
    assert note in body and "model's own words" in note
    assert body.index("> How much leave") < body.index(note) < body.index("Seoul and Berlin")
    korean = dataclasses.replace(
        page((VERIFIED,), flagged),
        title="휴가 정책",
        description="이 문서는 휴가 정책에 대한 문서입니다.",
        summary="모든 직원이 꼭 읽어야 하는 문서입니다.",
        language="Korean",
    )
    text = render_page(korean)
    assert UNGROUNDED_NOTES["ko"] in text and note not in text
    assert "모델이 쓴 문장" in UNGROUNDED_NOTES["ko"]
    assert "[!caution]" not in render_page(page((VERIFIED,), Verdict.of(["prompt_echo"])))
    # An extractive page shows the document's own words: nothing to warn of.
    extract = dataclasses.replace(page((), flagged), summarized=False)
    assert "[!caution]" not in render_page(extract)


def test_a_page_whose_prose_is_mostly_unchecked_says_so_in_its_language() -> None:
    def checked(*statuses: Support) -> tuple[SentenceCheck, ...]:
        parts = [DESCRIPTION, *[SUMMARY] * (len(statuses) - 1)]
        pairs = enumerate(zip(parts, statuses, strict=True))
        return tuple(SentenceCheck(f"S{i}.", part, status) for i, (part, status) in pairs)

    mostly = dataclasses.replace(
        page((VERIFIED,), Verdict()),
        description="S0.",
        summary="S1. S2. S3.",
        prose=checked(Support.SUPPORTED, *[Support.UNCHECKED] * 3),
    )
    body = render_page(mostly).split("\n---\n", 1)[1]
    note = UNCHECKED_NOTES["en"].format(unchecked=3, total=4)
    assert note in body and "3 of the 4 sentences below" in note
    assert body.index("> S0.") < body.index(note) < body.index("S1.")
    korean = dataclasses.replace(mostly, language="Korean")
    assert UNCHECKED_NOTES["ko"].format(unchecked=3, total=4) in render_page(korean)
    # Half or fewer unchecked: no note; nor where the ungrounded note already says it.
    half = dataclasses.replace(
        mostly, prose=checked(Support.SUPPORTED, Support.SUPPORTED, *[Support.UNCHECKED] * 2)
    )
    assert "Mostly unchecked" not in render_page(half)
    ungrounded = dataclasses.replace(mostly, verdict=Verdict.of(["ungrounded_summary"]))
    assert "Mostly unchecked" not in render_page(ungrounded)


def test_junk_topics_are_on_no_page_and_not_in_the_index(tmp_path: Path) -> None:
    """Topics a small model wrote as a cut-off sentence or a field name, journaled before the
    check existed (no junk_topics flag): the pages, the catalog and "By topic" leave them out;
    the subjects the pages share stay."""

    def result(title: str, topics: list[str]) -> dict[str, Any]:
        return {
            "title": title,
            "description": f"How {title} works in Seoul.",
            "summary": "S.",
            "key_points": [VERIFIED.to_json()],
            "topics": topics,
            "related": [],
            **ANSWERED,
            "flags": [],
        }

    junk = ["The-document-is-for-the", "description", "this-page-has-been-added", "이 문서는"]
    _build(
        tmp_path,
        {
            "a/leave.md": result("Leave", [*junk, "annual leave"]),
            "a/travel.md": result("Travel", [*junk, "annual leave", "visas"]),
        },
    )
    index = (tmp_path / INDEX_PAGE).read_text(encoding="utf-8")
    topics = index.split("## By topic\n\n", 1)[1]
    assert [line for line in topics.splitlines() if line.startswith("### ")] == [
        "### annual leave (2)"
    ]
    assert "the document is for the" not in index.lower() and "description (2)" not in index
    for name in ("a/leave.md", "a/travel.md"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        tags = front_matter(text)["tags"]
        assert "annual-leave" in tags and not any("document" in tag for tag in tags)
        assert (
            "#The-document" not in text and "#description" not in text and "이-문서는" not in text
        )
    catalog = [json.loads(line) for line in (tmp_path / "catalog.jsonl").read_text().splitlines()]
    assert [record["topics"] for record in catalog] == [["annual leave"], ["annual leave", "visas"]]


def _build(tmp_path: Path, results: dict[str, dict[str, Any]]) -> None:
    """Each result journaled as the written page at its path, then an index build over the wiki
    at ``tmp_path`` (which writes the pages, ``index.md`` and ``catalog.jsonl``)."""
    wiki = Wiki(tmp_path)
    with Journal(StateStore(wiki.state_dir)) as journal:
        for path, result in results.items():
            _record(journal, path, result)
        build_index(journal, wiki)


def _record(journal: Journal, path: str, result: dict[str, Any]) -> None:
    journal.record_summary(
        path=path,
        collection=path.split("/")[0],
        content_hash="h",
        fingerprint="f",
        page=path,
        model="m",
        result=result,
    )
    journal.mark_written([path])


def test_a_description_and_summary_of_a_dash_show_as_none(tmp_path: Path) -> None:
    """A small model answered "-" for both: the checks flag them missing, and the page, the
    index and the catalog show no description and no summary (not a dash, which the mark after
    it would turn into a list item, "- *(unchecked)*")."""
    document = "# Architecture\n\nThe gateway terminates TLS and checks account keys.\n"
    draft = PageDraft(title="Architecture", description="-", summary="-", key_points=[])
    assessment = assess(
        draft, document, title="Architecture", language="English", finish_reason="stop"
    )
    assert assessment.prose.sentences == ()  # a dash is no sentence to check
    flags = set(assessment.verdict.reasons)
    assert {"missing_description", "missing_summary"} <= flags
    assert "ungrounded_summary" not in flags  # no sentence to ground, none to call unchecked
    result = {
        **draft.model_dump(),
        **assessment.result_fields(),
        **ANSWERED,
    }
    _build(tmp_path, {"eng/architecture.md": result})
    text = (tmp_path / "eng/architecture.md").read_text(encoding="utf-8")
    assert front_matter(text)["description"] == ""
    body = text.split("\n---\n", 1)[1]
    assert "(unchecked)" not in body
    assert not any(
        line.strip(" >") == "-" or line.startswith(("- *", "> -")) for line in body.splitlines()
    )
    assert "the page has no description" in body  # the review callout says why
    assert "[!caution] Unchecked" not in body
    index = (tmp_path / INDEX_PAGE).read_text(encoding="utf-8")
    listed = [line for line in index.splitlines() if "(eng/architecture.md)" in line]
    assert listed and all(not line.endswith(" — -") for line in listed)
    catalog = [json.loads(line) for line in (tmp_path / "catalog.jsonl").read_text().splitlines()]
    assert catalog[0]["description"] == "" and catalog[0]["summary"] == ""
