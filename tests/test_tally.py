"""The dispatcher's tallies (:mod:`wiki_assets.engine.dispatch.tally`) are the run's figures: the
report holds the very objects the dispatcher counts into, and its JSON
(:func:`~wiki_assets.engine.ingestion.figures.report_json`, whose figures the CLI's JSON takes: a
public interface) is declared once, a figure per key."""

from __future__ import annotations

from dataclasses import fields
from types import SimpleNamespace
from typing import Any

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.dispatch import Dispatcher, DispatchTally, Lane, LaneTally, workers_for
from wiki_assets.engine.ingestion.figures import RUN_FIGURES, report_json
from wiki_assets.engine.ingestion.fleet import model_stats
from wiki_assets.engine.ingestion.model_figures import MODEL_FIGURES
from wiki_assets.engine.ingestion.model_stats import ModelStats
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.virtual_time import generate, run

# The CLI's JSON, key by key, in order: a key dropped, renamed or added fails here first.
RUN_KEYS = [
    "collections", "count", "skipped", "recovered", "removed", "relinked", "failed", "no_text",
    "requeued", "unfinished", "hedged", "second_opinions", "second_opinions_kept",
    "second_opinions_skipped", "judgements_skipped",
    "embedding_model", "embedded", "embedding_s", "embedding_wait_s", "links_by_meaning", "stopped",
    "stopped_by", "duration_s", "docs_per_sec", "requests", "requests_per_doc", "prompt_tokens",
    "completion_tokens", "hit_max_tokens", "verified_share", "flagged", "supported_share",
    "judgements", "dials", "models",
]  # fmt: skip
MODEL_KEYS = [
    "name", "model", "docs", "docs_per_sec", "workers", "busy_share", "failed", "flagged_share",
    "verified_share", "auto", "peak_workers", "errors", "timeouts", "garbage", "breaker_trips",
    "prompt_tokens", "completion_tokens", "hit_max_tokens", "requests", "answered", "cut",
    "parts", "busy_s", "hedges", "hedges_won", "checked", "points", "points_verified",
    "flagged", "flags", "second_opinions", "second_opinions_kept", "judgements", "controls",
    "controls_right", "sentences_checked", "sentences_supported", "superseded", "gone",
    "last_error", "supported_share",
]  # fmt: skip


def _lane(name: str) -> Lane:
    endpoint = Endpoint(name=name, base_url="http://127.0.0.1:9/v1", model=f"model-{name}")
    return Lane(0, endpoint, None, workers_for(endpoint, Dials()))  # type: ignore[arg-type]


def _distinct(tally: Any) -> dict[str, Any]:
    """Give each of ``tally``'s figures a value of its own; returns them by name."""
    values: dict[str, Any] = {}
    for number, f in enumerate(fields(tally), start=1):
        default = getattr(tally, f.name)
        value: Any = {
            bool: True,
            int: number,
            float: number + 0.25,
            dict: {"budget": number},
            type(None): f"{f.name} {number}",
        }[type(default)]
        setattr(tally, f.name, value)
        values[f.name] = value
    return values


def test_the_json_keeps_its_keys() -> None:
    report = IngestReport(["c"], Dials(), [ModelStats("a", "model-a", 4)])
    figures = report_json(report)
    assert list(figures) == RUN_KEYS
    assert list(figures["models"]["a"]) == MODEL_KEYS
    # "models": MODEL_FIGURES, each; the figures of the metadata alone are not in the JSON.
    assert [f.name for f in RUN_FIGURES if f.json] == RUN_KEYS[:-1]
    assert [f.name for f in MODEL_FIGURES if f.json] == MODEL_KEYS


def test_every_figure_says_what_it_is() -> None:
    for figure in (*RUN_FIGURES, *MODEL_FIGURES):
        assert figure.about and "\n" not in figure.about, figure.name


def test_the_report_holds_the_tallies_the_dispatcher_counts_into() -> None:
    lane = _lane("a")
    (stats,) = model_stats([lane])
    assert stats.tally is lane.tally
    report = IngestReport(["c"], Dials(), [stats])
    work = SimpleNamespace(judged=None)
    dispatcher = Dispatcher(
        [lane], iter(()), work, Dials(claim_size=1),  # type: ignore[arg-type]
        expected=lambda: 0, tally=report.tally,
    )  # fmt: skip
    assert dispatcher.tally is report.tally
    lane.tally.docs += 1
    dispatcher.tally.hedged += 1
    figures = report_json(report)
    assert (figures["hedged"], figures["models"]["a"]["docs"]) == (1, 1)


def test_every_figure_the_dispatcher_counts_is_in_the_json_under_its_name() -> None:
    stats = ModelStats("a", "model-a", 4)
    report = IngestReport(["c"], Dials(), [stats])
    lane, run_ = _distinct(stats.tally), _distinct(report.tally)
    figures = report_json(report)
    assert set(lane) == {f.name for f in fields(LaneTally)}
    assert set(run_) == {f.name for f in fields(DispatchTally)}
    assert {name: figures["models"]["a"][name] for name in lane} == lane
    assert {name: figures[name] for name in run_} == run_


def test_the_quality_figures_are_the_runs_own() -> None:
    stats = ModelStats("a", "model-a", 4)
    stats.judged(3, 2, ["short"])
    stats.judged(1, 1, [])
    model = report_json(IngestReport(["c"], Dials(), [stats]))["models"]["a"]
    assert (model["checked"], model["points"], model["points_verified"]) == (2, 4, 3)
    assert (model["flagged"], model["flags"], model["flagged_share"]) == (1, {"short": 1}, 0.5)
    assert model["flags"] is not stats.flags


def test_a_virtual_run_reports_what_its_lanes_counted() -> None:
    report = run(generate(3, 60)).report
    figures = report_json(report)
    models = figures["models"].values()
    assert figures["count"] > 0 and sum(m["docs"] for m in models) == figures["count"]
    assert figures["requests"] == sum(m["requests"] for m in models) >= figures["count"]
