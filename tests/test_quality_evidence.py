"""A key point's evidence, checked against its document: found verbatim whatever the case,
spacing, bullets or Unicode forms, in Korean as in English, with the lines the page shows; and
not verified when it is invented, quoted from another document, or says something else. The page
schema takes old and small-model key points (plain strings, odd line numbers) without failing."""

from __future__ import annotations

import json
import re

from wiki_assets.engine.documents.lines import document_lines, number_lines
from wiki_assets.engine.prompting.budget import split_to_budget
from wiki_assets.engine.prompting.page import KeyPoint, draft_schema, key_point, parse_draft
from wiki_assets.engine.quality import PointCheck, Status, verify_points
from wiki_assets.engine.quality.units import content_units, normalize

LEAVE = """# Leave Policy

Owner: Choi Min-ji (People Operations). Effective 2026-01-01.

## Annual leave
- Seoul: 20 days per year from the first year (the legal minimum is 15).
- Berlin: 28 working days per year (the legal minimum is 20).
- Up to 5 unused days can be carried over until 31 March of the next year.
"""

DEPLOY = """# Deploy process

Deploys happen on weekdays between 10:00 and 16:00 Seoul time.
A release needs two approvals in the review tool before it ships.
"""

KOREAN = """휴가 신청 절차 (서울 오피스)

담당: 피플팀 최민지

- 1~2일 휴가는 5영업일 전, 1주일 이상은 20영업일 전까지 신청합니다.
- 팀장이 3영업일 안에 승인합니다. 승인이 늦어지면 피플팀에 알려 주세요.
"""


def point(text: str, quote: str = "", lines: list[int] | None = None) -> KeyPoint:
    return {"text": text, "quote": quote, "lines": lines or []}


def check(document: str, *points: KeyPoint) -> list[PointCheck]:
    return list(verify_points(points, document))


def test_content_units_are_stems_numbers_and_hangul_bigrams() -> None:
    units = content_units(normalize("Employees accrue 15 days of leave; COVID19 x2 휴가는 007"))
    # Latin words of three letters or more, cut to five, stop words out; numbers whole, leading
    # zeros dropped, also out of a word (covid19); Hangul as its bigrams.
    latin = {"emplo", "accru", "days", "leave", "covid"}
    assert units == latin | {"15", "19", "2", "7"} | {"휴가", "가는"}
    assert content_units(normalize("the and of a")) == set()


def test_an_exact_quote_is_verified_with_the_lines_it_stands_on() -> None:
    [found] = check(
        LEAVE,
        point("Seoul staff get 20 days of leave a year.", "Seoul: 20 days per year", [6]),
    )
    assert found.status is Status.VERIFIED and found.verified
    assert found.lines == (6, 6) and found.reference == "line 6"


def test_case_spacing_bullets_and_unicode_forms_do_not_matter() -> None:
    variants = [
        "SEOUL:   20 DAYS per year",  # case and spacing
        "- Seoul : 20 days per year",  # a bullet and stray punctuation
        "Ｓｅｏｕｌ: ２０ days per year",  # full-width forms (NFKC)
    ]
    for quote in variants:
        [found] = check(LEAVE, point("Seoul staff get 20 days of leave a year.", quote))
        assert found.status is Status.VERIFIED, quote
        assert found.lines == (6, 6), quote
    # A quote running across a line break is found, and its range covers both lines.
    [across] = check(
        LEAVE,
        point(
            "Berlin has 28 working days, and 5 unused days carry over.",
            "28 working days per year (the legal minimum is 20). - Up to 5 unused days",
        ),
    )
    assert across.status is Status.VERIFIED and across.reference == "lines 7\u20138"


def test_korean_quotes_and_paraphrases_are_verified() -> None:
    exact, paraphrase = check(
        KOREAN,
        point(
            "1~2일 휴가는 5영업일 전에 신청합니다.",
            "1~2일 휴가는 5영업일 전, 1주일 이상은 20영업일 전까지 신청합니다",
        ),
        # Different particles (은/이), no quote: the cited line carries it.
        point("팀장은 3영업일 안에 휴가를 승인합니다.", "", [6]),
    )
    assert exact.status is Status.VERIFIED and exact.lines == (5, 5)
    # A quote may leave off the ending Korean attaches to its last word.
    [cut] = check(KOREAN, point("팀장이 3영업일 안에 승인합니다.", "팀장이 3영업일 안에 승인"))
    assert cut.status is Status.VERIFIED and cut.lines == (6, 6)
    # But it may not begin inside a word.
    [inside] = check(KOREAN, point("팀장이 3영업일 안에 승인합니다.", "장이 3영업일 안에 승인"))
    assert inside.status is Status.NOT_FOUND
    assert paraphrase.status is Status.VERIFIED and paraphrase.lines == (6, 6)


