"""The rule layer that checks a page's prose against its document (quality/claims.py and
quality/quantities.py), in English and in Korean."""

from __future__ import annotations

import pytest

from wiki_assets.engine.documents.markdown import LINE_MAX
from wiki_assets.engine.quality.claims import check_prose
from wiki_assets.engine.quality.quantities import agrees, quantities
from wiki_assets.engine.quality.sentences import (
    DESCRIPTION,
    OPENS,
    SUMMARY,
    ProseCheck,
    SentenceCheck,
    Support,
    opening_line,
    page_line,
    quotable,
)

LEAVE = """Annual Leave Policy
Owner: People team, John Park.
Leave requests must be submitted within 30 days of the start of the quarter.
Every employee receives 25 days of paid annual leave per year.
Unused days expire on 2027-03-31 if they are not carried over.
Leave cannot be paid out in cash, except when an employee leaves the company.
A release is not rolled back without an incident ticket.
Employees may work remotely up to 3 days per week."""

KO_LEAVE = """연차 휴가 규정
담당: 인사팀 김민수 팀장
정규직 직원은 매년 15일의 유급 연차를 받습니다.
출장 중 하루 식비는 60,000원까지 지원합니다.
해외 출장 식비는 하루 60유로까지 지원합니다.
이월된 연차는 2027년 3월 31일까지 사용해야 합니다.
휴가는 김민수 팀장이 3영업일 안에 승인합니다.
연차는 퇴사할 때를 제외하고 현금으로 보상하지 않습니다.
병가는 오전 10시 전까지 팀장에게 알립니다."""


def one(sentence: str, document: str) -> SentenceCheck:
    (check,) = check_prose("", sentence, document, document.splitlines()[0]).sentences
    return check


def flagged(check: SentenceCheck) -> bool:
    return check.status in (Support.CONTRADICTED, Support.UNSUPPORTED)


# ---------------------------------------------------------------- changed numbers


def test_a_changed_number_is_contradicted_with_what_the_document_says() -> None:
    check = one(
        "Leave requests must be submitted within 37 days of the start of the quarter.", LEAVE
    )
    assert check.status is Support.CONTRADICTED
    assert check.document_says == "30 days"
    assert check.lines == (3, 3)
    assert check.reference == "line 3"


def test_the_same_number_is_supported_with_its_line() -> None:
    check = one(
        "Leave requests must be submitted within 30 days of the start of the quarter.", LEAVE
    )
    assert check.status is Support.SUPPORTED
    assert check.lines == (3, 3)


OFFICE = """Office move
The new office is a seven-minute walk from Pangyo station on the Shinbundang line.
A shuttle runs from Gangnam station every twenty minutes during the first month."""


@pytest.mark.parametrize(
    ("sentence", "status", "says"),
    [
        ("The new office is a 7-minute walk from Pangyo station.", Support.SUPPORTED, ""),
        ("A shuttle runs from Gangnam station every 20 minutes.", Support.SUPPORTED, ""),
        ("The new office is a ten-minute walk from Pangyo station.", Support.CONTRADICTED,
         "seven-minute"),
        ("A shuttle runs from Gangnam station every 30 minutes.", Support.CONTRADICTED,
         "twenty minutes"),
    ],
)  # fmt: skip
def test_a_number_in_words_is_the_same_number_in_digits(
    sentence: str, status: Support, says: str
) -> None:
    """The document writes "seven-minute", the summary 7 (or ten): the same number (or another
    one), not a number the document never states."""
    check = one(sentence, OFFICE)
    assert (check.status, check.document_says) == (status, says)


def test_a_changed_korean_number_is_contradicted() -> None:
    check = one("정규직 직원은 매년 18일의 유급 연차를 받습니다.", KO_LEAVE)
    assert check.status is Support.CONTRADICTED
    assert check.document_says == "15일"
    copied = one("정규직 직원은 매년 15일의 유급 연차를 받습니다.", KO_LEAVE)
    assert copied.status is Support.SUPPORTED
    # A word said otherwise (해마다 for 매년): the rules cannot know it says the same, a judge may.
    reworded = one("정규직 직원은 해마다 유급 연차 15일을 받습니다.", KO_LEAVE)
    assert reworded.status is Support.UNCHECKED


