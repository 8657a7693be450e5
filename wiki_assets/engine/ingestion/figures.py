"""A run's figures, each declared once (:class:`~.figure.Figure`): :data:`RUN_FIGURES`, its dials
(:data:`DIAL_FIGURES`, from :class:`~wiki_assets.engine.config.Dials`' fields) and each model's
(:data:`~.model_figures.MODEL_FIGURES`). The report's JSON (:func:`report_json`), the
CLI's and Dagster's metadata take their names, types and places from here: a new figure is one
declaration.

In the JSON, ``failed`` and ``no_text`` list the documents (path and reason); the metadata records
how many (:data:`~.figure.COUNTED`) and lists the first :data:`MAX_LISTED_FAILURES` apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, fields
from typing import Any

from wiki_assets.engine.config import AUTO, ENGINE_DIALS, Dials
from wiki_assets.engine.ingestion.figure import (
    COUNTED,
    IF_ANY,
    Figure,
    Place,
    Shown,
    rounded,
    why,
)
from wiki_assets.engine.ingestion.model_figures import MODEL_FIGURES
from wiki_assets.engine.ingestion.report import IngestReport, ModelRun

F = Figure[IngestReport]
MAX_LISTED_FAILURES = 200
"""Failures listed in the metadata's ``failed_documents`` at most (``failed`` counts them all)."""
MODELS = "models"
"""The report JSON's field that holds each model's figures, by its name."""
_CLI = Shown.CLI
_COLUMN = Shown.RUNS
_BRIEF = Shown.RUNS | Shown.BRIEF
_DETAILS = Place.DETAILS


def _outcome(r: IngestReport) -> str:
    """The run in words: what it summarized, or that everything was up to date; what failed,
    and what it left for the next run."""
    if r.count == 0 and not r.failed and not r.tally.stopped:
        done = "up to date: nothing to summarize"
    else:
        done = f"{r.count} summarized"
    parts = [done]
    if r.failed:
        parts.append(f"{len(r.failed)} failed")
    if r.no_text:
        parts.append(f"{len(r.no_text)} hold no text")
    if r.tally.stopped:
        parts.append(f"stopped, {r.unfinished} left for the next run")
    return " · ".join(parts)


# Figures a reader names (the others are read in their place's order).
OUTCOME = F("outcome", str, "the run in words: what it did, what failed, what it left",
            _outcome, place=Place.HEADLINE, json=False)  # fmt: skip
MODELS_OUT = F("models_out", str, "each model that did not serve the whole run, and why",
               lambda r: "; ".join(r.models_out()) or None, place=Place.HEADLINE,
               json=False)  # fmt: skip
COLLECTIONS = F("collections", list, "the collections the run covered", lambda r: r.collections,
                shown=_CLI)  # fmt: skip
COUNT = F("count", int, "documents summarized by a model in this run", lambda r: r.count,
          "documents", Place.PLOTTED, shown=_CLI | _BRIEF, header="docs")  # fmt: skip
SKIPPED = F("skipped", int, "documents unchanged since their page was written",
            lambda r: r.skipped, "documents", _DETAILS, shown=_CLI | _COLUMN)  # fmt: skip
FAILED = F("failed", list, "the documents that failed: path and reason", lambda r: r.failed,
           "documents", Place.PLOTTED, COUNTED, _CLI | _COLUMN)  # fmt: skip
NO_TEXT = F("no_text", list, "files that hold no text: path and why (not failures)",
            lambda r: r.no_text, "files", _DETAILS, COUNTED, _CLI)  # fmt: skip
UNFINISHED = F("unfinished", int, "documents left for the next run", lambda r: r.unfinished,
               "documents", _DETAILS, shown=_CLI | _COLUMN)  # fmt: skip
DURATION_S = F("duration_s", float, "the run's seconds", lambda r: round(r.duration_s, 3), "s",
               Place.PLOTTED, shown=_CLI | _BRIEF, header="seconds")  # fmt: skip
DOCS_PER_SEC = F("docs_per_sec", float, "documents summarized per second",
                 lambda r: round(r.docs_per_sec, 3), "documents/s", Place.PLOTTED, IF_ANY,
                 _CLI | _BRIEF, header="docs/s")  # fmt: skip
REQUESTS_PER_DOC = F("requests_per_doc", float, "requests per document summarized",
                     lambda r: rounded(r.requests_per_doc), "requests/document", Place.PLOTTED,
                     shown=_BRIEF, header="req/doc")  # fmt: skip
VERIFIED_SHARE = F("verified_share", float, "the share of key points verified in their "
                   "documents", lambda r: rounded(r.verified_share), "share", Place.PLOTTED,
                   shown=_COLUMN)  # fmt: skip
