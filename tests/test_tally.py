"""The run's report takes the dispatcher's figures (:mod:`wiki_assets.engine.dispatch.tally`)."""

from __future__ import annotations

from dataclasses import asdict, fields

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch import DispatchTally, LaneTally
from wiki_assets.engine.ingestion.report import IngestReport, ModelStats


def test_every_figure_the_dispatcher_counts_has_its_field_in_the_report() -> None:
    assert {f.name for f in fields(LaneTally)} <= {f.name for f in fields(ModelStats)}
    assert {f.name for f in fields(DispatchTally)} <= {f.name for f in fields(IngestReport)}


def test_the_report_takes_the_dispatchers_figures_and_keeps_its_own() -> None:
    stats = ModelStats("a", "model-a", 4)
    stats.judged(3, 2, ["short"])
    report = IngestReport(collections=["c"], dials=Dials(), models=[stats], count=7)
    lane = LaneTally(docs=7, requests=9, busy_s=1.5, hedges_won=1, superseded=True)
    tally = DispatchTally(requeued=2, hedged=1, second_opinions_skipped={"budget": 3})
    tally.stopped = "stopped by SIGTERM"
    report.tallied(tally, [lane])
    assert (report.requeued, report.hedged, report.stopped) == (2, 1, "stopped by SIGTERM")
    assert report.second_opinions_skipped == {"budget": 3}
    assert report.second_opinions_skipped is not tally.second_opinions_skipped
    figures = asdict(stats)
    assert {name: figures[name] for name in asdict(lane)} == asdict(lane)
    assert (stats.checked, stats.points, stats.flags) == (1, 3, {"short": 1})
    assert list(report.to_dict()["models"]["a"])[:6] == [
        "name", "model", "workers", "auto", "peak_workers", "failed",
    ]  # fmt: skip
