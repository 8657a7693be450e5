"""What a simulated judge answers: a verdict per sentence against the request's document.

A ``right`` judge reads the document as a careful checker would on the simulator's pages: a
sentence found in a line (case, spacing and punctuation aside) is supported by that line; one
that differs from a line only in a few words (a number, a name, a "not") is contradicted, and
the line is what the document says; anything else is not stated. A ``coin`` judge gives that
verdict half the time and another the other half (drawn from the sentence: deterministic).
"""

from __future__ import annotations

import json
import re
import zlib
from typing import Any

from wiki_assets.engine.verification.prompt import VERDICTS

__all__ = ["JUDGES", "judge_answer"]

JUDGES = ("right", "coin")
_BLOCK = re.compile(r"<document>\n(.*)\n</document>", re.DOTALL)
_NUMBERED = re.compile(r"^(\d+)\| ?(.*)$")
_LISTED = re.compile(r"^(\d+)\. (.*)$")
_WORD = re.compile(r"\w+")
_CLOSE = 3  # words in which a contradicting sentence may differ from its line


def judge_answer(judge: str, message: str, schema: dict[str, Any] | None) -> str | None:
    """The JSON answer of a judge request (``None``: ``message`` is not one)."""
    if not schema or "verdicts" not in (schema.get("properties") or {}):
        return None
    found = _BLOCK.search(message)
    if found is None:
        return None
    lines = [(int(m.group(1)), m.group(2)) for m in map(_NUMBERED.match, found.group(1).split("\n"))
             if m is not None]  # fmt: skip
    tail = message[found.end() :]
    sentences = [(int(m.group(1)), m.group(2)) for m in map(_LISTED.match, tail.split("\n")) if m]
    verdicts = []
    for index, sentence in sentences:
        verdict, number, says = _verdict(sentence, lines)
        if judge == "coin" and zlib.crc32(sentence.encode("utf-8")) % 2:
            verdict = VERDICTS[(VERDICTS.index(verdict) + 1) % len(VERDICTS)]
        verdicts.append({"sentence": index, "verdict": verdict,
                         "lines": [number] if number else [], "document_says": says})  # fmt: skip
    return json.dumps({"verdicts": verdicts}, ensure_ascii=False)


def _verdict(sentence: str, lines: list[tuple[int, str]]) -> tuple[str, int | None, str]:
    words = _WORD.findall(sentence.lower())
    best: tuple[int, int, str] | None = None
    for number, line in lines:
        theirs = _WORD.findall(line.lower())
        if " ".join(words) in " ".join(theirs):
            return "supported", number, ""
        for start in range(max(1, len(theirs) - len(words) + 1)):
            window = theirs[start : start + len(words)]
            if len(window) != len(words):
                continue
            differ = sum(a != b for a, b in zip(words, window, strict=True))
            if best is None or differ < best[0]:
                best = (differ, number, line)
    if best is not None and best[0] <= _CLOSE and len(words) > 2 * best[0]:
        return "contradicted", best[1], best[2]
    return "not_stated", None, ""