FLAGGED = F("flagged", int, "pages the checks flagged", lambda r: r.flagged, "pages",
            Place.PLOTTED, shown=_COLUMN)  # fmt: skip
EMBEDDING_MODEL = F("embedding_model", str, "the model that embeds documents for link candidates "
                    "by meaning", lambda r: r.embedding_model, place=_DETAILS)  # fmt: skip
EMBEDDED = F("embedded", int, "documents embedded for link candidates by meaning",
             lambda r: r.embedded, "documents", _DETAILS, shown=_CLI)  # fmt: skip
EMBEDDING_S = F("embedding_s", float, "the seconds embedding took, before the first request or "
                "beside the requests", lambda r: round(r.embedding_s, 3), "s", _DETAILS,
                shown=_CLI)  # fmt: skip
STOPPED_BY = F("stopped_by", str, "the signal that stopped it (SIGTERM, SIGINT)",
               lambda r: r.stopped_by, place=Place.LISTED)  # fmt: skip

# The run's figures, in the JSON's order (``models`` follows them: MODEL_FIGURES each), and the
# metadata's in each place.
# fmt: off
RUN_FIGURES: tuple[F, ...] = (
    OUTCOME, MODELS_OUT, COLLECTIONS, COUNT, SKIPPED,
    F("recovered", int, "documents an earlier run summarized but died before writing",
      lambda r: r.recovered, "documents", _DETAILS, shown=_CLI),
    F("removed", int, "pages whose document no longer exists", lambda r: r.removed, "pages",
      _DETAILS, shown=_CLI),
    F("relinked", int, "pages rewritten without their links to removed pages",
      lambda r: r.relinked, "pages"),
    FAILED, NO_TEXT,
    F("requeued", int, "documents sent back to the queue after a timeout, garbage or outage",
      lambda r: r.tally.requeued, "documents", _DETAILS, shown=_CLI),
    UNFINISHED,
    F("hedged", int, "documents a second model raced at the end of the run",
      lambda r: r.tally.hedged, "documents", _DETAILS),
    F("second_opinions", int, "flagged answers sent to another model",
      lambda r: r.tally.second_opinions, "answers", _DETAILS),
    F("second_opinions_kept", int, "second opinions kept in the first answer's place",
      lambda r: r.second_opinions_kept, "answers", _DETAILS),
    F("second_opinions_skipped", dict, "flagged answers that got no second opinion, by why",
      lambda r: dict(r.tally.second_opinions_skipped), "answers", _DETAILS, COUNTED),
    F("second_opinions_skipped_why", str, "the same in words: budget 3, run_done 2",
      lambda r: why(r.tally.second_opinions_skipped), place=_DETAILS, json=False),
    F("judgements_skipped", dict, "pages offered for judging that got no verdict, by why",
      lambda r: dict(r.tally.judgements_skipped), "pages"),
    EMBEDDING_MODEL, EMBEDDED, EMBEDDING_S,
    F("embedding_wait_s", float, "the seconds the run waited for embedding: before its first "
      "request, and at its end for the last vectors", lambda r: round(r.embedding_wait_s, 3),
      "s", _DETAILS, shown=_CLI),
    F("links_by_meaning", int, "links to the nearest documents by meaning added to pages whose "
      "candidates were asked before every vector was in", lambda r: r.links_by_meaning, "links",
      _DETAILS, shown=_CLI),
    F("stopped", str, "why the run stopped early", lambda r: r.tally.stopped),
    F("failed_documents", list, "the first failures, path and reason",
      lambda r: r.failed[:MAX_LISTED_FAILURES], place=Place.LISTED, json=False),
    F("no_text_files", list, "the first files that hold no text, path and why",
      lambda r: r.no_text[:MAX_LISTED_FAILURES] or None, place=Place.LISTED, json=False),
    STOPPED_BY, DURATION_S, DOCS_PER_SEC,
    F("requests", int, "requests the fleet sent", lambda r: r.requests, "requests", _DETAILS),
    REQUESTS_PER_DOC,
    F("prompt_tokens", int, "the fleet's prompt tokens", lambda r: r.prompt_tokens, "tokens",
      Place.PLOTTED, shown=_CLI),
    F("completion_tokens", int, "the fleet's completion tokens", lambda r: r.completion_tokens,
      "tokens", Place.PLOTTED, shown=_CLI),
    F("hit_max_tokens", int, "answers cut off at max_tokens", lambda r: r.hit_max_tokens,
      "answers", Place.PLOTTED, shown=_CLI),
    VERIFIED_SHARE, FLAGGED,
    F("supported_share", float, "the share of checked sentences their documents support",
      lambda r: rounded(r.supported_share), "share", Place.PLOTTED),
    F("judgements", int, "pages whose unchecked sentences a judge judged",
      lambda r: r.judgements, "pages", _DETAILS),
    F("judgements_skipped_why", str, "pages offered for judging that got no verdict, by why",
      lambda r: why(r.tally.judgements_skipped), place=_DETAILS, json=False),
    F("partitions", int, "the collections the run covered, how many",
      lambda r: len(r.collections), place=_DETAILS, json=False),
    F("dials", dict, "the run's dials", lambda r: asdict(r.dials)),
)
# fmt: on