def test_korean_amounts_in_man_and_in_digits_are_the_same() -> None:
    assert one("출장 중 하루 식비는 6만 원까지 지원합니다.", KO_LEAVE).status is Support.SUPPORTED
    assert one("출장 중 하루 식비는 6만원까지 지원합니다.", KO_LEAVE).status is Support.SUPPORTED
    changed = one("출장 중 하루 식비는 7만 원까지 지원합니다.", KO_LEAVE)
    assert changed.status is Support.CONTRADICTED
    assert changed.document_says == "60,000원"


def test_full_width_digits_are_digits() -> None:
    assert (
        one("해외 출장 식비는 하루 ６０유로까지 지원합니다.", KO_LEAVE).status is Support.SUPPORTED
    )
    check = one("해외 출장 식비는 하루 ７０유로까지 지원합니다.", KO_LEAVE)
    assert check.status is Support.CONTRADICTED
    assert check.document_says == "60유로"


@pytest.mark.parametrize("date", ["2027-03-31", "March 31, 2027", "31 March 2027"])
def test_a_date_written_another_way_is_the_same_date(date: str) -> None:
    check = one(f"Unused days expire on {date} if they are not carried over.", LEAVE)
    assert check.status is Support.SUPPORTED


def test_a_korean_date_and_an_iso_date_agree_both_ways() -> None:
    assert (
        one("이월된 연차는 2027-03-31까지 사용해야 합니다.", KO_LEAVE).status is Support.SUPPORTED
    )
    english = "Unused days expire on 2027년 3월 31일 if they are not carried over."
    assert one(english, LEAVE).status is Support.SUPPORTED
    wrong = one("이월된 연차는 2027년 6월 30일까지 사용해야 합니다.", KO_LEAVE)
    assert wrong.status is Support.CONTRADICTED
    assert wrong.document_says == "2027년 3월 31일"


def test_a_wrong_english_date_is_contradicted() -> None:
    check = one("Unused days expire on June 30, 2027 if they are not carried over.", LEAVE)
    assert check.status is Support.CONTRADICTED
    assert check.document_says == "2027-03-31"


# ---------------------------------------------------------------- names


def test_a_swapped_english_name_is_contradicted() -> None:
    check = one("Owner: People team, Maria Kim.", LEAVE)
    assert check.status is Support.CONTRADICTED
    # The reader is shown what the document says in its place: the line's sentence.
    assert check.document_says == "Owner: People team, John Park."
    assert one("Owner: People team, John Park.", LEAVE).status is Support.SUPPORTED


def test_a_swapped_korean_name_is_contradicted() -> None:
    check = one("휴가는 박서연 팀장이 3영업일 안에 승인합니다.", KO_LEAVE)
    assert check.status is Support.CONTRADICTED
    assert check.document_says == "휴가는 김민수 팀장이 3영업일 안에 승인합니다."
    # A name in a claim the document makes of no one: not contradicted by the byline's name
    # (a reason no reader would follow), but a name it never gives.
    check = one("담당 팀장 이지은 팀장이 병가를 승인합니다.", KO_LEAVE)
    assert check.status is Support.UNSUPPORTED
    assert check.document_says == "the document never names 이지은"


def test_a_name_the_document_never_gives_is_unsupported() -> None:
    check = one("Leave requests within 30 days are approved by Maria Kim.", LEAVE)
    assert check.status is Support.UNSUPPORTED
    assert "Maria Kim" in check.document_says


# ---------------------------------------------------------------- polarity


def test_a_negation_flip_is_unsupported_in_english_and_korean() -> None:
    assert one("Leave can be paid out in cash.", LEAVE).status is Support.UNSUPPORTED
    assert one("연차는 현금으로 보상합니다.", KO_LEAVE).status is Support.UNSUPPORTED
    # "without" is a condition, not the sentence's polarity: its "not" is.
    flipped = one("A release may be rolled back without an incident ticket.", LEAVE)
    assert flipped.status is Support.UNSUPPORTED
    assert flipped.document_says == "the document says it the other way round"


def test_no_more_than_is_no_negation() -> None:
    # Not said the other way round: the document's "up to 3 days" in other words, which the rules
    # leave to a judge (the claim's "more" is not the document's).
    check = one("Employees may work remotely for no more than 3 days per week.", LEAVE)
    assert check.status is Support.UNCHECKED
    assert one("Employees may not work remotely up to 3 days per week.", LEAVE).status is (
        Support.UNSUPPORTED
    )


def test_only_when_is_not_flagged_against_not_except_when() -> None:
    check = one("Leave is only paid out in cash when an employee leaves the company.", LEAVE)
    assert not flagged(check)


