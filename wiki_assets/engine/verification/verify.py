"""The verification pass: the sentences of the pages' prose that the rules left unchecked, put to
judges from the fleet after the pages are written, so it never delays a first answer.

* **Who judges**: a model of the fleet other than the page's writer (a model does not vouch for
  its own words), or only the one the ``judge`` setting names. A fleet of one model has no judge
  for its own pages: the pass says so and settles nothing.
* **One request per page** holding its unchecked sentences and up to two *controls* whose answer
  is known (:func:`~.request.judge_request`), as the run's judges ask.
* **Controls decide**: per judge, Laplace's estimate of getting a control right, over all the
  controls it answered in the pass (:class:`~.standing.Standing`). Its verdicts apply, once
  every answer is in, only where it is :meth:`~.standing.Standing.proven`; a judge found
  :meth:`~.standing.Standing.useless` is asked no more. A judge that fails its controls settles
  nothing, however lucky its first pages.
* **A budget**: at most ``budget`` pages are sent, the pages with the most unchecked sentences
  first; each judge has as many requests in flight as its ``workers`` (else 4).
* **The model client** is the caller's (``connect``: an endpoint's client, asking for at most so
  many tokens; :class:`~wiki_assets.engine.llm.client.ModelClient`): the judge's room lies below
  the client's, which imports the judge's prompt from it (:mod:`.prompt`).

A settled sentence shows its judge on the page (``checked by …``); a page with a sentence a judge
found unsupported or contradicted is flagged. The journal is updated in one transaction and the
pages, ``index.md`` and ``catalog.jsonl`` are rebuilt from it (:func:`~..wiki.index.index_wiki`).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.documents.corpus import DEFAULT_MAX_BYTES
from wiki_assets.engine.documents.encodings import decode
from wiki_assets.engine.documents.texts import TEXTS_DIR, TextStore
from wiki_assets.engine.errors import ModelError, WikiAssetsError
from wiki_assets.engine.quality.sentences import ProseCheck
from wiki_assets.engine.state.entries import WRITTEN
from wiki_assets.engine.state.journal import Entry, Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.engine.verification.report import JudgeFigures, VerificationReport
from wiki_assets.engine.verification.request import JudgeRequest, control_request, judge_request
from wiki_assets.engine.verification.standing import EVIDENCE, NOT_HOLDING, Standing
from wiki_assets.engine.verification.verdicts import JudgedPage, apply_judgement, score_controls
from wiki_assets.engine.wiki.files import Wiki
from wiki_assets.engine.wiki.index import index_wiki

__all__ = ["NO_JUDGE", "OVER_BUDGET", "JudgeClient", "verify"]

NO_JUDGE = "no_judge"  # no model of the fleet may judge it (the writer is the only one)
OVER_BUDGET = "budget"
NO_TEXT = "no_text"  # its document's text is no longer there to judge against
FAILED = "failed"  # the judge's request failed
_MAX_TOKENS = 600  # a verdict per sentence, with lines and what the document says
_WORKERS = 4  # requests in flight per judge whose endpoint does not say
_CALIBRATIONS = 4  # requests of controls alone a judge may get, where its pages held too few


class JudgeClient(Protocol):
    """A judge's model client (:class:`~wiki_assets.engine.llm.client.ModelClient`)."""

    async def judge(self, text: str, sentences: Sequence[str]) -> Judgement: ...

    async def close(self) -> None: ...


@dataclass(eq=False, slots=True)
class _Page:
    entry: Entry
    text: str
    request: JudgeRequest
    unchecked: int


@dataclass(eq=False)
class _Judge:
    endpoint: Endpoint
    client: JudgeClient
    figures: JudgeFigures
    standing: Standing
    answers: list[tuple[_Page, Judgement]] = field(default_factory=list)

    def may_judge(self, page: _Page) -> bool:
        return self.endpoint.model != page.entry.model and not self.standing.useless()

    def count(self, answered: int, right: int) -> None:
        """Count an answer's controls; its verdicts wait for the judge's standing at the end."""
        self.standing.count(answered, right)
        self.figures.controls += answered
        self.figures.controls_right += right


