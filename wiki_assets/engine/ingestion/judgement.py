"""A judge's answer on a page, as the run applies it: the sentences' statuses, the page's flags
and its model's figures (:mod:`wiki_assets.engine.quality.judging` says what a judge is asked,
:mod:`wiki_assets.engine.dispatch.judges` when).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from wiki_assets.engine.dispatch.judges import Judging
from wiki_assets.engine.dispatch.queue import Job
from wiki_assets.engine.documents.lines import document_lines
from wiki_assets.engine.ingestion.page_entry import Rank
from wiki_assets.engine.prompting.results import Judgement
from wiki_assets.engine.quality import Reason
from wiki_assets.engine.quality.judging import JudgeRequest, apply_verdicts, judge_request
from wiki_assets.engine.quality.sentences import ProseCheck, Support
from wiki_assets.engine.quality.verdict import Verdict
from wiki_assets.engine.state.journal import Entry

_PROSE_REASONS = {Support.CONTRADICTED: Reason.CONTRADICTED_PROSE,
                  Support.UNSUPPORTED: Reason.UNSUPPORTED_PROSE}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ToJudge:
    """What the run keeps to apply a judge's answer: the request, and the entry it is about (a
    second opinion recorded since makes it stale)."""

    request: JudgeRequest
    entry: Entry
    writer: int
    job: Job  # the document's
    serial: int  # the run's count of pages offered when this one was: a later offer supersedes


def offer(entry: Entry, text: str, writer: int, job: Job, serial: int) -> Judging | None:
    """The judging of ``entry``'s page (its document's ``text``), when the rules left any of its
    sentences unchecked."""
    result = entry.result or {}
    request = judge_request(ProseCheck.from_json(result.get("prose")), text, entry.path)
    if request is None:
        return None
    kept = ToJudge(request, entry, writer, job, serial)
    return Judging(entry.path, text, request.sentences, writer, job, kept)


@dataclass(frozen=True, slots=True)
class Judged:
    """A page's entry with a judge's verdicts, and its prose and flags before and after."""

    entry: Entry
    before: ProseCheck
    after: ProseCheck
    flags_before: tuple[str, ...]
    flags_after: tuple[str, ...]

    @property
    def rank(self) -> Rank:
        """How the judged answer ranks against a second opinion (:func:`.page_entry.rank`)."""
        points = (self.entry.result or {}).get("key_points") or []
        verified = sum(1 for p in points if isinstance(p, dict) and p.get("status") == "verified")
        return not self.flags_after, verified, -len(self.flags_after)


def judged_entry(
    judging: Judging, judge: str, judgement: Judgement, holds: Callable[[int, int], bool]
) -> Judged | None:
    """The page's entry with the judge's verdicts applied, and its prose before and after; None
    when the judge's verdicts do not hold (its controls say so) or change nothing."""
    kept: ToJudge = judging.payload
    return apply_judgement(kept.entry, kept.request, judging.text, judge, judgement, holds)


def apply_judgement(
    entry: Entry,
    request: JudgeRequest,
    text: str,
    judge: str,
    judgement: Judgement,
    holds: Callable[[int, int], bool],
) -> Judged | None:
    """``entry`` (a page's, whose document is ``text``) with the verdicts of ``judge``'s answer
    to ``request`` applied where ``holds`` (told how many controls it answered and got right)
    says they hold: its prose, and its flags (a contradicted or unsupported sentence flags the
    page). None when they do not hold, or change nothing. The run's judges and the verification
    pass both apply an answer so."""
    result = entry.result or {}
    before = ProseCheck.from_json(result.get("prose"))
    verdicts = {v.index: (v.verdict, v.lines, v.document_says) for v in judgement.verdicts}
    lines = len(document_lines(text))
    scored = apply_verdicts(before, request, verdicts, judge, lines, trust=False)
    if not holds(scored.controls_answered, scored.controls_right):
        return None
    after = apply_verdicts(before, request, verdicts, judge, lines, trust=True).prose
    if after == before:
        return None
    flags_before = tuple(result.get("flags", []))
    flags = [flag for flag in flags_before if flag not in _PROSE_REASONS.values()]
    flags += [reason for status, reason in _PROSE_REASONS.items() if after.count(status)]
    flags_after = Verdict.of(flags).reasons
    fields = {**result, "prose": after.to_json(), "flags": list(flags_after)}
    return Judged(replace(entry, result=fields), before, after, flags_before, flags_after)