# ---------------------------------------------------------------- invented and paraphrased


def test_an_invented_figure_is_unsupported() -> None:
    check = one("Employees receive 2 extra days of leave after 5 years of service.", LEAVE)
    assert check.status is Support.UNSUPPORTED
    assert check.document_says.startswith("the document never states")


def test_a_claim_in_other_words_without_figures_is_unchecked() -> None:
    assert one("Staff get a free gym membership.", LEAVE).status is Support.UNCHECKED


MOVE = """The Seoul Team Moves to Pangyo
## Getting there
The new office is a seven-minute walk from Pangyo station on the Shinbundang line.
Notes: A shuttle runs from Gangnam station every 20 minutes during the first month."""


def test_a_blend_of_two_lines_is_not_supported() -> None:
    # The embedded model's sentence: each line holds, but the sentence that takes the walk from
    # one and the station and the month from the other is no line's. The line that says most of
    # it gives another figure of its kind (20 minutes).
    blend = (
        "The new office is a seven-minute walk from Gangnam station every day during the "
        "first month."
    )
    assert one(blend, MOVE).status is Support.UNCHECKED
    assert one("The office is a seven-minute walk from Pangyo station.", MOVE).status is (
        Support.SUPPORTED
    )
    shuttle = "A shuttle runs from Gangnam station every 20 minutes in the first month."
    assert one(shuttle, MOVE).status is Support.SUPPORTED
    # Two figures, each from its own line: no blend, but no one sentence of the document says
    # it, so the rules leave it to a judge rather than call it supported.
    both = "A shuttle runs every 20 minutes; the office is a seven-minute walk from Pangyo."
    assert one(both, MOVE).status is Support.UNCHECKED


def test_one_word_of_a_short_sentence_found_is_no_passage() -> None:
    # A small model's "Panda: Park" has one of its two words in the owner's line: a coincidence.
    assert one("Panda: Park.", LEAVE).status is Support.UNCHECKED
    assert one("Owner: Park.", LEAVE).status is Support.SUPPORTED
    assert one("정규직은 유급입니다.", KO_LEAVE).status is Support.SUPPORTED


@pytest.mark.parametrize(
    "sentence",
    [
        "Each employee gets 25 days of paid leave a year.",
        "Unused leave days expire on March 31, 2027 unless carried over.",
        "Staff can work from home up to 3 days a week.",
    ],
)
def test_a_true_paraphrase_is_not_flagged(sentence: str) -> None:
    assert not flagged(one(sentence, LEAVE))


def test_a_time_of_day_is_no_duration() -> None:
    # "10 days" is not found in "오전 10시" (a bare 10 would agree with any 10).
    assert flagged(one("병가는 10일 전까지 팀장에게 알립니다.", KO_LEAVE))
    assert one("병가는 오전 10시 전까지 팀장에게 알립니다.", KO_LEAVE).status is Support.SUPPORTED


# ---------------------------------------------------------------- pages


def test_every_sentence_of_a_multi_sentence_summary_is_checked_in_order() -> None:
    summary = (
        "Every employee receives 25 days of paid annual leave per year. "
        "Leave requests must be submitted within 37 days of the start of the quarter. "
        "Staff get a free gym membership."
    )
    prose = check_prose("The leave policy of the company.", summary, LEAVE, "Annual Leave Policy")
    parts = [s.part for s in prose.sentences]
    assert parts == [DESCRIPTION, SUMMARY, SUMMARY, SUMMARY]
    statuses = [s.status for s in prose.sentences[1:]]
    assert statuses == [Support.SUPPORTED, Support.CONTRADICTED, Support.UNCHECKED]
    assert prose.sentences[1].lines == (4, 4)
    assert prose.count(Support.CONTRADICTED) == 1
    assert prose.unchecked() == [
        i for i, s in enumerate(prose.sentences) if s.status is Support.UNCHECKED
    ]


def test_a_korean_multi_sentence_summary() -> None:
    summary = (
        "정규직 직원은 매년 15일의 유급 연차를 받습니다. 김민수 팀장이 5영업일 안에 승인합니다."
    )
    prose = check_prose("", summary, KO_LEAVE, "연차 휴가 규정")
    assert [s.status for s in prose.sentences] == [Support.SUPPORTED, Support.CONTRADICTED]
    assert prose.sentences[1].document_says == "3영업일"
    assert prose.sentences[1].lines == (7, 7)


