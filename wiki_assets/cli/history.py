"""Past ``wiki_pages`` runs as one table row each, to compare tuning runs.

A run records its figures and dials once, as an observation of ``wiki_pages`` (also a run stopped
early); each partition it materialized carries that collection's own counts. A row is a run's
observation with its partitions joined, the run's status and the wiki it wrote (its
``wiki_assets/wiki`` tag); a run that failed before it recorded figures is a row too, with its
status and partitions only. Read through the instance's public API from the newest event
backwards, so only the runs shown are read.

How a terminal shows the rows: :mod:`.text`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import dagster as dg
import polars as pl

from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.metadata.comparison import RunSummary, summary
from wiki_assets.defs.names import INGEST_JOB, WIKI_PAGES, collections_partitions
from wiki_assets.defs.sync.observe import PARTITION_RANGE_END, PARTITION_RANGE_START
from wiki_assets.defs.tags import WIKI_TAG
from wiki_assets.engine.ingestion.figure import Shown
from wiki_assets.engine.ingestion.figures import MODELS, RUN_FIGURES, RUNS_DIAL_FIGURES

PAGE_SIZE = 500

# The metadata keys a row reads, each a column of its name and type: every dial (those tuned most
# often first), then the figures declared a column of `runs` (Shown.RUNS).
DIALS = tuple(md.KEYS[figure] for figure in RUNS_DIAL_FIGURES)
FIGURES = tuple(
    md.KEYS[figure]
    for figure in RUN_FIGURES
    if Shown.RUNS in figure.shown and figure.place is not None
)
MODEL_SPEED = md.MODEL_DOCS_PER_SEC  # the models column: each model's docs/s
MODEL_WORKERS = md.MODEL_WORKERS  # the workers column: each model's real workers
# The quality column: each model's verified share, flagged pages and the reasons that flagged them.
REASONS = md.MODEL_FLAGS
READS = (*DIALS, *FIGURES)  # of the run's keys; and MODEL_SPEED of each model's

_DTYPES: dict[type, Any] = {int: pl.Int64, float: pl.Float64, bool: pl.Boolean, str: pl.String}
SCHEMA: dict[str, Any] = {
    "time": pl.Datetime("us"),
    "partition": pl.String,
    "run_id": pl.String,
    "wiki": pl.String,  # the wiki root the run wrote (runs of several wikis may share a home)
    **{key.name: _DTYPES[key.type] for key in DIALS},
    # Each model's requests in flight as the run ended, in fleet order ("1", "4/8"): the fixed
    # count (a model's own 'workers' beats the dial), or where automatic workers settled.
    MODEL_WORKERS.name: pl.String,
    MODELS: pl.String,  # each model's name and docs/s
    **{key.name: _DTYPES[key.type] for key in FIGURES},
    "quality": pl.String,
    # The models that did not serve the run to its end, and why ("gateway no answer"), or empty.
    md.MODELS_OUT.name: pl.String,
    # The Dagster run's: success, failure (a step failed, e.g. wiki_index after the pages were
    # written), canceled, started (still running).
    "status": pl.String,
}
COLUMNS: tuple[str, ...] = tuple(SCHEMA)


def runs_table(
    instance: dg.DagsterInstance,
    *,
    partition: str | None = None,
    sort: str = "time",
    descending: bool = False,
    limit: int | None = 20,
) -> pl.DataFrame:
    """One row per run that materialized ``wiki_pages`` (or the given partition): the most recent
    ``limit`` runs (all when ``None``), ordered by ``sort``.

    ``time`` is when the run recorded its figures (local time), ``partition`` the run's
    partitions joined with ``,`` in partition order, ``run_id`` the full id, ``workers_per_model``
    the fixed count (empty with ``workers_auto``), ``models`` each model's name and docs/s.
    """
    if sort not in SCHEMA:
        raise ValueError(f"unknown column {sort!r}; one of {', '.join(COLUMNS)}")
    if limit is not None and limit < 1:
        raise ValueError("limit must be at least 1")
    figures: dict[str, dg.EventLogRecord] = {}
    for record in _run_records(instance, partition):
        if record.run_id in figures:
            continue
        figures[record.run_id] = record
        if limit is not None and len(figures) == limit:
            break  # newest first: the shown runs are read
    order = _partition_order(instance)
    without = _runs_without_figures(instance, partition, order, set(figures), limit)
    runs = {
        record.dagster_run.run_id: record
        for record in instance.get_run_records(dg.RunsFilter(run_ids=list(figures)))
    } if figures else {}  # fmt: skip
    rows: list[tuple[float, tuple[Any, ...]]] = []
    for run_id, record in figures.items():
        run = runs.get(run_id)
        status = run.dagster_run.status.value.lower() if run else None
        wiki = run.dagster_run.tags.get(WIKI_TAG) if run else None
        rows.append((record.timestamp, _row(instance, record, order, partition, wiki, status)))
    for run in without:
        rows.append((_ended(run), _failed_row(run, order, partition)))
    rows.sort(key=lambda row: row[0], reverse=True)  # newest first, then the limit
    rows = rows[:limit] if limit is not None else rows
    # Shown to the second, but two runs can end within one: the exact time breaks ties.
    return (
        pl.DataFrame([row for _, row in rows], schema=SCHEMA, orient="row")
        .with_columns(pl.Series("_exact", [at for at, _ in rows], dtype=pl.Float64))
        .sort([sort, "_exact"], descending=descending, nulls_last=True)
        .drop("_exact")
    )


def compared_runs(
    instance: dg.DagsterInstance, partition: str | None = None, limit: int | None = 20
) -> list[RunSummary]:
    """The newest ``limit`` runs (all when ``None``) that recorded figures, of ``partition`` when
    given, as :mod:`~wiki_assets.defs.metadata.comparison` compares them: newest first."""
    runs: dict[str, RunSummary] = {}
    for record in _run_records(instance, partition):
        observation = record.asset_observation
        if record.run_id in runs or observation is None:
            continue
        runs[record.run_id] = summary(
            record.run_id, record.timestamp, md.plain(observation.metadata)
        )
        if limit is not None and len(runs) == limit:
            break
    return list(runs.values())


def _runs_without_figures(
    instance: dg.DagsterInstance,
    partition: str | None,
    order: Mapping[str, int],
    recorded: set[str],
    limit: int | None,
) -> list[Any]:
    """The newest ``limit`` runs of ``wiki_pages`` (the ingest job, or a UI materialization or
    backfill of it) that failed or were canceled before they recorded figures."""
    found = []
    records = instance.get_run_records(
        dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]),
        limit=None if limit is None else limit + len(recorded),
    )
    for record in records:
        run = record.dagster_run
        if run.run_id in recorded or not _ran_wiki_pages(run):
            continue
        if partition is not None and partition not in _partitions_of(run, order):
            continue
        found.append(record)
        if limit is not None and len(found) == limit:
            break
    return found


def _ran_wiki_pages(run: dg.DagsterRun) -> bool:
    return run.job_name == INGEST_JOB or WIKI_PAGES in (run.asset_selection or ())


def _partitions_of(run: dg.DagsterRun, order: Mapping[str, int]) -> list[str]:
    """The partitions a run was launched for, from Dagster's tags (one, or a range)."""
    tags = run.tags
    if "dagster/partition" in tags:
        return [tags["dagster/partition"]]
    first = order.get(tags.get(PARTITION_RANGE_START, ""))
    last = order.get(tags.get(PARTITION_RANGE_END, ""))
    if first is None or last is None:
        return []
    return [key for key, index in order.items() if first <= index <= last]


