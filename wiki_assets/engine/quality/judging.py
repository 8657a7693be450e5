"""A judge from the fleet for the sentences the rules leave unchecked (:mod:`.claims`).

Another model than the page's writer gets one request per page, holding the page's unchecked
sentences. Mixed in among them are up to two *controls* whose answer is known: a sentence of the
document copied (the document says it) and, where the document states a number, the same
sentence with that number changed (the document says otherwise). How often a judge gets the
controls right is how far its other verdicts hold: the run learns it per judge and applies the
verdicts of a judge only while they hold (:mod:`wiki_assets.engine.dispatch.judges`).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, replace

from wiki_assets.engine.documents.lines import document_lines
from wiki_assets.engine.quality.evidence import MAX_CITED_LINES
from wiki_assets.engine.quality.sentences import ProseCheck, Support

__all__ = ["JudgeRequest", "JudgedProse", "apply_verdicts", "control_request", "judge_request"]

_CONTROL_WORDS = 6  # a control sentence has at least this many words: it says something
_NUMBER = re.compile(r"\d+")
_STATUS = {
    "supported": Support.SUPPORTED,
    "not_stated": Support.UNSUPPORTED,
    "contradicted": Support.CONTRADICTED,
}


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """The sentences a judge is asked about, in order: each is one of the page's (its index in
    the page's :class:`~.claims.ProseCheck`) or a control (its known verdict)."""

    sentences: tuple[str, ...]
    targets: tuple[int | None, ...]  # the page's sentence; None for a control
    truths: tuple[str | None, ...]  # a control's verdict; None for the page's sentences


@dataclass(frozen=True, slots=True)
class JudgedProse:
    """What a judge's answer made of a page's prose: the sentences with their new statuses, and
    how many controls it answered and got right."""

    prose: ProseCheck
    controls_answered: int
    controls_right: int


def judge_request(prose: ProseCheck, document: str, key: str) -> JudgeRequest | None:
    """The request for ``prose``'s unchecked sentences (None: none is), with the controls that
    ``document`` gives, placed by ``key`` (the document's path: the same page, the same
    request)."""
    unchecked = prose.unchecked()
    if not unchecked:
        return None
    seed = zlib.crc32(key.encode("utf-8"))
    items: list[tuple[str, int | None, str | None]] = [
        (prose.sentences[i].text, i, None) for i in unchecked
    ]
    for offset, (sentence, truth) in enumerate(_controls(document, seed)):
        items.insert((seed + offset * 7) % (len(items) + 1), (sentence, None, truth))
    return JudgeRequest(
        tuple(text for text, _, _ in items),
        tuple(target for _, target, _ in items),
        tuple(truth for _, _, truth in items),
    )


def control_request(document: str, key: str) -> JudgeRequest | None:
    """A request of controls alone, from ``document`` (placed by ``key``): what tells how far a
    judge holds where its pages held too few controls to tell (None: the document gives none)."""
    controls = _controls(document, zlib.crc32(key.encode("utf-8")))
    if not controls:
        return None
    return JudgeRequest(
        tuple(text for text, _ in controls), (None,) * len(controls),
        tuple(truth for _, truth in controls),
    )  # fmt: skip


def _controls(document: str, seed: int) -> list[tuple[str, str]]:
    """A sentence of the document as it stands (supported) and one with its first number
    changed (contradicted), each from a line that says something, chosen by ``seed``."""
    lines = [line.strip(" #-*>\t") for line in document_lines(document)]
    said = [line for line in lines if len(line.split()) >= _CONTROL_WORDS]
    if not said:
        return []
    controls = [(said[seed % len(said)], "supported")]
    with_number = [line for line in said if _NUMBER.search(line)]
    if with_number:
        line = with_number[(seed // 7) % len(with_number)]
        changed = _NUMBER.sub(lambda found: str(int(found.group(0)) + 7), line, count=1)
        controls.append((changed, "contradicted"))
    return controls


def apply_verdicts(
    prose: ProseCheck,
    request: JudgeRequest,
    verdicts: dict[int, tuple[str, tuple[int, ...], str]],
    judge: str,
    line_count: int,
    *,
    trust: bool,
) -> JudgedProse:
    """``prose`` with the judge's verdicts on its sentences (``verdicts``: by the request's
    sentence number from 1, the verdict, its lines, what the document says), where ``trust``;
    and the judge's score on the controls either way. A verdict citing lines the document does
    not have keeps its status but cites none."""
    sentences = list(prose.sentences)
    answered = right = 0
    for number, (target, truth) in enumerate(zip(request.targets, request.truths, strict=True), 1):
        found = verdicts.get(number)
        if found is None:
            continue
        verdict, lines, says = found
        if truth is not None:
            answered += 1
            right += verdict == truth
            continue
        if not trust or target is None or verdict not in _STATUS:
            continue
        cited = [n for n in lines if 1 <= n <= line_count]
        span = (min(cited), max(cited)) if cited else None
        if span is not None and span[1] - span[0] >= MAX_CITED_LINES:
            span = None
        status = _STATUS[verdict]
        sentences[target] = replace(
            sentences[target],
            status=status,
            lines=span,
            document_says=says if status is Support.CONTRADICTED else "",
            checked_by=judge,
        )
    return JudgedProse(ProseCheck(tuple(sentences)), answered, right)