def test_json_round_trip() -> None:
    prose = check_prose(
        "Every employee receives 25 days of paid annual leave per year.",
        "Leave requests must be submitted within 37 days of the start of the quarter.",
        LEAVE,
        "Annual Leave Policy",
    )
    assert ProseCheck.from_json(prose.to_json()) == prose
    assert prose.to_json()[1]["status"] == "contradicted"
    assert ProseCheck.from_json("not a list") == ProseCheck()
    odd = ProseCheck.from_json([{"text": "x", "status": "bogus", "lines": [1]}, 7])
    assert odd.sentences == (SentenceCheck("x", SUMMARY, Support.UNCHECKED),)


def test_quotable_keeps_quotes_and_judged_sentences_only() -> None:
    description = (
        "Every employee receives 25 days of paid annual leave per year. "
        "Leave requests must be submitted within 37 days of the start of the quarter. "
        "Requests are submitted within 30 days of the quarter's start."
    )
    prose = check_prose(
        description, "Staff get a free gym membership.", LEAVE, "Annual Leave Policy"
    )
    copied, changed, reworded, _ = prose.sentences
    assert copied.quoted and copied.status is Support.SUPPORTED
    assert changed.status is Support.CONTRADICTED and not changed.quoted
    assert not reworded.quoted
    quoted = quotable(description, prose.sentences)
    assert quoted == "Every employee receives 25 days of paid annual leave per year."
    # A judge's verdict makes a sentence quotable; the rules' own "supported" of a sentence that
    # is not the document's words does not.
    judged = SentenceCheck(reworded.text, DESCRIPTION, Support.SUPPORTED, (3, 3), "", "judge-m")
    ruled = SentenceCheck(reworded.text, DESCRIPTION, Support.SUPPORTED, (3, 3))
    assert quotable(description, [judged]) == reworded.text
    assert quotable(description, [ruled]) == ""
    assert quotable(description, []) == ""  # nothing checked: nothing to quote
    assert quotable("-", []) == quotable(" - ", [copied]) == ""  # no description, as pages show it
    # Where nothing may be quoted, a page is listed by its document's opening, saying so.
    assert page_line(description, [ruled], "Leave is for rest.") == f"{OPENS}Leave is for rest."
    assert page_line(description, [judged], "Leave is for rest.") == reworded.text
    assert page_line(description, [], "") == ""


def test_opening_line_is_the_first_sentence_cut_at_a_word() -> None:
    opening = (
        "업무 중 개인 카드나 현금으로 먼저 낸 비용을 회사가 돌려드립니다. 30일 안에 신청하세요."
    )
    assert (
        opening_line(opening) == "업무 중 개인 카드나 현금으로 먼저 낸 비용을 회사가 돌려드립니다."
    )
    faq = "Q. 요금은 어떻게 계산되나요? 저장 용량에 따라 매월 계산됩니다. 부가세는 별도입니다."
    assert opening_line(faq) == "Q. 요금은 어떻게 계산되나요? 저장 용량에 따라 매월 계산됩니다."
    assert opening_line("- ") == opening_line("") == ""
    endless = "word, " * 60  # a "sentence" with no stop, as a list or a table can be
    line = opening_line(endless)
    assert line.endswith("word…") and len(line) <= LINE_MAX and endless.startswith(line[:-1])


# ---------------------------------------------------------------- quantities


def test_quantities_read_korean_and_english_forms() -> None:
    (weeks,) = quantities("2주")
    (days,) = quantities("14 days")
    assert agrees(weeks, days)
    (big,) = quantities("1억2천만 원")
    assert (big.value, big.kind) == ("120000000", "krw")
    (euros,) = quantities("€60")
    assert agrees(euros, quantities("６０유로를")[0])
    assert not agrees(quantities("10일")[0], quantities("오전 10시")[0])
    (clock,) = quantities("오후 2시 30분")
    assert clock.value == "14:30"
    # Number words count before a unit the rules know, and only there.
    worded = quantities("every twenty-five minutes for two weeks, one of the two teams")
    assert [(q.value, q.kind, q.text) for q in worded] == [
        ("25", "minute", "twenty-five minutes"),
        ("14", "day", "two weeks"),
    ]