def test_invented_points_are_not_verified() -> None:
    invented, real_quote, changed_number, korean = check(
        LEAVE,
        # Quote and claim both invented.
        point(
            "Leave Policy is an object-based storage system.",
            "Leave Policy is an object-based storage system",
        ),
        # A real quote under a claim it does not make.
        point("Berlin offices close for a month every summer.", "Berlin: 28 working days"),
        # The right line, a changed number.
        point("Berlin staff get 35 working days.", "Berlin: 28 working days per year"),
        point("이 제도는 2019년에 물류 비용 절감을 위해 도입되었습니다.", "", [6]),
    )
    assert invented.status is Status.NOT_FOUND and invented.lines is None
    assert real_quote.status is Status.DISAGREES and real_quote.lines == (7, 7)
    assert changed_number.status is Status.DISAGREES
    assert korean.status is Status.DISAGREES
    [korean_in_korean] = check(
        KOREAN, point("지역 재무 위원회가 45일 안에 최종 결재를 내립니다.", "", [6])
    )
    assert korean_in_korean.status is Status.DISAGREES


def test_a_quote_from_another_document_is_not_found() -> None:
    claim = point("A release needs two approvals.", "A release needs two approvals in the review")
    assert check(DEPLOY, claim)[0].status is Status.VERIFIED
    assert check(LEAVE, claim)[0].status is Status.NOT_FOUND


def test_line_ranges_must_exist_and_be_narrow_and_a_point_may_cite_nothing() -> None:
    text = "Berlin has 28 working days a year."
    wide, outside, backwards, nothing, too_short = check(
        LEAVE,
        point(text, "", [1, 9]),  # the whole document "supports" anything
        point(text, "", [40]),
        point(text, "", [8, 7]),
        point(text),
        point(text, "Berlin"),  # a word occurs anywhere: no quote at all
    )
    assert [wide.status, outside.status, backwards.status] == [Status.NOT_FOUND] * 3
    assert nothing.status is Status.NO_EVIDENCE
    assert too_short.status is Status.NOT_FOUND
    assert check(LEAVE, point(text, "", [7]))[0].status is Status.VERIFIED


def test_parts_keep_the_whole_documents_line_numbers() -> None:
    """Numbered before it is split, every part of a long document cites the document's own
    lines, so a point written from the notes on a late part verifies against the original."""
    lines = [f"Rule {i}: the deploy freeze number {i} lasts {i + 2} days." for i in range(300)]
    document = "# Handbook\n\n" + "\n\n".join(lines)
    parts = split_to_budget(number_lines(document), 400)
    assert len(parts) >= 3
    original = document_lines(document)
    for part in parts:
        for numbered in part.splitlines():
            found = re.match(r"(\d+)\| (.*)", numbered)
            if found:  # a part may start inside a line cut at whitespace
                assert found.group(2) in original[int(found.group(1)) - 1]
    last = parts[-1].splitlines()[-1]
    number, quoted = last.split("| ", 1)
    [verified] = check(document, point(quoted, quoted, [int(number)]))
    assert verified.status is Status.VERIFIED and verified.lines == (int(number),) * 2
    assert number_lines("a\n\nb") == "1| a\n3| b", "blank lines are left out, numbers kept"


def test_the_schema_asks_for_evidence_and_validation_is_tolerant() -> None:
    schema = draft_schema(["b.md"])
    item = schema["$defs"]["KeyPoint"]
    assert item["required"] == ["text", "quote", "lines"]
    assert item["properties"]["text"]["maxLength"] == 160
    assert item["properties"]["lines"]["maxItems"] == 2
    assert schema["properties"]["key_points"]["maxItems"] == 4
    answer = {
        "title": "T",
        "description": "D",
        "summary": "S",
        "key_points": [
            "a plain string, as journaled before",
            {"text": "lines as text", "lines": "12-14"},
            {"text": "one line", "quote": " some   words ", "lines": 7},
            {"text": "  "},
            {"text": "a plain string, as journaled before", "quote": "dup"},
        ],
        "topics": [],
        "related": [],
    }
    draft = parse_draft(json.dumps(answer))
    assert draft.key_points == [
        {"text": "a plain string, as journaled before", "quote": "", "lines": []},
        {"text": "lines as text", "quote": "", "lines": [12, 14]},
        {"text": "one line", "quote": "some words", "lines": [7]},
    ]
    assert key_point({"text": "x", "lines": [3, True, 0, 2]}) == {
        "text": "x",
        "quote": "",
        "lines": [2, 3],
    }


def test_journaled_points_read_back_and_old_ones_are_unchecked() -> None:
    [checked] = check(LEAVE, point("Berlin has 28 working days.", "Berlin: 28 working days"))
    assert PointCheck.from_json(json.loads(json.dumps(checked.to_json()))) == checked
    legacy = PointCheck.from_json("a fact from an old result")
    assert legacy == PointCheck("a fact from an old result", Status.UNCHECKED)
    draft_only = PointCheck.from_json({"text": "t", "quote": "q", "lines": [1]})
    assert draft_only is not None and draft_only.status is Status.UNCHECKED
    assert PointCheck.from_json({"text": "t", "status": "from-the-future"}) == PointCheck(
        "t", Status.UNCHECKED
    )
    assert PointCheck.from_json(5) is None
