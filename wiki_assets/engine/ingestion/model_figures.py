"""Each model's figures in a run, declared once (:class:`~.figure.Figure`, read from a
:class:`~.report.ModelRun`): the report's JSON gives them under ``models``, by the model's name;
Dagster's metadata records them in a table with a row per model, the columns a screen shows
(:attr:`~.figure.Place.MODELS`) and the others (:attr:`~.figure.Place.MODEL_DETAILS`)."""

from __future__ import annotations

from wiki_assets.engine.ingestion.figure import Figure, Place, Shown, rounded
from wiki_assets.engine.ingestion.report import ModelRun
from wiki_assets.engine.quality import Reason

M = Figure[ModelRun]
_BRIEF = Place.MODELS
_DETAILS = Place.MODEL_DETAILS


def _flagged_by(reason: Reason) -> M:
    """How often ``reason`` flagged one of its answers: a column only where it flagged an answer
    of the run (zero for the models it did not), so the table stays narrow."""

    def of(m: ModelRun) -> int | None:
        flagged = any(reason in model.flags for model in m.report.models)
        return m.stats.flags.get(reason, 0) if flagged else None

    return M(f"flagged_{reason}", int, f"its answers {reason} flagged", of, "answers", _DETAILS,
             json=False)  # fmt: skip


# Figures a reader names (the others are read in their place's order).
NAME = M("name", str, "the endpoint's name", lambda m: m.stats.name, place=_BRIEF)
MODEL = M("model", str, "the model id the endpoint serves", lambda m: m.stats.model, place=_BRIEF)
WORKERS = M("workers", int, "requests in flight: the fixed count, or where automatic "
            "workers settled", lambda m: m.stats.workers, "requests", _BRIEF,
            shown=Shown.BRIEF)  # fmt: skip
DOCS = M("docs", int, "documents whose page is its answer", lambda m: m.stats.tally.docs,
         "documents", _BRIEF)  # fmt: skip
PROMPT_TOKENS = M("prompt_tokens", int, "its prompt tokens", lambda m: m.stats.tally.prompt_tokens,
                  "tokens", _DETAILS)  # fmt: skip
COMPLETION_TOKENS = M("completion_tokens", int, "its completion tokens",
                      lambda m: m.stats.tally.completion_tokens, "tokens", _DETAILS)  # fmt: skip
FLAGGED = M("flagged", int, "its answers the checks flagged", lambda m: m.stats.flagged,
            "answers", _DETAILS)  # fmt: skip
DOCS_PER_SEC = M("docs_per_sec", float, "its documents per second of the run",
                 lambda m: round(m.report.model_docs_per_sec(m.stats), 3), "documents/s",
                 _BRIEF)  # fmt: skip
VERIFIED_SHARE = M("verified_share", float, "the share of its key points verified",
                   lambda m: rounded(m.stats.verified_share), "share", _BRIEF)  # fmt: skip
SUPPORTED_SHARE = M("supported_share", float, "the share of its checked sentences supported",
                    lambda m: rounded(m.stats.supported_share), "share", _DETAILS)  # fmt: skip
SERVICE = M("service", str, "in service to the end, or why not (the run's models_out says more)",
            lambda m: m.stats.service, place=_BRIEF, json=False)  # fmt: skip
FLAGGED_BY = {reason: _flagged_by(reason) for reason in Reason}

