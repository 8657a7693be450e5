"""What a faithful or a fabricating model writes for a librarian's page request.

Both read the document out of the request (between ``<document>`` and ``</document>``, or a
part between ``<part>`` tags when notes are asked for), with its line numbers when the lines
come numbered (``12| text``) and counted from 1 otherwise, and answer with JSON that fits the
requested schema's bounds:

* **faithful**: every key point is a line of the document with that line's words as its quote
  and its number as its lines; the description is its last statement and the summary two from
  its second half (not its opening), the topics its most frequent words that name a subject
  (a Korean word without its particle, no verb). Notes on a part are its lines, numbered.
* **fabricating**: fluent, in the document's language, and invented: the points state facts
  (with numbers) the document does not have, quoting the invented sentence itself or, every
  other point, a real line that says something else.

Either writes within the request's ``max_tokens``, as a model asked for a short page does: its
last key points, topics and summary sentence are left out until the answer fits (a page that
cannot fit even then is cut, and says so).

The text is derived from the request alone, so answers are deterministic.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from collections.abc import Callable
from typing import Any

from wiki_assets.engine.text.scripts import HANGUL, HANGUL_SYLLABLES
from wiki_assets.engine.text.sentences import SENTENCE_END
from wiki_assets.simulator.tokens import estimate_tokens

__all__ = ["page_answer"]

_BLOCK = re.compile(r"<(document|part)>\n(.*)\n</\1>", re.DOTALL)
_NUMBERED = re.compile(r"^(?:Part \d+: )?(\d+)\| ?(.*)$")
_MARKUP = re.compile(r"^\s*(?:#+|[-*+>]|\d+[.)])\s*")
_WORD = re.compile(rf"[^\W\d_]{{5,}}|[{HANGUL_SYLLABLES}]{{2,}}")
_COMMON = frozenset(
    "about after other their there these which where while would should document documents "
    "문서".split()
)
_VERB_ENDING = re.compile(r"(?:다|요|지|고|면|며|서|게)$")
_QUOTE_WORDS = 8
_PARTICLE = re.compile(
    r"(?:에서는|에게는|에는|에서|에게|으로|은|는|이|가|을|를|의|에|로|와|과|도)$"
)

_INVENTED = {
    "en": [
        "The programme was launched in 2019 to cut shipping costs for partner warehouses.",
        "Approval needs a sign-off from the regional finance committee within 45 days.",
        "All records are archived on magnetic tape in the Frankfurt vault every 3 months.",
        "Contractors receive a quarterly bonus of 12 percent for each completed audit.",
        "It replaces the mainframe scheduler that was retired in 2017 after 31 years.",
        "Membership is limited to 250 franchise partners across 14 coastal regions.",
    ],
    "ko": [
        "이 제도는 2019년에 물류 비용 절감을 위해 도입되었습니다.",
        "모든 기록은 3개월마다 프랑크푸르트 보관소의 자기 테이프에 저장됩니다.",
        "협력사 직원은 감사를 마칠 때마다 12퍼센트의 분기 보너스를 받습니다.",
        "지역 재무 위원회가 45일 안에 최종 결재를 내립니다.",
        "2017년에 폐기된 메인프레임 스케줄러를 31년 만에 대체합니다.",
        "가맹 협력사는 해안 지역 14곳의 250개 업체로 제한됩니다.",
    ],
}
_INVENTED_TOPICS = {
    "en": ["logistics", "franchise partners", "tape archive", "audit bonus", "mainframe"],
    "ko": ["물류", "가맹 협력사", "테이프 보관", "감사 보너스", "메인프레임"],
}
_REASONS = {
    "en": "Readers of this page need it too.",
    "ko": "함께 읽을 관련 문서입니다.",
}


def page_answer(
    behaviour: str, message: str, schema: dict[str, Any] | None, max_tokens: int | None = None
) -> str | None:
    """The answer of a ``faithful`` or ``fabricating`` model to ``message`` (the last user
    message), within ``max_tokens`` where it can be, or ``None`` where it is no page or notes
    request (the caller answers as usual)."""
    if behaviour not in ("faithful", "fabricating", "contradicting", "embellishing"):
        return None
    found = _BLOCK.search(message)
    if found is None or (schema is not None and "key_points" not in _properties(schema)):
        return None
    lines = _lines(found.group(2))
    language = _language(found.group(2))
    seed = zlib.crc32(message.encode("utf-8"))
    if found.group(1) == "part":
        if behaviour == "faithful":
            return "\n".join(f"{number}| {text}" for number, text in _facts(lines)[:16])
        return "\n".join(_rotate(_INVENTED[language], seed)[:3])
    page = (_fabricated if behaviour == "fabricating" else _faithful)(lines, language, seed)
    if behaviour == "contradicting":
        page["summary"] = f"{_contradicting(_facts(lines) or lines)} {UNSTATED[language]}"
    elif behaviour == "embellishing":
        page["summary"] = f"{page['summary']} {UNSTATED[language]}"
    page["related"] = _related(schema, language)
    return json.dumps(_shorter(_fit(page, schema, schema), max_tokens), ensure_ascii=False)


def _shorter(page: dict[str, Any], max_tokens: int | None) -> dict[str, Any]:
    """``page`` as a model that keeps to ``max_tokens`` writes it: each of :data:`_SHORTER`'s
    steps in turn, as long as it helps, until the page fits (a quote stays the document's
    words: it loses words at its end)."""

    def fits() -> bool:
        size = estimate_tokens(json.dumps(page, ensure_ascii=False))
        return max_tokens is None or size <= max_tokens

    for step in _SHORTER:
        while not fits() and step(page):
            pass
    return page


def _drop(field: str, keep: int) -> Callable[[dict[str, Any]], bool]:
    """A step that leaves out the last item of the page's ``field`` while it has over ``keep``."""

    def step(page: dict[str, Any]) -> bool:
        items = page.get(field, [])
        if len(items) <= keep:
            return False
        items.pop()
        return True

    return step