POSTMORTEM = """Outage of 2026-03-11
Severity: SEV1.
The outage was caused by a renamed config key that the deploy did not reject.
Deploys go to one zone at a time, and the next zone waits 30 minutes.
Billing tickets were mostly about SLA credits.
Feature requests are reviewed monthly by Product.
Next step: the team shares its findings with the customer in a written report."""


@pytest.mark.parametrize(
    "sentence",
    [
        # True words in a wrong relation, a wrong actor, an invented thing of two real words: a
        # small model's false sentences, whose words the document has, but not its claim.
        "The outage was caused by a deploy to one zone at a time.",
        "The customer asked the team to share its findings.",
        "The company will also provide updates on the issue of feature credit.",
        "Product reviews the SLA credits monthly.",
    ],
)
def test_the_words_of_the_document_in_another_claim_are_not_supported(sentence: str) -> None:
    assert one(sentence, POSTMORTEM).status is Support.UNCHECKED


def test_a_sentence_the_document_states_is_supported_and_its_own_words_are_quoted() -> None:
    copied = one("Deploys go to one zone at a time.", POSTMORTEM)
    assert copied.status is Support.SUPPORTED and copied.quoted and copied.lines == (4, 4)
    near = one("The team shares its findings with the customer in a report.", POSTMORTEM)
    assert near.status is Support.SUPPORTED and not near.quoted and near.lines == (7, 7)
    # Fewer than two words that claim anything, besides the title's: nothing to place.
    assert one("SHOCKED: SEV1.", POSTMORTEM).status is Support.UNCHECKED
    # A sentence that runs on over a line break (a list's items) is one sentence of the document.
    items = "Checks:\n- tests pass\n- the config keys are validated\n- a reviewer approves"
    wrapped = one("Tests pass, the config keys are validated and a reviewer approves.", items)
    assert wrapped.status is Support.SUPPORTED and wrapped.lines == (2, 4)


def test_the_labelled_real_prose_is_whole_and_the_rules_mark_no_false_sentence_supported() -> None:
    """Every label of benchmarks/real_prose_labels.jsonl is one of the three and names a sentence
    the recorded answers hold; measured as the benchmark does, no sentence of the rounds the rules
    were set on that is labelled FALSE by reading its document is marked supported by the rules.
    The held-out rounds are a measurement (``benchmarks.faithfulness`` prints them), not a target:
    a rule changed to pass them would make them rounds the rules were set on."""
    from benchmarks.real_prose import HELD_OUT_ROUND, load_labels, measure

    labels = load_labels()
    assert {item["label"] for item in labels.values()} <= {"TRUE", "FALSE", "VAGUE"}
    assert all(item["why"].strip() for item in labels.values())
    measured = measure()
    assert {(item.source, item.text) for item in measured} == set(labels)
    set_on = [i for i in measured if i.round < HELD_OUT_ROUND]
    assert not [i for i in set_on if i.label == "FALSE" and i.status is Support.SUPPORTED]


def test_a_not_of_another_claim_on_the_line_is_no_flipped_sentence() -> None:
    policy = (
        "Annual Leave Policy\n"
        "Every full-time employee receives 25 days of paid annual leave per year.\n"
        "Sick leave is separate and does not reduce annual leave."
    )
    sentence = (
        "This document provides a policy for employees, including paid annual leave and sick leave."
    )
    assert one(sentence, policy).status is Support.UNCHECKED
    flipped = one("Sick leave is separate and reduces annual leave.", policy)
    assert flipped.status is Support.UNSUPPORTED
    assert flipped.document_says == "the document says it the other way round"


def test_a_korean_noun_phrase_copied_from_the_document_asserts_nothing() -> None:
    """Korean puts a sentence's predicate last: a "sentence" that ends in a noun (a list item's
    label, a heading) names a topic and says nothing of it, so the rules call it no claim they
    support, copied or not; the same words with a predicate, in full or in a note's style, do."""
    spec = (
        "객체 버전 관리 기획\n"
        "1차 출시 범위\n"
        "- 30일이 지난 이전 버전 자동 삭제\n"
        "30일이 지난 이전 버전은 자동으로 삭제됩니다.\n"
        "관리자 화면에서 보존 기간 변경 가능"
    )
    assert one("30일이 지난 이전 버전 자동 삭제", spec).status is Support.UNCHECKED
    assert one("30일이 지난 이전 버전은 자동으로 삭제됩니다.", spec).status is Support.SUPPORTED
    assert one("관리자 화면에서 보존 기간 변경 가능", spec).status is Support.SUPPORTED
    # Its figures are still checked: a changed one is flagged, predicate or none.
    assert flagged(one("90일이 지난 이전 버전 자동 삭제", spec))


