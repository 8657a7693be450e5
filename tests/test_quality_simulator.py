"""The simulator's faithful and fabricating models, asked for every page of the sample corpus
over real HTTP by the engine's own client, and judged by the evidence verifier and the page
checks: the faithful model's points are verified (at least 0.9) and its pages pass; the
fabricating model's fluent points are not (at most 0.1) and every one of its pages is flagged.
At the default max_tokens the faithful preset writes pages that fit it, as a demo shows them.
Then a document in numbered parts: the faithful notes keep the whole document's line numbers."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter

import openai
import pytest
from conftest import SAMPLE, page_record

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.documents.language import LANGUAGES, detect_language
from wiki_assets.engine.documents.lines import number_lines
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.prompting.budget import split_to_budget
from wiki_assets.engine.prompting.candidate import Candidate, PageRequest
from wiki_assets.engine.prompting.page import PageDraft, draft_schema
from wiki_assets.engine.prompting.prompts import CHUNK_USER
from wiki_assets.engine.quality import Assessment, Reason, assess
from wiki_assets.engine.wiki.record import Page
from wiki_assets.engine.wiki.render import render_page
from wiki_assets.simulator import BEHAVIOURS, PRESETS, SimModel, SimServer

DOCUMENTS = sorted(
    path
    for path in SAMPLE.rglob("*")
    if path.suffix in (".md", ".txt") and path.name != "README.md"  # the sample's text documents
)


async def _assess_all(
    server: SimServer, model: str, max_tokens: int, drafts: list[PageDraft] | None = None
) -> list[Assessment]:
    client = ModelClient(Endpoint(name=model, base_url=server.base_url, model=model), max_tokens)
    found = []
    try:
        for document in DOCUMENTS:
            text = document.read_text(encoding="utf-8")
            path = document.relative_to(SAMPLE).as_posix()
            title, language = title_of(text, path), LANGUAGES[detect_language(text)]
            others = [d.relative_to(SAMPLE).as_posix() for d in DOCUMENTS[:3] if d != document]
            candidates = [Candidate(other, other, "", 0.5) for other in others]
            summary = await client.summarize(
                PageRequest(path, title, text, tuple(candidates), language)
            )
            if drafts is not None:
                drafts.append(summary.draft)
            found.append(
                assess(
                    summary.draft,
                    text,
                    title=title,
                    language=language,
                    finish_reason=summary.finish_reason,
                )
            )
    finally:
        await client.close()
    return found


def _run(
    behaviour: str, max_tokens: int = 1024, drafts: list[PageDraft] | None = None
) -> list[Assessment]:
    """Every sample page of the ``behaviour`` preset; by default at a large max_tokens, so that
    the page is whole and only what it says is judged."""
    sim = dataclasses.replace(PRESETS[behaviour], model=behaviour, instant=True)
    with SimServer(sim) as server:
        return asyncio.run(_assess_all(server, behaviour, max_tokens, drafts))


def _share(assessments: list[Assessment]) -> float:
    points = sum(len(a.points) for a in assessments)
    assert points >= 2 * len(assessments), "every page has key points to judge"
    return sum(a.verified for a in assessments) / points


def test_faithful_points_are_verified_and_its_pages_pass() -> None:
    assessments = _run("faithful")
    assert len(assessments) == len(DOCUMENTS) >= 20
    share = _share(assessments)
    print(f"faithful: verified share {share:.2f}")
    assert share >= 0.9
    assert [a.verdict.reasons for a in assessments if not a.verdict.ok] == []
    # Every verified point names the lines it stands on.
    assert all(p.reference for a in assessments for p in a.points if p.verified)


def test_the_faithful_preset_writes_pages_a_demo_can_show_at_the_default_max_tokens() -> None:
    """As a model asked for short pages does, it keeps within the default cap: no page is cut,
    almost every page passes, and each keeps a verified point and a related link."""
    drafts: list[PageDraft] = []
    assessments = _run("faithful", Dials().max_tokens, drafts)
    reasons = Counter(reason for a in assessments for reason in a.verdict.reasons)
    assert reasons[Reason.HIT_MAX_TOKENS] == 0, reasons
    assert sum(a.verdict.ok for a in assessments) >= 0.9 * len(assessments), reasons
    assert all(a.verified >= 1 for a in assessments)
    assert all(draft.related for draft in drafts)


def test_fabricating_points_are_not_verified_and_its_pages_are_flagged() -> None:
    assessments = _run("fabricating")
    share = _share(assessments)
    reasons = Counter(reason for a in assessments for reason in a.verdict.reasons)
    print(f"fabricating: verified share {share:.2f}, reasons {dict(reasons)}")
    assert share <= 0.1
    assert all(not a.verdict.ok for a in assessments)
    assert reasons[Reason.UNVERIFIED_POINTS] == len(assessments)
    # Rendered, none of its claims is shown as a key point.
    first = assessments[0]
    shown = render_page(_page(first))
    assert "## Key points" not in shown and "## Not verified" in shown


def test_faithful_notes_on_numbered_parts_cite_the_whole_documents_lines() -> None:
    lines = [f"Rule {i}: the deploy freeze number {i} lasts {i + 2} days." for i in range(200)]
    document = "# Handbook\n\n" + "\n\n".join(lines)
    parts = split_to_budget(number_lines(document), 500)
    assert len(parts) >= 3
    message = CHUNK_USER.format(path="h.md", part=3, parts=len(parts), text=parts[2])
    with SimServer(SimModel(model="faithful", behaviour="faithful", instant=True)) as server:
        with openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0) as api:
            answer = api.chat.completions.create(
                model="faithful",
                messages=[{"role": "user", "content": message}],
                max_tokens=2000,
            )
            page_answer = api.chat.completions.create(
                model="faithful",
                messages=[{"role": "user", "content": f"<document>\n{parts[2]}\n</document>"}],
                max_tokens=2000,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "page", "schema": draft_schema([])},
                },
            )
    notes = (answer.choices[0].message.content or "").splitlines()
    original = document.split("\n")
    assert notes
    for note in notes:
        number, quoted = note.split("| ", 1)
        assert quoted in original[int(number) - 1]
    assert int(notes[0].split("|")[0]) > 100, "numbers of the whole document, not of the part"
    points = json.loads(page_answer.choices[0].message.content or "{}")["key_points"]
    assert points and all(original[p["lines"][0] - 1].endswith(p["text"]) for p in points)


def test_behaviours_are_validated() -> None:
    assert set(BEHAVIOURS) == {"words", "faithful", "fabricating", "contradicting", "embellishing"}
    assert PRESETS["faithful"].behaviour == "faithful"
    with pytest.raises(ValueError, match="behaviour"):
        SimModel(behaviour="lying")


def _page(assessment: Assessment) -> Page:
    return page_record(
        model="fabricating", key_points=assessment.points, verdict=assessment.verdict
    )