def verify(
    *,
    wiki_root: Path,
    synced_root: Path,
    collections: Sequence[str],
    endpoints: Sequence[Endpoint],
    connect: Callable[[Endpoint, int], JudgeClient],
    budget: int,
    judge: str = "",
    store: StateStore | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> VerificationReport:
    """Settle the unchecked sentences of the pages of ``collections`` with judges among
    ``endpoints`` (only the one named ``judge``, by its name or model id, when given), through
    the clients ``connect`` makes, at most ``budget`` pages; see the module docstring. The pages
    and the index are rebuilt where a verdict changed something."""
    started = time.perf_counter()
    wiki = Wiki(wiki_root)
    store = store or StateStore(wiki.state_dir)
    judges = [e for e in endpoints if not judge or judge in (e.name, e.model)]
    if judge and not judges:
        raise WikiAssetsError(f"judge {judge!r} is no model of the fleet")
    report = VerificationReport(
        tuple(collections), budget, judges=[JudgeFigures(e.name) for e in judges]
    )
    with Journal(store) as journal:
        texts = TextStore(wiki.state_dir / TEXTS_DIR)
        pages = _waiting(journal, set(collections), synced_root, texts, report)
        judged = asyncio.run(_judge_all(pages, judges, connect, report, log)) if pages else []
        if judged:
            entries = [found.entry for found in judged]
            journaled = journal.record_summaries(entries)
            journal.mark_written(
                [e.path for e in entries],
                results={e.path: e.result for e in entries},
                journaled={e.path: text for e, text in zip(entries, journaled, strict=True)},
            )
        _count_statuses(journal, set(collections), report)
    if judged:
        index_wiki(wiki_root, store)
    report.seconds = time.perf_counter() - started
    log(report.line())
    return report


def _waiting(
    journal: Journal, collections: set[str], synced_root: Path, texts: TextStore,
    report: VerificationReport,
) -> list[_Page]:  # fmt: skip
    """The written pages of ``collections`` with unchecked sentences, most unchecked first."""
    found: list[_Page] = []
    for entry in journal.pages():
        result = entry.result or {}
        if entry.collection not in collections or entry.status != WRITTEN:
            continue
        prose = ProseCheck.from_json(result.get("prose"))
        if not prose.sentences:
            continue
        report.pages += 1
        if not prose.unchecked():
            continue
        report.waiting += 1
        text = _text(entry, synced_root, texts)
        request = judge_request(prose, text, entry.path) if text else None
        if request is None:
            report.skipped[NO_TEXT] += 1
            continue
        found.append(_Page(entry, text, request, len(prose.unchecked())))
    found.sort(key=lambda page: (-page.unchecked, page.entry.path))
    if len(found) > report.budget:
        report.skipped[OVER_BUDGET] += len(found) - report.budget
    return found[: report.budget]


def _text(entry: Entry, synced_root: Path, texts: TextStore) -> str:
    """The text the page's model read: the kept extraction of a converted format, else the file
    as it is now (a changed file's page is redone by the next run anyway)."""
    extractor = (entry.result or {}).get("extractor")
    if isinstance(extractor, str):
        kept = texts.get(entry.content_hash, extractor)
        return kept.extracted.text if kept is not None and kept.extracted is not None else ""
    try:
        data = (synced_root / entry.path).read_bytes()[:DEFAULT_MAX_BYTES]
        return decode(data)
    except (OSError, WikiAssetsError):
        return ""


async def _judge_all(
    pages: list[_Page], endpoints: Sequence[Endpoint],
    connect: Callable[[Endpoint, int], JudgeClient], report: VerificationReport,
    log: Callable[[str], None],
) -> list[JudgedPage]:  # fmt: skip
    judges = [
        _Judge(e, connect(e, _MAX_TOKENS), figures, Standing())
        for e, figures in zip(endpoints, report.judges, strict=True)
    ]
    queue = deque(pages)
    try:
        workers = [
            _work(j, queue, report, log)
            for j in judges
            for _ in range(j.endpoint.workers if isinstance(j.endpoint.workers, int) else _WORKERS)
        ]
        await asyncio.gather(*workers)
        await asyncio.gather(*(_calibrate(j, pages, report, log) for j in judges if j.answers))
    finally:
        for j in judges:
            await j.client.close()
    for page in queue:  # left: no judge could take them
        able = [j for j in judges if j.endpoint.model != page.entry.model]
        report.skipped[NOT_HOLDING if able else NO_JUDGE] += 1
    judged: list[JudgedPage] = []
    for j in judges:
        j.figures.holding = j.standing.proven()
        if not j.figures.holding:
            report.skipped[NOT_HOLDING] += len(j.answers)
            continue
        for page, answer in j.answers:
            applied = apply_judgement(page, j.endpoint.name, answer, lambda *_: True)
            if applied is None:
                continue
            j.figures.settled += applied.settled
            report.settled += applied.settled
            report.judged += 1
            report.flagged += bool(applied.flags_after) and not applied.flags_before
            judged.append(applied)
    return judged


async def _work(
    judge: _Judge, queue: deque[_Page], report: VerificationReport,
    log: Callable[[str], None],
) -> None:  # fmt: skip
    while not judge.standing.useless():
        page = next((p for p in queue if judge.may_judge(p)), None)
        if page is None:
            return
        queue.remove(page)
        judge.figures.requests += 1
        try:
            answer = await judge.client.judge(page.text, page.request.sentences)
        except ModelError as error:
            judge.figures.errors += 1
            report.skipped[FAILED] += 1
            log(f"verification: {judge.endpoint.name} on {page.entry.path}: {error}")
            continue
        judge.figures.answered += 1
        judge.count(*score_controls(page.request, answer))
        judge.answers.append((page, answer))


async def _calibrate(
    judge: _Judge, pages: Sequence[_Page], report: VerificationReport, log: Callable[[str], None]
) -> None:
    """Requests of controls alone, until the judge has answered :data:`EVIDENCE` controls (its
    pages held too few to tell whether it holds), at most :data:`_CALIBRATIONS`."""
    for round_ in range(_CALIBRATIONS):
        if judge.standing.answered >= EVIDENCE:
            return
        page = pages[round_ % len(pages)]
        request = control_request(page.text, f"{page.entry.path}#{round_}")
        if request is None:
            continue
        judge.figures.requests += 1
        try:
            answer = await judge.client.judge(page.text, request.sentences)
        except ModelError as error:
            judge.figures.errors += 1
            log(f"verification: {judge.endpoint.name}, controls: {error}")
            continue
        judge.figures.answered += 1
        judge.count(*score_controls(request, answer))


def _count_statuses(journal: Journal, collections: set[str], report: VerificationReport) -> None:
    for entry in journal.pages():
        if entry.collection in collections and entry.status == WRITTEN:
            for sentence in ProseCheck.from_json((entry.result or {}).get("prose")).sentences:
                report.statuses[sentence.status.value] += 1
