"""One model's figures in the run's report: what its lane counted (its :class:`LaneTally`, the
very object the dispatcher counts into), what the run takes of its lane at the end (workers,
breaker trips), and the quality of its pages, which the run counts itself.

Each figure shown of them is declared once (:data:`~.model_figures.MODEL_FIGURES`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wiki_assets.engine.dispatch.tally import LaneTally
from wiki_assets.engine.quality.sentences import ProseCheck, Support

if TYPE_CHECKING:
    from wiki_assets.engine.verification.verdicts import JudgedPage


IN_SERVICE = frozenset({"ok", "outpaced"})  # the values of ModelStats.service that are no warning


@dataclass
class ModelStats:
    """One model's figures in the report. Its documents, requests, tokens, errors, hedges, second
    opinions and judgements are its lane's :attr:`tally` (see :class:`LaneTally`), counted as its
    requests settle; the run counts the quality figures itself (:meth:`judged`)."""

    name: str
    model: str
    workers: int  # requests in flight: the fixed number, or where automatic workers settled
    auto: bool = False
    tally: LaneTally = field(default_factory=LaneTally)  # its lane's: the dispatcher counts here
    peak_workers: int = 0  # taken from its lane when the dispatcher is done
    breaker_trips: int = 0  # likewise
    # The quality of this model's pages (wiki_assets.engine.quality): key points given and
    # verified against their documents, pages flagged, and how often each reason flagged one.
    checked: int = 0  # its answers checked (its pages, and those it gave second opinions on)
    points: int = 0
    points_verified: int = 0
    flagged: int = 0
    flags: dict[str, int] = field(default_factory=dict)
    # Sentences of its pages' descriptions and summaries: checked (by rule or by a judge) and,
    # of those, supported by their documents (quality/claims.py).
    sentences_checked: int = 0
    sentences_supported: int = 0
    # For a model that answered none of its requests though none failed (:attr:`silent`): why
    # its endpoint did not answer a probe as the run ended, or None when it did (fleet.py).
    unreachable: str | None = None

    @property
    def silent(self) -> bool:
        """It answered none of its requests, none failed, and not all were cut as the run
        ended: other models' answers came first (a slow model, or one whose connections fail
        while its client's retries back off)."""
        tally = self.tally
        return not tally.answered and not tally.errors and tally.requests > tally.cut

    @property
    def service(self) -> str:
        """Whether it served the whole run. Out of service: ``server died``, ``taken out`` (by
        its breaker, after failures in a row) or ``no answer`` (it answered none of its
        requests: they failed, or its endpoint did not answer a probe as the run ended). In
        service: ``ok``, or ``outpaced`` (:attr:`silent`, its endpoint there: a slow model in a
        short run). A request cut as the run ended (a second opinion still out as the last
        first answer came in) is neither: a model whose only requests were cut is ``ok``."""
        tally = self.tally
        if tally.gone is not None:
            return "server died"
        if self.breaker_trips:
            return "taken out"
        if tally.answered or tally.requests == tally.cut:
            return "ok"
        return "outpaced" if self.silent and self.unreachable is None else "no answer"

    @property
    def in_service(self) -> bool:
        return self.service in IN_SERVICE

    def out(self) -> str | None:
        """Why it did not serve the whole run, in one line; None when it did."""
        service = self.service
        if service in IN_SERVICE:
            return None
        tally = self.tally
        if tally.gone is not None:
            return f"{self.name}: {tally.gone.splitlines()[0]}"
        times = f" {self.breaker_trips}×" if self.breaker_trips else ""
        why = f"{tally.requests} requests, {tally.answered} answered"
        why += f", {tally.errors} failed" if tally.errors else ""
        why += f", {tally.cut} cut at the end" if tally.cut else ""
        if tally.last_error:
            why += f"; the last error: {tally.last_error}"
        elif self.unreachable:
            why += f"; unreachable as the run ended: {self.unreachable}"
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

    def rejudged(self, judged: JudgedPage) -> None:
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
