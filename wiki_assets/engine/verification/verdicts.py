"""A judge's verdicts applied: to a page's sentences (their statuses, the lines they cite, what
the document says instead), and to its journal entry (its prose and its flags: a contradicted or
unsupported sentence flags the page). The run's judges and the verification pass both apply an
answer so; the controls it answered tell whether it holds (:mod:`.standing`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from wiki_assets.engine.documents.lines import document_lines
from wiki_assets.engine.quality import Reason
from wiki_assets.engine.quality.evidence import MAX_CITED_LINES
from wiki_assets.engine.quality.sentences import ProseCheck, Support
from wiki_assets.engine.quality.verdict import Verdict
from wiki_assets.engine.state.journal import Entry
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.engine.verification.request import JudgeRequest
from wiki_assets.engine.verification.standing import Holds

__all__ = ["AskedPage", "JudgedPage", "apply_judgement", "apply_verdicts", "score_controls"]

_STATUS = {
    "supported": Support.SUPPORTED,
    "not_stated": Support.UNSUPPORTED,
    "contradicted": Support.CONTRADICTED,
}
_PROSE_REASONS = {Support.CONTRADICTED: Reason.CONTRADICTED_PROSE,
                  Support.UNSUPPORTED: Reason.UNSUPPORTED_PROSE}  # fmt: skip


def score_controls(request: JudgeRequest, judgement: Judgement) -> tuple[int, int]:
    """The controls of ``request`` that ``judgement`` answered, and of those the ones it got
    right."""
    verdicts = {v.index: v.verdict for v in judgement.verdicts}
    answered = right = 0
    for number, truth in enumerate(request.truths, 1):
        if truth is not None and number in verdicts:
            answered += 1
            right += verdicts[number] == truth
    return answered, right


def apply_verdicts(
    prose: ProseCheck, request: JudgeRequest, judgement: Judgement, judge: str, line_count: int
) -> ProseCheck:
    """``prose`` with the verdicts of ``judge``'s answer on its sentences. A verdict citing lines
    the document (of ``line_count`` lines) does not have keeps its status but cites none."""
    verdicts = {v.index: v for v in judgement.verdicts}
    sentences = list(prose.sentences)
    for number, target in enumerate(request.targets, 1):
        found = verdicts.get(number)
        if found is None or target is None or found.verdict not in _STATUS:
            continue
        cited = [n for n in found.lines if 1 <= n <= line_count]
        span = (min(cited), max(cited)) if cited else None
        if span is not None and span[1] - span[0] >= MAX_CITED_LINES:
            span = None
        status = _STATUS[found.verdict]
        sentences[target] = replace(
            sentences[target],
            status=status,
            lines=span,
            document_says=found.document_says if status is Support.CONTRADICTED else "",
            checked_by=judge,
        )
    return ProseCheck(tuple(sentences))


@dataclass(frozen=True, slots=True)
class JudgedPage:
    """A page's entry with a judge's verdicts, and its prose and flags before and after."""

    entry: Entry
    before: ProseCheck
    after: ProseCheck
    flags_before: tuple[str, ...]
    flags_after: tuple[str, ...]

    @property
    def settled(self) -> int:
        """The sentences the verdicts settled: unchecked before, checked after."""
        return sum(
            1 for a, b in zip(self.before.sentences, self.after.sentences, strict=True)
            if a.status is Support.UNCHECKED and b.status is not Support.UNCHECKED
        )  # fmt: skip


class AskedPage(Protocol):
    """A page a judge was asked about: its entry as journaled (None: the simulation's, which
    takes no verdict), the judge's request, and its document's text."""

    @property
    def entry(self) -> Entry | None: ...

    @property
    def request(self) -> JudgeRequest: ...

    @property
    def text(self) -> str: ...


def apply_judgement(
    page: AskedPage, judge: str, judgement: Judgement, holds: Holds
) -> JudgedPage | None:
    """``page``'s entry with the verdicts of ``judge``'s answer applied where ``holds`` (told
    how many controls it answered and got right) says they hold: its prose, and its flags. None
    when they do not hold, or change nothing."""
    entry = page.entry
    if entry is None or not holds(*score_controls(page.request, judgement)):
        return None
    result = entry.result or {}
    before = ProseCheck.from_json(result.get("prose"))
    after = apply_verdicts(before, page.request, judgement, judge, len(document_lines(page.text)))
    if after == before:
        return None
    flags_before = tuple(result.get("flags", []))
    flags = [flag for flag in flags_before if flag not in _PROSE_REASONS.values()]
    flags += [reason for status, reason in _PROSE_REASONS.items() if after.count(status)]
    flags_after = Verdict.of(flags).reasons
    fields = {**result, "prose": after.to_json(), "flags": list(flags_after)}
    return JudgedPage(replace(entry, result=fields), before, after, flags_before, flags_after)