def test_what_repeats_a_word_or_copies_a_heading_asserts_nothing() -> None:
    """A word said again adds no claim ("Postmortem: Postmortem: …" is one word), and a Markdown
    heading copied names a topic: neither is a claim the rules support, though the document has
    the words."""
    assert one("Postmortem: Postmortem: Postmortem: Postmortem:", POSTMORTEM).status is (
        Support.UNCHECKED
    )
    assert one("Deploys go to one zone at a time.", POSTMORTEM).status is Support.SUPPORTED
    assert one("# Deploys go to one zone at a time", POSTMORTEM).status is Support.UNCHECKED


def test_a_list_copied_with_an_invented_item_is_not_supported() -> None:
    """Two words in a row that the document's sentence lacks name a thing it never names, even
    in a long sentence that may otherwise miss a word."""
    policy = (
        "Travel and Expense Policy\n"
        "This policy covers costs that employees pay personally while working: client travel, "
        "taxis after 10 pm, team meals approved in advance, and small equipment under 100,000 KRW."
    )
    listed = (
        "It covers costs that employees pay personally while working: client travel, taxis after "
        "10 pm, team meals approved in advance, small equipment under 100,000 KRW"
    )
    assert one(listed + ".", policy).status is Support.SUPPORTED
    assert one(listed + ", and business plans.", policy).status is Support.UNCHECKED


def test_a_lists_numbering_run_into_a_sentence_counts_nothing() -> None:
    """A small model writes a numbered list as prose, each step ending in the next one's number
    ("… before closing, 7."): that number counts nothing, so it is no figure the document must
    give; a figure of the step itself is still checked."""
    runbook = (
        "metad disk pressure\n"
        "1. Find the metad leader with metadctl status.\n"
        "2. Run compaction on the leader first.\n"
        "3. Confirm that disk usage is below 80% on all nodes before closing."
    )
    assert one("Run compaction on the leader first, 6.", runbook).status is Support.SUPPORTED
    numbered = one("Confirm that disk usage is below 80% on all nodes before closing, 7.", runbook)
    assert numbered.status is Support.SUPPORTED
    changed = one("Confirm that disk usage is below 90% on all nodes before closing, 7.", runbook)
    assert flagged(changed)


LOGO_GUIDE = """Brand logo guide
Use the full-colour logo on white or light backgrounds and the white logo on dark photos.
Keep clear space around the logo equal to the height of the letter H."""


def test_what_the_document_is_or_holds_is_unchecked_where_it_does_not_say_so_of_itself() -> None:
    """A sentence such as "It includes …" or "The document is for …" claims the document's
    relation to its words, which a line holding the words does not state (the guide says which
    logo to use where; it holds no logo). Where the document says it of itself ("This policy
    covers …"), it is stated: test_a_list_copied_with_an_invented_item_is_not_supported."""
    for sentence in (
        "It includes a full-colour logo on white or light backgrounds and a white logo on dark "
        "photos.",
        "The document is for the full-colour logo on white or light backgrounds.",
        "이 문서는 흰 배경에 컬러 로고를 씁니다.",
    ):
        assert one(sentence, LOGO_GUIDE).status is Support.UNCHECKED, sentence
    assert one("Use the full-colour logo on white or light backgrounds.", LOGO_GUIDE).status is (
        Support.SUPPORTED
    )


def test_a_lists_item_numbers_and_a_number_alone_are_no_figures() -> None:
    """List numbers ("1) Parking; 2) Shuttle Bus", "… 조건하면 2.", "1.") are no figures the
    document must give; a sentence is not flagged for them (the reason would name a list number)."""
    notice = "Commuting\nThe shuttle leaves Suwon station at 8:10 and 8:40.\nParking is free."
    listed = one("The details include: 1) Parking; 2) Shuttle Bus; 3) Bicycles; 4", notice)
    assert not flagged(listed) and "never states" not in listed.document_says
    assert not flagged(one("1.", notice))
    club = "동호회\n직원 다섯명 이상이면 된다."
    assert not flagged(one("직원 다섯명 이상이 활동비를 신청하면 2.", club))
    # A figure of the item itself is still checked.
    assert flagged(one("The shuttle leaves Suwon station at 9:10 and 8:40.", notice))
