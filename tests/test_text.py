"""The text helpers every room shares (``wiki_assets/engine/text/``): the Hangul classes and why
they differ, where sentences end, and normalised text."""

from __future__ import annotations

import re
import unicodedata

from wiki_assets.engine.documents.language import detect_language
from wiki_assets.engine.text.normalize import normalize, wordless
from wiki_assets.engine.text.scripts import (
    HANGUL,
    HANGUL_WORD,
    hangul_letters,
    letters,
    script_of,
)
from wiki_assets.engine.text.sentences import SENTENCE_END, SENTENCE_MARKS

KOREAN = "휴가 신청은 팀장이 3영업일 안에 승인합니다."


def test_a_korean_word_is_a_run_of_syllables_and_a_lone_jamo_is_none() -> None:
    assert HANGUL_WORD.findall("휴가는 2일 ㅋㅋ, leave") == ["휴가는", "일"]
    assert HANGUL.findall("ㄱ가") == ["가"]
    assert hangul_letters("ㄱ가 a") == 2


def test_normalised_text_spells_decomposed_korean_in_syllables() -> None:
    """Why the checks' class is the syllables alone: a document saved decomposed (NFD, every
    syllable two or three jamo) is composed again by NFKC, so its words are syllables."""
    decomposed = unicodedata.normalize("NFD", KOREAN)
    assert HANGUL.search(decomposed) is None
    assert HANGUL_WORD.findall(normalize(decomposed)) == HANGUL_WORD.findall(normalize(KOREAN))
    assert HANGUL_WORD.findall(normalize(KOREAN)) == ["휴가", "신청은", "팀장이", "영업일", "안에",
                                                     "승인합니다"]  # fmt: skip


def test_telling_the_language_counts_the_jamo_of_raw_text() -> None:
    """Why language detection counts the jamo too: it reads raw text, decomposed or not."""
    decomposed = unicodedata.normalize("NFD", KOREAN)
    assert hangul_letters(decomposed) > hangul_letters(KOREAN) > 0
    assert detect_language(decomposed) == detect_language(KOREAN) == "ko"
    assert detect_language("Leave requests are approved within 3 days (휴가).") == "en"


def test_sentences_end_after_a_latin_or_a_cjk_mark_and_its_space() -> None:
    text = "첫 문장입니다. 둘째。 Third! Fourth?\tVersion 2.5 stays whole"
    assert SENTENCE_END.split(text) == [
        "첫 문장입니다.", "둘째。", "Third!", "Fourth?", "Version 2.5 stays whole"
    ]  # fmt: skip
    assert all(piece.endswith(SENTENCE_MARKS) for piece in SENTENCE_END.split(text)[:-1])
    # Found where the spaces after a mark are, space by space: the same matches.
    after_a_mark = re.compile(rf"(?<=[{''.join(SENTENCE_MARKS)}])\s+")
    pieces = [".", "!", "。", "？", " ", "  ", "\t", "\n", "\u3000", "a", "2.5", "다."]
    for text in ("".join(pieces[(7 * i + j * j) % len(pieces)] for j in range(12))
                 for i in range(200)):  # fmt: skip
        assert SENTENCE_END.split(text) == after_a_mark.split(text)
        assert [m.span() for m in SENTENCE_END.finditer(text)] == [
            m.span() for m in after_a_mark.finditer(text)
        ]


def test_normalised_text_and_the_script_of_a_word() -> None:
    assert normalize("Ｆｕｌｌ－width **Bold**  text\n— 휴가") == "full width bold text 휴가"
    assert wordless("— … -") and not wordless("- a")
    # ASCII text takes a bytes table, other text the character table: the same words either way
    # (the Kelvin sign is ASCII once NFKC has read it; a Hangul syllable sends a text the other).
    ascii = "".join(map(chr, range(0x80)))
    assert normalize(ascii) == "0123456789 abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz"
    assert [normalize(ch) for ch in ascii] == [ch.lower() if ch.isalnum() else "" for ch in ascii]
    assert normalize("\u212a-Pop_UP\t2.5") == "k pop up 2 5"
    assert normalize("\u212a-Pop_UP\t2.5 휴") == "k pop up 2 5 휴"
    # ASCII, Hangul and common punctuation are read by patterns, other text by the table: each
    # the words a character's category gives.
    def by_category(text: str) -> str:
        text = unicodedata.normalize("NFKC", text).lower()
        kept = (c if unicodedata.category(c)[0] in "LMN" else " " for c in text)
        return " ".join("".join(kept).split())
    punctuation = "".join(map(chr, (*range(0x2000, 0x2070), *range(0x20A0, 0x20D0), 0xB7, 0xAA)))
    for text in (punctuation, f"휴가—Leave{punctuation}2일·3", "Note 12 — 서울 “오피스” ½ é"):
        assert normalize(text) == by_category(text)
    assert [script_of(word) for word in ("휴가", "leave", "休暇", "2026")] == [
        "HANGUL", "LATIN", "CJK", ""
    ]  # fmt: skip


def test_letters_are_counted_as_str_isalpha_counts_them() -> None:
    """ASCII text is counted by its bytes, other text letter by letter: the same count."""
    ascii = "".join(map(chr, range(0x80)))
    punctuation = "".join(map(chr, (*range(0x2000, 0x2070), *range(0x20A0, 0x20D0), 0xB7)))
    texts = (ascii, punctuation, f"휴가—Leave{punctuation}2일·3", KOREAN, "ㅋㅋ 휴가 é ½ 休暇", "")
    for text in texts:
        assert letters(text) == sum(map(str.isalpha, text)), text
    assert letters("Note 12 — 서울 “오피스”") == 9