def _ended(record: Any) -> float:
    return float(record.end_time or record.update_timestamp.timestamp())


def _failed_row(record: Any, order: Mapping[str, int], partition: str | None) -> tuple[Any, ...]:
    """A run with no figures: when it ended, its partitions, its wiki and its status."""
    run = record.dagster_run
    keys = [partition] if partition is not None else _partitions_of(run, order)
    values: dict[str, Any] = dict.fromkeys(SCHEMA)
    values.update(
        time=datetime.fromtimestamp(_ended(record)).replace(microsecond=0),
        partition=",".join(keys),
        run_id=run.run_id,
        wiki=run.tags.get(WIKI_TAG),
        status=run.status.value.lower(),
    )
    return tuple(values.values())


def _run_records(
    instance: dg.DagsterInstance, partition: str | None
) -> Iterator[dg.EventLogRecord]:
    """Each run's figures (its observation of wiki_pages), newest first; with ``partition``, only
    runs that materialized it."""
    if partition is None:
        yield from _paged(instance.fetch_observations, dg.AssetRecordsFilter(asset_key=WIKI_PAGES))
        return
    seen: set[str] = set()
    materialized = dg.AssetRecordsFilter(asset_key=WIKI_PAGES, asset_partitions=[partition])
    for record in _paged(instance.fetch_materializations, materialized):
        if record.run_id in seen:
            continue
        seen.add(record.run_id)
        figures = instance.get_records_for_run(
            record.run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION
        ).records
        yield from (r for r in figures if _is_wiki_pages(r))


