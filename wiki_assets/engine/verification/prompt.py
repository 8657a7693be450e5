"""What a judge is asked and what it answers: one document, numbered as a page request shows it,
and the sentences to check against it (:func:`judge_messages`, :func:`judge_schema`); its answer,
a verdict per sentence (:class:`Judgement`, read by :func:`parse_verdicts`).

The prompt asks for the document's word only ("does the document say this?"), one sentence at a
time but in one request per page, so the document is read once (MiniCheck's question, asked for
all of a page's sentences at once: they share the document's prefix).

No HTTP here: the model client (:meth:`~wiki_assets.engine.llm.client.ModelClient.judge`) sends
it, and the dispatcher and the simulation read a :class:`Judgement` without importing ``openai``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

VERDICTS = ("supported", "not_stated", "contradicted")

JUDGE_SYSTEM = (
    "You check sentences against a document, like a careful fact-checker. For each numbered "
    "sentence, answer from the document alone: supported (the document says it), not_stated "
    "(the document does not say it), or contradicted (the document says something else: another "
    "number, date, name, or the opposite). Give the document's line numbers that decide it, and "
    "for a contradicted sentence what the document says instead, in its own words."
)
JUDGE_USER = "<document>\n{text}\n</document>\n\nSentences to check:\n{sentences}"


@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    """A judge's word on one sentence: ``supported`` (the document says it), ``not_stated``, or
    ``contradicted`` (it says otherwise), with the document's ``lines`` and, for a
    contradicted one, what the document says."""

    index: int  # the sentence's number in the request, from 1
    verdict: str
    lines: tuple[int, ...] = ()
    document_says: str = ""


@dataclass(frozen=True, slots=True)
class Judgement:
    """A judge's answer on one page's sentences, and what it took on the model."""

    verdicts: tuple[SentenceVerdict, ...]
    model: str
    prompt_tokens: int
    completion_tokens: int
    requests: int = 1


def judge_messages(numbered_text: str, sentences: Sequence[str]) -> list[dict[str, str]]:
    listed = "\n".join(f"{i}. {sentence}" for i, sentence in enumerate(sentences, start=1))
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": JUDGE_USER.format(text=numbered_text, sentences=listed)},
    ]


def judge_schema(count: int) -> dict[str, Any]:
    """One verdict per sentence, in order (the grammar of a constraining server keeps it so)."""
    verdict = {
        "type": "object",
        "properties": {
            "sentence": {"type": "integer", "minimum": 1, "maximum": count},
            "verdict": {"type": "string", "enum": list(VERDICTS)},
            "lines": {"type": "array", "items": {"type": "integer"}, "maxItems": 6},
            "document_says": {"type": "string", "maxLength": 300},
        },
        "required": ["sentence", "verdict", "lines"],
    }
    return {
        "type": "object",
        "properties": {
            "verdicts": {"type": "array", "items": verdict, "minItems": count, "maxItems": count}
        },
        "required": ["verdicts"],
    }


def parse_verdicts(content: str, count: int) -> tuple[SentenceVerdict, ...]:
    """The verdicts of an answer, each sentence's first; one that is missing or malformed is
    left out (its sentence stays unchecked)."""
    try:
        answer = json.loads(content)
    except json.JSONDecodeError:
        return ()
    found: dict[int, SentenceVerdict] = {}
    items = answer.get("verdicts") if isinstance(answer, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        index, verdict = item.get("sentence"), item.get("verdict")
        if not isinstance(index, int) or not 1 <= index <= count or verdict not in VERDICTS:
            continue
        lines = item.get("lines")
        numbers = tuple(n for n in lines if isinstance(n, int)) if isinstance(lines, list) else ()
        says = item.get("document_says")
        found.setdefault(
            index, SentenceVerdict(index, verdict, numbers, says if isinstance(says, str) else "")
        )
    return tuple(found[index] for index in sorted(found))
