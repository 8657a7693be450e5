"""The compact page request (``page_shape: compact``, the embedded model's): the document's citable
lines, the schema that lets a model answer only with their numbers, and a whole ingest over HTTP
against the simulator, whose schema-following answers stand in for a grammar-constrained server:
an English document gets the model's prose and the picked lines as verified key points; a Korean
document, with only English among the languages the model writes, gets its picks on a page
labelled as not summarized, checked for what the model did and not for prose it did not write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wiki_assets.engine import ROOT_COLLECTION, Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.errors import DraftError
from wiki_assets.engine.llm.compact import (
    citable_lines,
    compact_schema,
    link_reason,
    parse_compact,
)
from wiki_assets.engine.prompting.candidate import Candidate
from wiki_assets.engine.quality import Reason, assess
from wiki_assets.engine.quality.checks import WITHOUT_PROSE
from wiki_assets.engine.wiki.files import page_for
from wiki_assets.simulator import SimModel, SimServer

DOC = """# Leave Policy

Owner: People team (Berlin and Seoul)

## Annual leave
- Every employee gets 25 days of paid leave per calendar year.
- Short
```
carry_over = 5 days of leave into the next year
```
Unused days expire on 31 March of the following year.
"""

KOREAN = """# 휴가 신청 절차

담당: 피플팀 / 2026년 기준

HR 시스템에서 휴가 종류를 선택하고 팀장의 승인을 받습니다.
1주일 이상의 휴가는 20영업일 전까지 신청합니다.
"""


def test_citable_lines_are_statements_not_headings_code_or_the_title() -> None:
    citable = citable_lines(DOC, "Leave Policy")
    # 1 the title, 5 a heading, 7 too short, 8-10 a code block: never citable.
    assert citable == {
        3: "Owner: People team (Berlin and Seoul)",
        6: "Every employee gets 25 days of paid leave per calendar year.",
        11: "Unused days expire on 31 March of the following year.",
    }
    korean = citable_lines(KOREAN, "휴가 신청 절차")
    assert sorted(korean) == [3, 5, 6]  # by Hangul count: Korean has few, long words


# A table as the readers of spreadsheets and Word documents write it: a header row, then rows.
TABLE = """# Expense claims

| Item | Rule |
| Hotel | Up to 180,000 won a night in Seoul, 150,000 won elsewhere. |
| Payment | Approved amounts are paid with the next month's salary. |