# The dials: a figure each of Dials' fields (less the engine's own), recorded where it has a value;
# 'auto' as a flag, and then no number. In the run's dials table and `runs --compare`, in
# _SHOWN's order; as columns of `runs`, those tuned most often first. Short headers keep
# `runs --compare` narrow.
_AUTO_FLAG = ("workers_per_model", "workers_auto")  # (the dial that may be 'auto', its flag)
_SHOWN = (
    "workers_auto", "max_workers", "claim_size", "flush_seconds", "max_tokens", "force",
    "language", "workers_per_model", "flagged_pages", "second_opinion_share", "judge_share",
    "judge", "redo_models",
)  # fmt: skip
_TUNED_FIRST = ("workers_per_model", "workers_auto", "claim_size", "flush_seconds", "max_tokens")
_HEADERS = {"workers_per_model": "workers", "claim_size": "claim", "flush_seconds": "flush_s"}
_IN_BRIEF = {"claim_size"}  # the brief view of `wiki-assets runs` shows it


def _dial_figures() -> tuple[F, ...]:
    defaults = Dials()
    found: dict[str, F] = {}
    for field in fields(Dials):
        name = field.name
        if name in ENGINE_DIALS:
            continue
        kind = type(getattr(defaults, name))
        found[name] = F(
            name,
            str if kind is tuple else kind,
            f"the dial {name}",
            _dial_reader(name),
            place=Place.DIALS,
            shown=_BRIEF if name in _IN_BRIEF else _COLUMN,
            header=_HEADERS.get(name, ""),
            json=False,  # (the JSON has them all under "dials")
        )
        if name == _AUTO_FLAG[0]:
            found[_AUTO_FLAG[1]] = F(_AUTO_FLAG[1], bool, f"whether {name} was 'auto'",
                                     _auto_reader(name), place=Place.DIALS, shown=_COLUMN,
                                     json=False)  # fmt: skip
    if set(found) != set(_SHOWN):  # a dial added to Dials is shown, in its place here
        raise ValueError(f"dials to place among the run's figures: {set(found) ^ set(_SHOWN)}")
    return tuple(found[name] for name in _SHOWN)


def _dial_reader(name: str) -> Callable[[IngestReport], Any]:
    """The dial as the metadata records it: a list joined; none for no value, nor for 'auto'
    (its flag says so)."""
    may_be_auto = name == _AUTO_FLAG[0]

    def read(r: IngestReport) -> Any:
        value = getattr(r.dials, name)
        if isinstance(value, tuple):
            value = ", ".join(value)
        return None if value == "" or (may_be_auto and value == AUTO) else value

    return read


def _auto_reader(name: str) -> Callable[[IngestReport], bool]:
    return lambda r: bool(getattr(r.dials, name) == AUTO)


DIAL_FIGURES = _dial_figures()
_DIALS_BY_NAME = {figure.name: figure for figure in DIAL_FIGURES}
WORKERS_PER_MODEL, WORKERS_AUTO = (_DIALS_BY_NAME[name] for name in _AUTO_FLAG)
RUNS_DIAL_FIGURES = (
    *(_DIALS_BY_NAME[name] for name in _TUNED_FIRST),
    *(figure for figure in DIAL_FIGURES if figure.name not in _TUNED_FIRST),
)
"""The dials as columns of `wiki-assets runs`: those tuned most often first."""


def report_json(report: IngestReport) -> dict[str, Any]:
    """The report's JSON: every figure of :data:`RUN_FIGURES` it holds, and under
    :data:`MODELS` each model's :data:`~.model_figures.MODEL_FIGURES` by its name."""
    figures = {figure.name: figure.read(report) for figure in RUN_FIGURES if figure.json}
    models = [ModelRun(report, m) for m in report.models]
    figures[MODELS] = {
        model.stats.name: {f.name: f.read(model) for f in MODEL_FIGURES if f.json}
        for model in models
    }
    return figures
