"""What a run did and how fast: the figures the log lines, the CLI's JSON and the metadata use.

The dispatcher counts its own figures (:mod:`~wiki_assets.engine.dispatch.tally`); the report
takes them when it is done (:meth:`IngestReport.tallied`). The rest the run counts here itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch.tally import DispatchTally, LaneTally
from wiki_assets.engine.quality.sentences import ProseCheck, Support

if TYPE_CHECKING:
    from wiki_assets.engine.ingestion.judgement import Judged

# ModelStats' figures that are its model's LaneTally's, taken when the dispatcher is done.
_TALLIED = tuple(f.name for f in fields(LaneTally))


@dataclass
class ModelStats:
    """One model's figures in the report. Those of :class:`LaneTally` (documents, requests,
    tokens, errors, hedges, second opinions: see there) are its tally's, taken by
    :meth:`tallied`; the run counts the quality figures itself (:meth:`judged`)."""

    name: str
    model: str
    workers: int  # requests in flight: the fixed number, or where automatic concurrency settled
    auto: bool = False
    peak_workers: int = 0
    failed: int = 0
    errors: int = 0
    timeouts: int = 0
    garbage: int = 0
    breaker_trips: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    hit_max_tokens: int = 0
    docs: int = 0
    requests: int = 0
    answered: int = 0
    parts: int = 0
    busy_s: float = 0.0
    hedges: int = 0
    hedges_won: int = 0
    # The quality of this model's pages (wiki_assets.engine.quality): key points given and
    # verified against their documents, pages flagged, and how often each reason flagged one.
    checked: int = 0  # its answers checked (its pages, and those it gave second opinions on)
    points: int = 0
    points_verified: int = 0
    flagged: int = 0
    flags: dict[str, int] = field(default_factory=dict)
    second_opinions: int = 0
    second_opinions_kept: int = 0
    judgements: int = 0
    controls: int = 0
    controls_right: int = 0
    # Sentences of its pages' descriptions and summaries: checked (by rule or by a judge) and,
    # of those, supported by their documents (quality/claims.py).
    sentences_checked: int = 0
    sentences_supported: int = 0
    superseded: bool = False
    gone: str | None = None
    last_error: str | None = None

    @property
    def service(self) -> str:
        """Whether it served the whole run: ``ok``, ``server died``, ``taken out`` (by its
        breaker, after failures in a row) or ``no answer`` (it was sent requests and answered
        none: they failed, or other models' answers came first)."""
        if self.gone is not None:
            return "server died"
        if self.breaker_trips:
            return "taken out"
        if self.requests and not self.answered:
            return "no answer"
        return "ok"

    def out(self) -> str | None:
        """Why it did not serve the whole run, in one line; None when it did."""
        service = self.service
        if service == "ok":
            return None
        if self.gone is not None:
            return f"{self.name}: {self.gone.splitlines()[0]}"
        times = f" {self.breaker_trips}×" if self.breaker_trips else ""
        why = f"{self.requests} requests, {self.answered} answered"
        if self.last_error:
            why += f"; the last error: {self.last_error}"
        return f"{self.name}: {service}{times} ({why})"

    @property
    def verified_share(self) -> float | None:
        """The share of this model's key points verified in their documents (None: no point)."""
        return self.points_verified / self.points if self.points else None

    @property
    def flagged_share(self) -> float | None:
        """The share of its answers the checks flagged."""
        return self.flagged / self.checked if self.checked else None

    @property
    def supported_share(self) -> float | None:
        """The share of its checked sentences that their documents support (None: none)."""
        return self.sentences_supported / self.sentences_checked if self.sentences_checked else None

    def sentences(self, prose: ProseCheck, sign: int = 1) -> None:
        """Count (``sign`` 1) or take back (-1) a page's sentences checked and supported."""
        self.sentences_checked += sign * prose.checked
        self.sentences_supported += sign * prose.count(Support.SUPPORTED)

    def rejudged(self, judged: Judged) -> None:
        """A judge's verdicts on one of its pages: its sentences count as they are now, and the
        reasons that flag the page anew."""
        self.sentences(judged.before, -1)
        self.sentences(judged.after)
        new = [reason for reason in judged.flags_after if reason not in judged.flags_before]
        self.flagged += bool(new) and not judged.flags_before
        for reason in new:
            self.flags[reason] = self.flags.get(reason, 0) + 1

    def judged(self, points: int, verified: int, reasons: Iterable[str]) -> None:
        """Count one answer's assessment."""
        self.checked += 1
        self.points += points
        self.points_verified += verified
        reasons = list(reasons)
        self.flagged += bool(reasons)
        for reason in reasons:
            self.flags[reason] = self.flags.get(reason, 0) + 1

    def tallied(self, tally: LaneTally) -> None:
        """Take its model's figures from the dispatcher's tally."""
        for name in _TALLIED:
            setattr(self, name, getattr(tally, name))


@dataclass
class IngestReport:
    collections: list[str]
    dials: Dials
    models: list[ModelStats]
    count: int = 0  # summarized by a model in this run
    skipped: int = 0  # unchanged since their page was written
    recovered: int = 0  # summarized by an earlier run that died before writing the page
    removed: int = 0  # pages whose document no longer exists
    relinked: int = 0  # pages rewritten without their links to removed pages
    failed: list[dict[str, str]] = field(default_factory=list)
    # Files of the run's collections that hold no text (path and why): not failures.
    no_text: list[dict[str, str]] = field(default_factory=list)
    # requeued, hedged, second_opinions, second_opinions_skipped and stopped: the dispatcher's
    # (DispatchTally, see there), taken by tallied().
    requeued: int = 0
    unfinished: int = 0  # left for the next run: every model was down, or the run was stopped
    hedged: int = 0
    second_opinions: int = 0
    second_opinions_skipped: dict[str, int] = field(default_factory=dict)
    judgements_skipped: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None
    embedded: int = 0  # documents embedded for link candidates by meaning
    embedding_s: float = 0.0  # the seconds that took, before the first request
    stopped_by: str | None = None  # the signal that stopped it (SIGTERM, SIGINT), if one did
    duration_s: float = 0.0

    def tallied(self, tally: DispatchTally, lanes: Sequence[LaneTally]) -> None:
        """Take the dispatcher's figures once it is done: the run's, and each model's (``lanes``
        in the fleet's order, that of :attr:`models`)."""
        self.requeued = tally.requeued
        self.hedged = tally.hedged
        self.second_opinions = tally.second_opinions
        self.second_opinions_skipped = dict(tally.second_opinions_skipped)
        self.judgements_skipped = dict(tally.judgements_skipped)
        self.stopped = tally.stopped
        for stats, lane in zip(self.models, lanes, strict=True):
            stats.tallied(lane)

    @property
    def docs_per_sec(self) -> float:
        return self.count / self.duration_s if self.duration_s > 0 else 0.0

    def models_out(self) -> list[str]:
        """A line per model that did not serve the whole run, and why."""
        return [line for m in self.models if (line := m.out()) is not None]

    @property
    def prompt_tokens(self) -> int:
        return sum(m.prompt_tokens for m in self.models)

    @property
    def completion_tokens(self) -> int:
        return sum(m.completion_tokens for m in self.models)

    @property
    def hit_max_tokens(self) -> int:
        return sum(m.hit_max_tokens for m in self.models)

    @property
    def flagged(self) -> int:
        """Pages flagged: every flagged answer, less one per second opinion answered (of the two
        answers for its document one page remains, flagged only when both were)."""
        return sum(m.flagged for m in self.models) - self.second_opinions_answered

    @property
    def second_opinions_answered(self) -> int:
        return sum(m.second_opinions for m in self.models)

    @property
    def second_opinions_kept(self) -> int:
        return sum(m.second_opinions_kept for m in self.models)

    @property
    def verified_share(self) -> float | None:
        points = sum(m.points for m in self.models)
        return sum(m.points_verified for m in self.models) / points if points else None

    @property
    def supported_share(self) -> float | None:
        """Of the sentences of this run's descriptions and summaries that were checked, the
        share their documents support."""
        checked = sum(m.sentences_checked for m in self.models)
        return sum(m.sentences_supported for m in self.models) / checked if checked else None

    @property
    def judgements(self) -> int:
        return sum(m.judgements for m in self.models)

    @property
    def requests(self) -> int:
        return sum(m.requests for m in self.models)

    @property
    def requests_per_doc(self) -> float | None:
        """Requests the fleet sent per document summarized: 1 when every document took one
        request; more for long documents' parts, second opinions, hedges and retries."""
        return self.requests / self.count if self.count else None

    def model_docs_per_sec(self, stats: ModelStats) -> float:
        return stats.docs / self.duration_s if self.duration_s > 0 else 0.0

    def busy_share(self, stats: ModelStats) -> float | None:
        """The model's share of the fleet's busy time (its requests' seconds in flight)."""
        busy = sum(m.busy_s for m in self.models)
        return stats.busy_s / busy if busy > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "collections": self.collections,
            "count": self.count,
            "skipped": self.skipped,
            "recovered": self.recovered,
            "removed": self.removed,
            "relinked": self.relinked,
            "failed": self.failed,
            "no_text": self.no_text,
            "requeued": self.requeued,
            "unfinished": self.unfinished,
            "hedged": self.hedged,
            "second_opinions": self.second_opinions,
            "second_opinions_kept": self.second_opinions_kept,
            "second_opinions_skipped": dict(self.second_opinions_skipped),
            "judgements_skipped": dict(self.judgements_skipped),
            "requests": self.requests,
            "requests_per_doc": _rounded(self.requests_per_doc),
            "embedded": self.embedded,
            "embedding_s": round(self.embedding_s, 3),
            "stopped": self.stopped,
            "stopped_by": self.stopped_by,
            "duration_s": round(self.duration_s, 3),
            "docs_per_sec": round(self.docs_per_sec, 3),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "hit_max_tokens": self.hit_max_tokens,
            "flagged": self.flagged,
            "verified_share": _rounded(self.verified_share),
            "supported_share": _rounded(self.supported_share),
            "judgements": self.judgements,
            "dials": asdict(self.dials),
            "models": {
                m.name: {
                    **asdict(m),
                    "busy_s": round(m.busy_s, 3),
                    "busy_share": _rounded(self.busy_share(m)),
                    "docs_per_sec": round(self.model_docs_per_sec(m), 3),
                    "verified_share": _rounded(m.verified_share),
                    "flagged_share": _rounded(m.flagged_share),
                    "supported_share": _rounded(m.supported_share),
                }
                for m in self.models
            },
        }


def _rounded(share: float | None) -> float | None:
    return None if share is None else round(share, 3)
