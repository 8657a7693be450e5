"""Each page check, with a page that trips it and the good page that does not; the verdict
lists the reasons tripped, by their stable names, and assess() runs it all on a model's draft."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from wiki_assets.engine.prompting.page import PageDraft
from wiki_assets.engine.quality import Reason, Verdict, assess, verify_points
from wiki_assets.engine.quality.checks import CHECKS, Written, check_page
from wiki_assets.engine.quality.topics import junk_topic, kept_topics, placeholder_topic

DOCUMENT = """# Leave Policy

Owner: Choi Min-ji (People Operations). Effective 2026-01-01. Applies in Seoul and Berlin.

## Annual leave
- Seoul: 20 days per year from the first year (the legal minimum is 15).
- Berlin: 28 working days per year (the legal minimum is 20).
- Up to 5 unused days can be carried over until 31 March of the next year.

## How to request leave
Request leave in the HR system at least 5 working days in advance for 1-2 days.
Engineers on the on-call rotation must arrange a swap first.
"""

PROJECT = Path(__file__).resolve().parents[1]

KOREAN_DOCUMENT = """휴가 신청 절차

- 1~2일 휴가는 5영업일 전, 1주일 이상은 20영업일 전까지 신청합니다.
- 팀장이 3영업일 안에 승인합니다.
"""

POINTS = verify_points(
    [
        {
            "text": "Seoul staff get 20 days a year.",
            "quote": "Seoul: 20 days per year",
            "lines": [],
        },
        {"text": "Berlin staff get 28 working days.", "quote": "", "lines": [7]},
    ],
    DOCUMENT,
)

GOOD = Written(
    title="Leave Policy",
    description="Annual leave in Seoul and Berlin, and how to request it in the HR system.",
    summary=(
        "Seoul and Berlin staff have different amounts of annual leave. Leave is requested in "
        "the HR system days ahead, and on-call engineers arrange a swap first."
    ),
    points=POINTS,
    topics=("annual leave", "sick leave", "HR system"),
    links=(("people/leave-request-ko.txt", "The step-by-step request guide for Seoul."),),
    document=DOCUMENT,
    language="English",
    finish_reason="stop",
)


def tripped(page: Written) -> tuple[str, ...]:
    return check_page(page).reasons


def test_a_good_page_passes_every_check() -> None:
    assert all(POINTS[i].verified for i in range(2))
    verdict = check_page(GOOD)
    assert verdict == Verdict() and verdict.ok and verdict.label == "ok"


BAD_PAGES: list[tuple[Reason, dict[str, object]]] = [
    (Reason.HIT_MAX_TOKENS, {"finish_reason": "length"}),
    (
        Reason.WRONG_LANGUAGE,
        {"summary": "서울과 베를린 직원의 연차 일수와 휴가 신청 방법을 설명합니다."},
    ),
    (Reason.WRONG_LANGUAGE, {"description": "Описывает отпуска сотрудников в Сеуле и Берлине."}),
    (Reason.PROMPT_ECHO, {"summary": "This document is a JSON object with the following fields."}),
    (Reason.PROMPT_ECHO, {"description": "<document> Leave policy for Seoul </document>"}),
    (Reason.PROMPT_ECHO, {"summary": 'The answer: {"title": "Leave", "key_points": []}'}),
    (Reason.PROMPT_ECHO, {"summary": "Two to four sentences: what it says and what it is for."}),
    (
        Reason.COPIES_OPENING,
        {"summary": "Leave Policy. Owner: Choi Min-ji (People Operations). Effective 2026-01-01."},
    ),
    (
        Reason.COPIES_OPENING,
        {"description": "Owner: Choi Min-ji (People Operations). Effective 2026-01-01."},
    ),
    (Reason.MISSING_TITLE, {"title": "  # "}),
    (Reason.MISSING_DESCRIPTION, {"description": "..."}),
    (Reason.MISSING_SUMMARY, {"summary": "35"}),
    (Reason.MISSING_SUMMARY, {"summary": "2019-03-07 18:36:24.145 (YES)"}),
    (Reason.TITLE_IS_DESCRIPTION, {"description": "The leave policy."}),
    (Reason.VACUOUS_DESCRIPTION, {"description": "This page describes the leave policy."}),
    (Reason.VACUOUS_DESCRIPTION, {"description": "The document is about the document."}),
    (Reason.PLACEHOLDER_TOPICS, {"topics": ("Topics",)}),
    (Reason.PLACEHOLDER_TOPICS, {"topics": ("annual leave", "tag2")}),
    (Reason.PLACEHOLDER_TOPICS, {"topics": ("2019-03-07 18:36:24.145 (YES)",)}),
    (Reason.JUNK_TOPICS, {"topics": ("annual leave", "The-document-is-for-the")}),
    (Reason.JUNK_TOPICS, {"topics": ("this-page-has-been-added",)}),
    (Reason.JUNK_TOPICS, {"topics": ("description", "HR system")}),
    (Reason.JUNK_TOPICS, {"topics": ("key points",)}),
    (Reason.JUNK_TOPICS, {"topics": ("leave for staff in Seoul and Berlin offices",)}),
    (Reason.LINK_WITHOUT_REASON, {"links": (("people/x.md", ""),)}),
    (Reason.LINK_WITHOUT_REASON, {"links": (("people/x.md", "people/x"),)}),
    (Reason.UNVERIFIED_POINTS, {"points": ()}),  # no fact from the document at all
    (
        Reason.UNVERIFIED_POINTS,
        {
            "points": verify_points(
                [
                    {
                        "text": "It is an object storage system.",
                        "quote": "object storage",
                        "lines": [],
                    }
                ],
                DOCUMENT,
            )
        },
    ),
]


BAD_PAGES.append(
    (
        # Fluent, about leave, and in no line of the document; its key points verified all the
        # same (they do not vouch for the prose).
        Reason.UNGROUNDED_SUMMARY,
        {
            "description": "A guide for new managers on running quarterly performance reviews.",
            "summary": "Managers schedule reviews at the end of each quarter. Ratings are "
            "calibrated across teams before they are shared with employees.",
        },
    )
)


@pytest.mark.parametrize(("reason", "change"), BAD_PAGES, ids=lambda v: str(v)[:30])
def test_each_check_trips_on_its_bad_page(reason: Reason, change: dict[str, object]) -> None:
    bad = dataclasses.replace(GOOD, **change)  # type: ignore[arg-type]
    assert tripped(bad) == (reason,)
    assert CHECKS[reason](bad) and not CHECKS[reason](GOOD)


def test_the_schemas_own_placeholder_is_an_echo_too() -> None:
    bad = dataclasses.replace(GOOD, topics=("up-to-5-short-tags",))
    assert tripped(bad) == (Reason.PROMPT_ECHO, Reason.PLACEHOLDER_TOPICS)


def test_every_reason_has_a_check_and_a_stable_snake_case_name() -> None:
    assert list(CHECKS) == list(Reason)
    for reason in Reason:
        assert reason.value.isidentifier() and reason.value == reason.value.lower()
        assert reason.explanation


def test_what_the_document_itself_says_is_no_echo() -> None:
    """A document about JSON may have its page mention JSON objects."""
    about_json = "# Config format\n\nThe file is a JSON object with the following fields.\n"
    page = dataclasses.replace(
        GOOD,
        document=about_json,
        summary="The config file is a JSON object with the following fields.",
    )
    assert Reason.PROMPT_ECHO not in tripped(page)


def test_a_korean_page_is_checked_in_korean() -> None:
    korean = dataclasses.replace(
        GOOD,
        title="휴가 신청 절차",
        description="5영업일 전까지 휴가를 신청하고 팀장이 승인하는 절차입니다.",
        summary="휴가는 미리 신청하고 팀장이 승인합니다. 긴 휴가는 더 일찍 신청해야 합니다.",
        topics=("휴가", "신청 절차"),
        links=(),
        document=KOREAN_DOCUMENT,
        points=verify_points(
            [{"text": "팀장이 승인합니다.", "quote": "", "lines": [4]}], KOREAN_DOCUMENT
        ),
        language="Korean",
    )
    assert tripped(korean) == ()
    english = dataclasses.replace(korean, summary=GOOD.summary)
    assert tripped(english) == (Reason.WRONG_LANGUAGE,)
    # A language the detector does not know is not judged.
    assert tripped(dataclasses.replace(english, language="French")) == ()


def test_the_verdict_keeps_reason_order_and_unknown_names() -> None:
    verdict = Verdict.of(
        ["unverified_points", "hit_max_tokens", "from_the_future", "hit_max_tokens"]
    )
    assert verdict.reasons == ("hit_max_tokens", "unverified_points", "from_the_future")
    assert verdict.label == "flagged" and verdict.explanations()[-1] == "from_the_future"


def test_assess_verifies_points_and_checks_the_draft() -> None:
    draft = PageDraft.model_validate(
        {
            "title": "Leave",
            "description": GOOD.description,
            "summary": GOOD.summary,
            "key_points": [
                {"text": "Berlin staff get 28 working days.", "quote": "Berlin: 28 working days"},
                {"text": "The office closes in August for 30 days.", "quote": "closes in August"},
            ],
            "topics": ["tag1"],
            "related": [],
        }
    )
    outcome = assess(
        draft, DOCUMENT, title="Leave Policy", language="English", finish_reason="length"
    )
    assert outcome.verified == 1 and len(outcome.points) == 2
    # Half verified is not "fewer than half": only the cut answer and the placeholder flag it.
    assert outcome.verdict.reasons == ("hit_max_tokens", "placeholder_topics")
    fields = outcome.result_fields()
    assert fields["flags"] == ["hit_max_tokens", "placeholder_topics"]
    assert [point["status"] for point in fields["key_points"]] == ["verified", "not_found"]
    assert fields["key_points"][0]["found"] == [7, 7]


RUNBOOK = (PROJECT / "synced" / "engineering" / "runbooks" / "on-call-runbook.md").read_text()
REVIEW_KO = (PROJECT / "synced" / "engineering" / "code-review-guidelines-ko.md").read_text()


def test_a_small_models_page_keeps_its_lines_and_says_its_prose_is_unchecked() -> None:
    """What the embedded small model wrote for the on-call runbook: its picked lines are the
    document's (verified), its description says only that the page is the runbook, its summary
    is fluent and in no line of the runbook, and its tags are a cut-off sentence and a field
    name. The page is flagged for each, and the junk tags are left out of what it journals."""
    draft = PageDraft.model_validate(
        {
            "title": "On-Call Runbook: Hanbit Object Storage",
            "description": "The document is for the on-call runbook.",
            "summary": "The document is for the emergency response team. It explains how the "
            "team works together to keep everyone safe during a crisis.",
            "key_points": [
                {
                    "text": "Acknowledge in the paging tool and join #incident.",
                    "quote": "Acknowledge in the paging tool and join #incident.",
                    "lines": [11],
                }
            ],
            "topics": ["The-document-is-for-the", "this-page-has-been-added", "description",
                       "paging"],
        }
    )  # fmt: skip
    outcome = assess(draft, RUNBOOK, title=draft.title, language="English", finish_reason="stop")
    assert outcome.verified == 1
    assert outcome.verdict.reasons == (
        "vacuous_description", "junk_topics", "ungrounded_summary"
    )  # fmt: skip
    assert outcome.result_fields()["topics"] == ["paging"]


def test_a_faithful_page_of_the_runbook_is_grounded() -> None:
    """A summary that says what the runbook says, in other words, is found in it."""
    page = dataclasses.replace(
        GOOD,
        title="On-Call Runbook: Hanbit Object Storage",
        description="What the on-call engineer of Hanbit Object Storage does when paged.",
        summary="A primary and a secondary engineer hand over every Monday; pages are "
        "acknowledged within 5 minutes for SEV1. For metad disk pressure, compact the leader "
        "first, then the followers one at a time.",
        points=(),
        topics=("on-call rotation", "metad compaction", "incident response"),
        links=(),
        document=RUNBOOK,
    )
    assert tripped(page) == (Reason.UNVERIFIED_POINTS,)  # no key point: only that


def test_a_korean_small_models_page_is_judged_in_korean() -> None:
    """Korean filler ("이 문서는 … 에 대한 문서입니다"), Korean junk topics and a Korean summary
    that is in no line of the guidelines; then the page a faithful model writes of them."""
    vacuous = Written(
        title="코드 리뷰 가이드라인",
        description="이 문서는 코드 리뷰 가이드라인에 대한 문서입니다.",
        summary="이 문서는 팀의 협업 문화를 소개합니다. 모든 직원이 꼭 읽어야 하는 문서입니다.",
        points=verify_points(
            [{"text": "모든 변경은 최소 1명의 승인이 필요합니다.", "quote": "", "lines": [9]}],
            REVIEW_KO,
        ),
        topics=("이 문서는", "요약", "코드 리뷰"),
        links=(),
        document=REVIEW_KO,
        language="Korean",
        finish_reason="stop",
    )
    assert vacuous.points[0].verified
    assert tripped(vacuous) == (
        Reason.VACUOUS_DESCRIPTION, Reason.JUNK_TOPICS, Reason.UNGROUNDED_SUMMARY
    )  # fmt: skip
    faithful = dataclasses.replace(
        vacuous,
        description="서울과 베를린 팀이 코드 리뷰를 주고받을 때 지키는 원칙입니다.",
        summary="모든 변경은 최소 1명의 승인이 필요하고, PR은 400줄 이하로 나눕니다. 리뷰 "
        "요청 후 영업일 기준 1일 안에 첫 코멘트를 답니다.",
        topics=("코드 리뷰", "승인 절차", "PR 크기"),
    )
    assert tripped(faithful) == ()


@pytest.mark.parametrize(
    "topic",
    ["The-document-is-for-the", "this-page-has-been-added", "description", "Title", "summary",
     "key points", "key_points", "tags", "this page", "for the on-call team", "the",
     "how to request leave in the HR system today", "이 문서는", "본 문서", "요약", "문서입니다",
     "휴가를 신청하는", "People-team-to-ensure-it", "#People-team-to-ensure-it", "send it to them"],
)  # fmt: skip
def test_junk_topics(topic: str) -> None:
    assert junk_topic(topic) or placeholder_topic(topic)
    assert kept_topics([topic, "annual leave"]) == ["annual leave"]


@pytest.mark.parametrize(
    "topic",
    ["annual leave", "on-call", "on-call rotation", "HR system", "end-to-end testing",
     "state-of-the-art storage", "up-to-date runbooks", "A/B testing", "SEV1 incidents",
     "metad disk pressure", "휴가 정책", "코드 리뷰", "회의", "신청 절차", "2026 roadmap",
     "Corporate IT", "IT", "people team"],
)  # fmt: skip
def test_subjects_are_kept(topic: str) -> None:
    assert not junk_topic(topic) and not placeholder_topic(topic)
    assert kept_topics([topic]) == [topic]


def test_a_marker_of_the_prompt_is_found_in_one_text_not_across_two() -> None:
    """The texts are searched together, a NUL between two: a marker half in one topic and half
    in the next is none ("json" ending one, "schema" opening the next)."""
    split = dataclasses.replace(GOOD, topics=("annual leave json", "schema of leave"))
    whole = dataclasses.replace(GOOD, topics=("annual leave json schema", "leave"))
    assert not CHECKS[Reason.PROMPT_ECHO](split) and CHECKS[Reason.PROMPT_ECHO](whole)
