"""What a judge is asked about a page: the sentences the rules left unchecked
(:mod:`wiki_assets.engine.quality.claims`), in one request per page, to a model other than the
page's writer.

Mixed in among them are up to two *controls* whose answer is known: a sentence of the document
copied (the document says it) and, where the document states a number, the same sentence with
that number changed (the document says otherwise). How often a judge gets the controls right is
how far its other verdicts hold (:mod:`.standing`).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from wiki_assets.engine.documents.lines import document_lines
from wiki_assets.engine.quality.sentences import ProseCheck
from wiki_assets.engine.state.journal import Entry

__all__ = ["JudgeRequest", "control_request", "judge_request", "page_request"]

_CONTROL_WORDS = 6  # a control sentence has at least this many words: it says something
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """The sentences a judge is asked about, in order: each is one of the page's (its index in
    the page's :class:`~wiki_assets.engine.quality.sentences.ProseCheck`) or a control (its
    known verdict)."""

    sentences: tuple[str, ...]
    targets: tuple[int | None, ...]  # the page's sentence; None for a control
    truths: tuple[str | None, ...]  # a control's verdict; None for the page's sentences


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


def page_request(entry: Entry, document: str) -> JudgeRequest | None:
    """The request for the sentences of ``entry``'s page (as journaled) that the rules left
    unchecked, against its ``document`` (None: none is)."""
    prose = ProseCheck.from_json((entry.result or {}).get("prose"))
    return judge_request(prose, document, entry.path)


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
