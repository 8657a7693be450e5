"""Runs compared at a glance: the last runs of ``wiki_pages`` side by side, each with its docs/s,
overall and per model, its flagged share (the pages it flagged, of the documents it summarized),
what went wrong and the dials that differ between them (those every run shares are said once).

Read from the figures each run recorded (:mod:`.run_figures`), and shown two ways: in the UI, as
the ``runs`` key of each run's figures, a markdown table whose run ids link to the runs (their
log and every figure); in a terminal, by ``wiki-assets runs --compare`` (:mod:`wiki_assets.cli`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import dagster as dg

from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.metadata.recording import Key, Markdown
from wiki_assets.defs.names import WIKI_PAGES
from wiki_assets.engine.config import AUTO
from wiki_assets.engine.ingestion import figures
from wiki_assets.engine.ingestion.model_stats import IN_SERVICE

COMPARED = 10  # runs in the UI's table, the newest first
SHORT_RUN_ID = 8  # as the Dagster UI shows run ids
# The dials as a comparison shows them: workers_per_model says "auto" itself (workers_auto).
COMPARED_DIALS = tuple(key for key in md.DIALS if key is not md.WORKERS_AUTO)
# The dials' headers (short for those tuned most often: the table stays narrow).
HEADERS = {figure.name: figure.column for figure in figures.DIAL_FIGURES}
# The run's columns: documents summarized, their rate, and the share of them flagged.
DOCS, DOCS_PER_SEC, FLAGGED = (
    f.column for f in (figures.COUNT, figures.DOCS_PER_SEC, figures.FLAGGED)
)
SHARED_PER_LINE = 4  # dials every run shares, per line under the UI's table


@dataclass(frozen=True)
class RunSummary:
    """One run as a comparison shows it, from its recorded figures."""

    run_id: str
    time: datetime
    docs: int | None  # documents it summarized
    docs_per_sec: float | None
    flagged: int | None  # pages it flagged
    models: dict[str, float | None] = field(default_factory=dict)  # docs/s by model, fleet order
    dials: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what went wrong: failed documents, a stop, models out
    models_out: tuple[str, ...] = ()  # of the notes, the models out of service ("gw no answer")

    @property
    def flagged_share(self) -> float | None:
        """Of the documents it summarized, the share whose pages it flagged."""
        if not self.docs or self.flagged is None:
            return None
        return min(self.flagged, self.docs) / self.docs


def summary(run_id: str, timestamp: float, values: Mapping[str, Any]) -> RunSummary:
    """A run's summary from its figures as :func:`.run_figures.plain` reads them."""
    models = md.models_of(values)
    dials = {key.name: key.read(values) for key in COMPARED_DIALS}
    if md.WORKERS_AUTO.read(values):
        dials[md.WORKERS_PER_MODEL.name] = AUTO
    notes = []
    if failed := md.FAILED.read(values):
        notes.append(f"{failed} failed")
    if md.UNFINISHED.read(values):
        notes.append("stopped")
    out = [
        f"{name} {service}"
        for name, figures in models.items()
        if (service := md.MODEL_SERVICE.read(figures)) not in (*IN_SERVICE, None)
    ]
    notes += out
    return RunSummary(
        run_id=run_id,
        time=datetime.fromtimestamp(timestamp).replace(microsecond=0),
        docs=md.COUNT.read(values),
        docs_per_sec=md.DOCS_PER_SEC.read(values),
        flagged=md.FLAGGED.read(values),
        models={name: md.MODEL_DOCS_PER_SEC.read(figures) for name, figures in models.items()},
        dials=dials,
        notes=tuple(notes),
        models_out=tuple(out),
    )


def recent(instance: dg.DagsterInstance, limit: int = COMPARED) -> list[RunSummary]:
    """The newest ``limit`` runs' summaries, from their figures on ``wiki_pages``."""
    records = instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=WIKI_PAGES), limit=limit
    ).records
    return [
        summary(record.run_id, record.timestamp, md.plain(record.asset_observation.metadata))
        for record in records
        if record.asset_observation is not None and record.run_id
    ]