# Each model's figures, in the JSON's order, and the metadata's in each table: the table a screen
# shows first, in the order a reader compares models (who, how fast, how busy, how good).
# fmt: off
MODEL_FIGURES: tuple[M, ...] = (
    NAME, MODEL, DOCS, DOCS_PER_SEC, WORKERS,
    M("busy_share", float, "its share of the fleet's busy time",
      lambda m: rounded(m.report.busy_share(m.stats)), "share", _BRIEF),
    M("failed", int, "documents that failed on it", lambda m: m.stats.tally.failed, "documents",
      _BRIEF),
    M("flagged_share", float, "the share of its answers flagged",
      lambda m: rounded(m.stats.flagged_share), "share", _BRIEF),
    VERIFIED_SHARE, SERVICE,
    M("auto", bool, "whether its workers were automatic", lambda m: m.stats.auto,
      place=_DETAILS),
    M("peak_workers", int, "the most requests it had in flight", lambda m: m.stats.peak_workers,
      "requests", _DETAILS),
    M("errors", int, "failed requests of any kind", lambda m: m.stats.tally.errors, "requests",
      _DETAILS),
    M("timeouts", int, "requests that timed out", lambda m: m.stats.tally.timeouts, "requests",
      _DETAILS),
    M("garbage", int, "answers that could not be read", lambda m: m.stats.tally.garbage,
      "answers", _DETAILS),
    M("breaker_trips", int, "times its breaker took it out", lambda m: m.stats.breaker_trips,
      place=_DETAILS),
    PROMPT_TOKENS, COMPLETION_TOKENS,
    M("hit_max_tokens", int, "its answers cut off at max_tokens",
      lambda m: m.stats.tally.hit_max_tokens, "answers", _DETAILS),
    M("requests", int, "requests sent to it: pages, parts, second opinions, hedges, judgements",
      lambda m: m.stats.tally.requests, "requests", _DETAILS),
    M("answered", int, "of those, the ones it answered", lambda m: m.stats.tally.answered,
      "requests", _DETAILS),
    M("cut", int, "of those, the ones cancelled unanswered as the run ended or stopped",
      lambda m: m.stats.tally.cut, "requests", _DETAILS),
    M("parts", int, "notes on parts of long documents it answered", lambda m: m.stats.tally.parts,
      "requests", _DETAILS),
    M("busy_s", float, "its answered requests' seconds in flight, added up",
      lambda m: round(m.stats.tally.busy_s, 3), "s"),
    M("hedges", int, "requests it sent to race another model's slow one",
      lambda m: m.stats.tally.hedges, "requests", _DETAILS),
    M("hedges_won", int, "of those, the ones whose answer came first",
      lambda m: m.stats.tally.hedges_won, "requests", _DETAILS),
    M("checked", int, "its answers checked", lambda m: m.stats.checked, "answers"),
    M("points", int, "key points its answers gave", lambda m: m.stats.points, "points", _DETAILS),
    M("points_verified", int, "of those, the ones verified in their documents",
      lambda m: m.stats.points_verified, "points", _DETAILS),
    FLAGGED,
    M("flags", dict, "how often each reason flagged one", lambda m: dict(m.stats.flags),
      "answers"),
    M("second_opinions", int, "second opinions it gave on other models' flagged pages",
      lambda m: m.stats.tally.second_opinions, "answers", _DETAILS),
    M("second_opinions_kept", int, "of those, the ones kept in the page's place",
      lambda m: m.stats.tally.second_opinions_kept, "answers", _DETAILS),
    M("judgements", int, "pages of other models it judged", lambda m: m.stats.tally.judgements,
      "pages", _DETAILS),
    M("controls", int, "controls of its judgements it answered",
      lambda m: m.stats.tally.controls, "controls", _DETAILS),
    M("controls_right", int, "of those, the ones it got right",
      lambda m: m.stats.tally.controls_right, "controls", _DETAILS),
    M("sentences_checked", int, "sentences of its pages checked",
      lambda m: m.stats.sentences_checked, "sentences", _DETAILS),
    M("sentences_supported", int, "of those, the ones their documents support",
      lambda m: m.stats.sentences_supported, "sentences", _DETAILS),
    M("superseded", bool, "its pages kept being replaced: it stopped taking new documents",
      lambda m: m.stats.tally.superseded, place=_DETAILS),
    M("gone", str, "why it left the run for good (its server died)",
      lambda m: m.stats.tally.gone),
    M("last_error", str, "the reason its last failed request gave",
      lambda m: m.stats.tally.last_error),
    SUPPORTED_SHARE, *FLAGGED_BY.values(),
)
# fmt: on