def _paged(fetch: Any, records_filter: dg.AssetRecordsFilter) -> Iterator[dg.EventLogRecord]:
    cursor: str | None = None
    while True:
        result = fetch(records_filter, limit=PAGE_SIZE, cursor=cursor)
        yield from result.records
        if not result.has_more:
            return
        cursor = result.cursor


def _is_wiki_pages(record: dg.EventLogRecord) -> bool:
    event = record.event_log_entry.dagster_event
    return event is not None and event.asset_key == WIKI_PAGES


def _partition_order(instance: dg.DagsterInstance) -> dict[str, int]:
    name = collections_partitions.name or ""
    return {key: index for index, key in enumerate(instance.get_dynamic_partitions(name))}


def _row(
    instance: dg.DagsterInstance,
    record: dg.EventLogRecord,
    order: Mapping[str, int],
    partition: str | None,
    wiki: str | None,
    status: str | None,
) -> tuple[Any, ...]:
    observation = record.asset_observation
    metadata = md.plain(observation.metadata) if observation else {}
    if partition is not None:
        keys = {partition}
    else:
        materialized = instance.get_records_for_run(
            record.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        ).records
        keys = {r.partition_key for r in materialized if _is_wiki_pages(r) and r.partition_key}
    partitions = sorted(keys, key=lambda key: (order.get(key, len(order)), key))
    return (
        datetime.fromtimestamp(record.timestamp).replace(microsecond=0),
        ",".join(partitions),
        record.run_id,
        wiki,
        *(dial.read(metadata) for dial in DIALS),
        _workers(metadata),
        _models(metadata),
        *(figure.read(metadata) for figure in FIGURES),
        _quality(metadata),
        ", ".join(summary(record.run_id, record.timestamp, metadata).models_out) or None,
        status,
    )


def _workers(metadata: Mapping[str, Any]) -> str | None:
    """Each model's workers in fleet order (``4/8``); ``auto 6/3`` where they were found."""
    counts = [MODEL_WORKERS.read(figures) for figures in md.models_of(metadata).values()]
    if not counts or None in counts:
        return None  # a run recorded before its models' workers were
    shown = "/".join(str(count) for count in counts)
    return f"auto {shown}" if md.WORKERS_AUTO.read(metadata) else shown


def _models(metadata: Mapping[str, Any]) -> str:
    """``name docs/s`` per model, from ``model/<name>/docs_per_sec``."""
    parts = []
    for name, figures in md.models_of(metadata).items():
        speed = MODEL_SPEED.read(figures)
        parts.append(f"{name} {speed:.2f}/s" if speed is not None else name)
    return ", ".join(parts)


def _quality(metadata: Mapping[str, Any]) -> str:
    """Per model: ``name verified 0.92 · supported 0.80 · flagged 3 (prompt_echo 2, …)``."""
    parts = []
    for name, figures in md.models_of(metadata).items():
        verified = md.MODEL_VERIFIED_SHARE.read(figures)
        supported = md.MODEL_SUPPORTED_SHARE.read(figures)
        flagged = md.MODEL_FLAGGED.read(figures)
        if verified is None and flagged is None:
            continue  # a run recorded before pages were checked
        reasons = [
            f"{reason} {count}" for reason, key in REASONS.items() if (count := key.read(figures))
        ]
        shown = f"{name} verified {verified:.2f}" if verified is not None else name
        if supported is not None:
            shown += f" · supported {supported:.2f}"
        shown += f" · flagged {flagged or 0}"
        parts.append(f"{shown} ({', '.join(reasons)})" if reasons else shown)
    return "; ".join(parts)