def differing(runs: Sequence[RunSummary]) -> tuple[list[str], dict[str, Any]]:
    """The dials whose values differ between ``runs`` (in the dials' order), and the values of
    the others, which every run shares."""
    differ, shared = [], {}
    for key in COMPARED_DIALS:
        values = {_shown(run.dials.get(key.name)) for run in runs}
        if len(values) > 1:
            differ.append(key.name)
        elif values and (value := next(iter(values))):
            shared[key.name] = value
    return differ, shared


def columns(runs: Sequence[RunSummary]) -> tuple[list[str], list[list[str]], dict[str, Any]]:
    """The comparison as text cells: the headers, a row of cells per run, and the dials every
    run shares (said once, under the table). Narrow: one column per model and per dial that
    differs."""
    differ, shared = differing(runs)
    names = list(dict.fromkeys(name for run in runs for name in run.models))
    dials = [HEADERS[name] for name in differ]
    speeds = [f"{name}/s" for name in names]  # each model's docs/s
    headers = ["run", "when", DOCS, DOCS_PER_SEC, FLAGGED, *speeds, *dials, "notes"]
    rows = []
    for run in runs:
        share = run.flagged_share
        rows.append(
            [
                run.run_id[:SHORT_RUN_ID],
                run.time.strftime("%m-%d %H:%M"),
                _shown(run.docs),
                f"{run.docs_per_sec:.2f}" if run.docs_per_sec is not None else "",
                f"{share:.0%}" if share is not None else "",
                # (none for a run that summarized nothing, as the run's own rate)
                *(_speed(run.models, name) if run.docs else "" for name in names),
                *(_shown(run.dials.get(name)) for name in differ),
                ", ".join(run.notes),
            ]
        )
    if not any(row[-1] for row in rows):
        headers.pop()
        rows = [row[:-1] for row in rows]
    return headers, rows, shared


def markdown(runs: Sequence[RunSummary]) -> str:
    """The comparison as the UI's markdown table, each run id a link to its run."""
    headers, rows, shared = columns(runs)
    numeric = {DOCS, DOCS_PER_SEC, FLAGGED, *(f"{name}/s" for run in runs for name in run.models)}
    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if header in numeric else "---" for header in headers) + "|",
    ]
    for run, row in zip(runs, rows, strict=True):
        linked = [f"[{row[0]}](/runs/{run.run_id})", *row[1:]]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in linked) + " |")
    items = [f"{name} {value}" for name, value in shared.items()]
    chunks = [items[i : i + SHARED_PER_LINE] for i in range(0, len(items), SHARED_PER_LINE)]
    if chunks:  # (a line each: a markdown line break is two spaces at the end)
        lines += ["", "  \n".join(["Every run:", *(" · ".join(chunk) for chunk in chunks)])]
    return "\n".join(lines)


def _shown(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _speed(models: Mapping[str, float | None], name: str) -> str:
    speed = models.get(name)
    return "" if speed is None else f"{speed:.2f}"


# The UI's comparison, first after the run's outcome in its figures: this run and the ones before.
RUNS = Key[Sequence[RunSummary]]("runs", Markdown, lambda runs: markdown(runs) if runs else None)


def with_comparison(
    figures: dict[str, dg.MetadataValue], instance: dg.DagsterInstance, run_id: str, now: float
) -> dict[str, dg.MetadataValue]:
    """A run's figures with :data:`RUNS` after its headline: this run (from ``figures``, not
    recorded yet) and the runs before it."""
    this = summary(run_id, now, md.plain(figures))
    runs = [this, *(run for run in recent(instance, COMPARED) if run.run_id != run_id)]
    value = RUNS.value(runs[:COMPARED])
    headline = {key.name for key in md.HEADLINE}
    ordered = {name: v for name, v in figures.items() if name in headline}
    if value is not None:
        ordered[RUNS.name] = value
    return ordered | {name: v for name, v in figures.items() if name not in headline}