| Section | Sentences | Characters |
|---|---|---|
| Hotel limits | 2 | 70 |
"""


def test_a_table_row_is_cited_as_a_sentence_and_its_header_not_at_all() -> None:
    citable = citable_lines(TABLE, "Expense claims")
    assert citable == {
        4: "Hotel: Up to 180,000 won a night in Seoul, 150,000 won elsewhere.",
        5: "Payment: Approved amounts are paid with the next month's salary.",
        9: "Hotel limits · 2 · 70",
    }
    # Picked, such a line is a key point verified on the row it came from.
    draft = parse_compact(
        '{"points": [4]}', truncated=False, citable=citable, title="Expense claims",
        path="claims.docx", candidates=[], prose=False, language="English",
    )  # fmt: skip
    checked = assess(draft, TABLE, title="Expense claims", language="English",
                     finish_reason="stop", prose=False)  # fmt: skip
    assert [(p.text, p.verified, p.lines) for p in checked.points] == [(citable[4], True, (4, 4))]


def test_a_compact_answer_cut_by_max_tokens_shows_only_its_finished_sentences() -> None:
    citable = citable_lines(DOC, "Leave Policy")
    cut = '{"points": [6], "summary": "It sets the leave rules. Requests go to the manager by'
    draft = parse_compact(
        cut, truncated=True, citable=citable, title="Leave Policy", path="leave.md",
        candidates=[], prose=True, language="English",
    )  # fmt: skip
    assert (draft.description, draft.summary) == ("It sets the leave rules.",) * 2
    assert [point["lines"] for point in draft.key_points] == [[6]]


def test_a_summary_stopped_at_the_schemas_length_shows_only_its_finished_sentences() -> None:
    citable = citable_lines(DOC, "Leave Policy")
    capped = ("It sets the leave rules. " + "Requests go to the manager by email " * 20)[:400]
    draft = parse_compact(
        json.dumps({"points": [6], "summary": capped}), truncated=False, citable=citable,
        title="Leave Policy", path="leave.md", candidates=[], prose=True, language="English",
    )  # fmt: skip
    assert (draft.description, draft.summary) == ("It sets the leave rules.",) * 2
    # Shorter than the cap, the model ended it: its last sentence is kept, closing mark or not.
    ended = "It sets the leave rules. Requests go to the manager"
    draft = parse_compact(
        json.dumps({"summary": ended}), truncated=False, citable=citable, title="Leave Policy",
        path="leave.md", candidates=[], prose=True, language="English",
    )  # fmt: skip
    assert draft.summary == "Requests go to the manager"
    korean = ("휴가 규정입니다. " + "신청은 팀장에게 메일로 보내" * 20)[:133]
    draft = parse_compact(
        json.dumps({"summary": korean}), truncated=False, citable=citable, title="휴가",
        path="leave.md", candidates=[], prose=True, language="Korean",
    )  # fmt: skip
    assert draft.summary == "휴가 규정입니다."


def test_the_schema_admits_only_citable_line_numbers() -> None:
    schema = compact_schema([3, 6, 11], prose=True, language="English")
    points = schema["properties"]["points"]
    assert points["items"]["enum"] == [3, 6, 11] and points["maxItems"] == 3
    assert list(schema["properties"]) == ["points", "summary", "topics"]
    # English prose stays in Latin script by the grammar (SmolLM2 drifted into Hangul-like
    # syllables on English pages); Korean costs about three times the tokens per character, so
    # its summary gets a third of the length.
    english = re.compile(schema["properties"]["summary"]["pattern"])
    assert english.match("It says who approves leave, and by when (in 5 days).")
    assert not english.match("오랜로 생격할 부릅당") and not english.match('say "x"')
    assert not english.match("x" * 401)
    korean = compact_schema([3], prose=True, language="Korean")
    assert korean["properties"]["summary"]["maxLength"] == 400 // 3
    assert re.match(korean["properties"]["topics"]["items"]["pattern"], "휴가 정책")
    assert not re.match(korean["properties"]["topics"]["items"]["pattern"], "{ 18}")
    picks = compact_schema([3], prose=False, language="Korean")
    assert list(picks["properties"]) == ["points"]
    assert compact_schema([], prose=False, language="English")["properties"]["points"][
        "maxItems"
    ] == 0  # fmt: skip


def test_parsed_picks_become_quoted_points_and_other_numbers_are_dropped() -> None:
    citable = citable_lines(DOC, "Leave Policy")
    answer = json.dumps(
        {"points": [11, 6, 9, 999, True], "description": "The leave rules.", "summary": "x y",
         "topics": ["leave"]}
    )  # fmt: skip
    candidates = [Candidate("a.md", "A", "What A is about.", 0.9), Candidate("leave.md", "", "", 1)]
    draft = parse_compact(
        answer, truncated=False, citable=citable, title="Leave Policy", path="leave.md",
        candidates=candidates, prose=True, language="English",
    )  # fmt: skip
    assert [point["lines"] for point in draft.key_points] == [[6], [11]]  # document order
    assert draft.key_points[0]["quote"] == citable[6]
    assert [(link.path, link.reason) for link in draft.related] == [("a.md", "What A is about.")]
    checked = assess(draft, DOC, title="Leave Policy", language="English", finish_reason="stop")
    assert checked.verified == 2 == len(checked.points)
    with pytest.raises(DraftError):
        parse_compact(
            "no json here", truncated=False, citable=citable, title="T", path="p",
            candidates=[], prose=False, language="English",
        )  # fmt: skip


def test_a_page_without_prose_is_checked_only_for_what_the_model_did() -> None:
    citable = citable_lines(KOREAN, "휴가 신청 절차")
    draft = parse_compact(
        '{"points": [5]}', truncated=False, citable=citable, title="휴가 신청 절차",
        path="k.md", candidates=[], prose=False, language="Korean",
    )  # fmt: skip
    with_prose = assess(
        draft, KOREAN, title="휴가 신청 절차", language="Korean", finish_reason="stop"
    )
    without = assess(
        draft, KOREAN, title="휴가 신청 절차", language="Korean", finish_reason="stop", prose=False
    )
    # Its placeholder description and summary would trip the prose checks; they are not shown.
    assert Reason.MISSING_SUMMARY in with_prose.verdict.reasons
    assert without.verdict.ok and without.verified == 1
    cut = assess(
        draft,
        KOREAN,
        title="휴가 신청 절차",
        language="Korean",
        finish_reason="length",
        prose=False,
    )
    assert set(cut.verdict.reasons) == {Reason.HIT_MAX_TOKENS} <= WITHOUT_PROSE


def test_an_ingest_of_compact_pages_over_http(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    synced.mkdir()
    (synced / "leave.md").write_text(DOC, encoding="utf-8")
    (synced / "leave-ko.md").write_text(KOREAN, encoding="utf-8")
    with SimServer(SimModel(model="tiny", instant=True)) as server:
        endpoint = Endpoint(
            name="tiny", base_url=server.base_url, model="tiny", page_shape="compact",
            prose_languages=("English",),
        )  # fmt: skip
        report = ingest(
            corpus=Corpus(synced, [ROOT_COLLECTION]), wiki_root=wiki,
            fleet=Fleet([endpoint]), dials=Dials(max_tokens=256, flush_seconds=1),
        )  # fmt: skip
        prompts = server.request_texts()
    assert report.count == 2 and report.failed == []
    assert len(prompts) == 2
    assert all("5| " in prompt for prompt in prompts)  # the numbered document travelled
    assert not any("Candidates" in prompt for prompt in prompts)  # no candidate listing
    english = (wiki / page_for("leave.md")).read_text(encoding="utf-8")
    korean = (wiki / page_for("leave-ko.md")).read_text(encoding="utf-8")
    assert "summarized: true" in english and "Not summarized" not in english
    assert "## Key points" in english and "## Not verified" not in english
    assert "summarized: false" in korean and "does not write Korean" in korean
    assert "## Key points" in korean and "*(line " in korean
    header = dict(line.split(": ", 1) for line in korean.split("\n---\n")[0].splitlines()[1:])
    assert json.loads(header["points_verified"]) == json.loads(header["points_total"]) >= 1
    assert json.loads(header["verdict"]) == "ok"


def test_a_link_across_languages_gives_its_reason_in_the_page_language() -> None:
    english = Candidate("leave-en.md", "Leave Policy", "Staff get 15 days of annual leave.", 0.4)
    korean = Candidate(
        "leave-ko.md", "휴가 신청 절차", "연차 휴가는 인사 시스템에서 신청합니다.", 0.4
    )
    citable = citable_lines(KOREAN, "휴가 신청 절차")
    on_korean_page = parse_compact(
        '{"points": [5]}', truncated=False, citable=citable, title="휴가 신청 절차",
        path="k.md", candidates=[english, korean], prose=False, language="Korean",
    )  # fmt: skip
    assert [link.reason for link in on_korean_page.related] == [
        "관련된 영어 문서",
        "연차 휴가는 인사 시스템에서 신청합니다.",  # the same language: the document's own line
    ]
    assert link_reason(korean, "English") == "A related document in Korean"
    assert link_reason(english, "English") == "Staff get 15 days of annual leave."