def _one_sentence(page: dict[str, Any]) -> bool:
    first = _sentence(page["summary"])
    if first == page["summary"]:
        return False
    page["summary"] = first
    return True


def _cut(words: int, summary: bool = True) -> Callable[[dict[str, Any]], bool]:
    """A step that cuts the last word of the page's longest text, down to ``words`` words
    (the summary only with ``summary``: a few words are no summary)."""

    def step(page: dict[str, Any]) -> bool:
        texts = [(page, "description"), *([(page, "summary")] if summary else [])]
        texts += [(point, field) for point in page["key_points"] for field in ("text", "quote")]
        cuttable = [(o, f) for o, f in texts if len(o[f].split()) > words]
        if not cuttable:
            return False
        holder, field = max(cuttable, key=lambda found: len(found[0][found[1]]))
        holder[field] = " ".join(holder[field].split()[:-1])
        return True

    return step


# What a page does without when it must be shorter, in order: extra points and topics, a second
# summary sentence, long texts' ends, a second point, a second link, more words; its last link
# only when nothing else is left.
_SHORTER: tuple[Callable[[dict[str, Any]], bool], ...] = (
    _drop("key_points", 2),
    _drop("topics", 2),
    _one_sentence,
    _cut(12),
    _drop("key_points", 1),
    _drop("related", 1),
    _cut(4, summary=False),
    _cut(6),
    _drop("related", 0),
)


def _language(text: str) -> str:
    """'ko' where Hangul is a fifth of the letters or more (Korean documents quote English)."""
    letters = sum(1 for char in text if char.isalpha())
    return "ko" if letters and len(HANGUL.findall(text)) >= 0.2 * letters else "en"


def _lines(block: str) -> list[tuple[int, str]]:
    """(number, text) of the non-blank lines, by the numbers shown or else counted from 1. Of
    numbered text only the numbered lines count (a part may begin inside a line)."""
    raw = block.split("\n")
    numbered = [found for found in map(_NUMBERED.match, raw) if found is not None]
    if numbered:
        return [(int(found.group(1)), found.group(2)) for found in numbered]
    return [(number, line) for number, line in enumerate(raw, start=1) if line.strip()]


_HEADER = re.compile(r"^(?:From|To|Cc|Date|Subject): ")  # a mail's, as its text begins


