"""What the dispatcher counts as it goes: the run's figures (:class:`DispatchTally`) and each
model's (:class:`LaneTally`, on its :class:`~.lane.Lane`).

The dispatcher only counts; the run around it reports. These are the run's figures: its report
holds these very objects (``IngestReport.tally``, each ``ModelStats.tally``, in
:mod:`wiki_assets.engine.ingestion`), and each figure shown is declared once
(``ingestion/figures.py``'s ``RUN_FIGURES``, ``model_figures.py``' ``MODEL_FIGURES``: a figure
added here is a declaration there). A progress line during the run reads a lane's tally as it
stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class LaneTally:
    """One model's figures, as its requests settle: its lane's (:attr:`.lane.Lane.tally`), which
    the report's ``ModelStats`` holds as its own ``tally``."""

    failed: int = 0  # documents that failed on this model
    errors: int = 0  # failed requests of any kind (after the client's own retries)
    timeouts: int = 0
    garbage: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    hit_max_tokens: int = 0
    docs: int = 0  # documents whose page this model's answer is
    requests: int = 0  # every request sent to it: pages, parts, second opinions, hedges
    answered: int = 0  # of those, the ones it answered (whether or not its answer was used)
    # Of those, the ones cancelled unanswered because the run ended or stopped (second opinions
    # and judgements still out as the last first answer came in) or because its worker had other
    # work: unanswered through no fault of the model's, unlike a failure or a lost race.
    cut: int = 0
    parts: int = 0  # notes on a part of a long document it answered
    # Its answered requests' seconds in flight, added up (its share of the fleet's): a request
    # that failed, lost a race or was cut did no work that shows, however long it took (a dead
    # model's requests in its client's retries, lost to a healthy model's hedges).
    busy_s: float = 0.0
    hedges: int = 0  # requests this model sent to race another model's slow request
    hedges_won: int = 0  # of those, the ones whose answer came first
    # Second opinions (the flagged_pages dial's 'retry'): answers this model gave on another
    # model's flagged page, and of those the ones kept in its place (judged better).
    second_opinions: int = 0
    second_opinions_kept: int = 0
    judgements: int = 0  # pages of other models whose unchecked sentences it judged (judges.py)
    controls: int = 0  # of its judgements' controls (sentences with a known verdict): answered
    controls_right: int = 0  # and right: how far its verdicts hold
    # Its pages were replaced by other models' second opinions so often that it stopped taking
    # new documents (only second opinions) while the run's budget of them lasted.
    superseded: bool = False
    # Why it left the run for good (its server died: how, and its last lines), if it did.
    gone: str | None = None
    last_error: str | None = None  # the reason its last failed request gave


@dataclass
class DispatchTally:
    """The run's figures that the dispatcher counts: the report's ``tally``, which the run gives
    the dispatcher to count into."""

    requeued: int = 0  # documents sent back to the queue after a timeout, garbage or outage
    hedged: int = 0  # documents a second model raced at the end of the run
    second_opinions: int = 0  # flagged answers sent to another model (flagged_pages 'retry')
    # Flagged answers that got no second opinion, or whose second opinion was given up, by why
    # (:mod:`~.opinions`: budget, model_not_kept, reason_not_fixed, ...); set when the run ends.
    second_opinions_skipped: dict[str, int] = field(default_factory=dict)
    # Pages offered for judging that got no judge's answer, by why (:mod:`~.judges`).
    judgements_skipped: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None  # why the run stopped early