def _facts(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Lines that state something: not the title, not a heading, not a mail's header, four
    words or more."""
    facts = []
    for number, line in lines[1:]:
        if line.lstrip().startswith("#") or _HEADER.match(line):
            continue
        text = _MARKUP.sub("", line).strip()
        if len(text.split()) >= 4:
            facts.append((number, text))
    return facts


def _sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when there is no sentence break)."""
    return SENTENCE_END.split(text, maxsplit=1)[0]


def _title(lines: list[tuple[int, str]]) -> str:
    return lines[0][1].lstrip("#").strip() if lines else "Untitled"


def _faithful(lines: list[tuple[int, str]], language: str, seed: int) -> dict[str, Any]:
    facts = _facts(lines) or [(number, text) for number, text in lines]
    step = max(1, len(facts) // 4)
    chosen = facts[::step][:4]
    later = facts[len(facts) // 2 :][:2] or facts[:2]
    words = Counter(
        noun
        for _, text in facts
        for word in _WORD.findall(text)
        if _subject(noun := _noun(word.lower()))
    )
    return {
        "title": _title(lines),
        "description": _sentence(facts[-1][1]) if facts else _title(lines),  # not the opening
        "summary": " ".join(text for _, text in later),
        "key_points": [
            {"text": text, "quote": " ".join(text.split()[:_QUOTE_WORDS]), "lines": [n, n]}
            for n, text in chosen
        ],
        "topics": [word for word, _ in words.most_common(5)],
    }


# A sentence no document of the simulator's says, in words the rules cannot place: a judge's.
UNSTATED = {
    "en": "Staff appreciate how clearly this arrangement was explained at the kickoff.",
    "ko": "직원들은 발표회에서 이 제도가 분명하게 설명되었다고 평가합니다.",
}


def _contradicting(facts: list[tuple[int, str]]) -> str:
    """One true sentence, then the next with its first number changed (+7): a summary that
    contradicts its document (the first line after the middle that has a number). The caller
    adds a sentence the document does not state."""
    later = facts[len(facts) // 2 :] + facts[: len(facts) // 2]
    with_number = [text for _, text in later if re.search(r"\d", text)]
    true = next((text for _, text in later if text not in with_number[:1]), later[0][1])
    if not with_number:
        return _sentence(true)
    changed = re.sub(r"\d+", lambda m: str(int(m.group(0)) + 7), _sentence(with_number[0]), count=1)
    return f"{_sentence(true)} {changed}"


def _noun(word: str) -> str:
    """A Korean word as a topic names it: without the particle it carries in a sentence
    (``분기에는`` is ``분기``); any other word as it is."""
    if HANGUL.match(word) and len(word) >= 3:
        return _PARTICLE.sub("", word) or word
    return word


def _subject(word: str) -> bool:
    """Whether a frequent word names a subject: not a common word, not a Korean verb's form
    (``합니다``, ``주세요``), not the word "document"."""
    return word not in _COMMON and not (HANGUL.match(word) and _VERB_ENDING.search(word))


def _fabricated(lines: list[tuple[int, str]], language: str, seed: int) -> dict[str, Any]:
    invented = _rotate(_INVENTED[language], seed)
    facts = _facts(lines) or lines
    points = []
    for index, claim in enumerate(invented[2:6]):
        if index % 2 and facts:  # a real line under an invented claim
            number, text = facts[(seed + index) % len(facts)]
            points.append({"text": claim, "quote": " ".join(text.split()[:8]), "lines": [number]})
        else:
            points.append({"text": claim, "quote": claim, "lines": [index + 1]})
    return {
        "title": _title(lines),
        "description": invented[0],
        "summary": f"{invented[1]} {invented[0]}",
        "key_points": points,
        "topics": _INVENTED_TOPICS[language],
    }


def _related(schema: dict[str, Any] | None, language: str) -> list[dict[str, str]]:
    """Links to the first two candidates the schema allows, each with a reason."""
    link = (schema or {}).get("$defs", {}).get("RelatedLink", {})
    paths = link.get("properties", {}).get("path", {}).get("enum") or []
    return [{"path": path, "reason": _REASONS[language]} for path in paths[:2]]


def _rotate(items: list[str], seed: int) -> list[str]:
    start = seed % len(items)
    return items[start:] + items[:start]


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _fit(value: Any, schema: Any, root: dict[str, Any] | None) -> Any:
    """``value`` within ``schema``'s bounds (maxLength, maxItems), following local ``$ref``s."""
    if not isinstance(schema, dict) or root is None:
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = {**target, **schema}
    if isinstance(value, str) and isinstance(schema.get("maxLength"), int):
        cut = value[: schema["maxLength"]]
        return cut if len(value) <= len(cut) else cut.rsplit(" ", 1)[0] or cut
    if isinstance(value, list):
        if isinstance(schema.get("maxItems"), int):
            value = value[: schema["maxItems"]]
        return [_fit(item, schema.get("items"), root) for item in value]
    if isinstance(value, dict):
        properties = _properties(schema)
        return {key: _fit(item, properties.get(key), root) for key, item in value.items()}
    return value
