"""Past ``wiki_pages`` runs as one table row each, to compare tuning runs.

A run records its figures and dials once, as an observation of ``wiki_pages``; each partition it
materialized carries that collection's own counts. A row is a run's observation with its partitions
joined, and the run's status. Read through the instance's public API from the newest event
backwards, so only the runs shown are read.

A terminal gets the columns users compare, in 100 characters (:data:`BRIEF`, :func:`to_text`);
``wide`` (``wiki-assets runs --wide``) every column.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import dagster as dg
import polars as pl

from wiki_assets.defs import metadata as md
from wiki_assets.defs.names import WIKI_PAGES
from wiki_assets.defs.partitions import collections_partitions

PAGE_SIZE = 500
SHORT_RUN_ID = 8  # as the Dagster UI shows run ids

# The metadata keys a row reads, each a column of its name and type.
DIALS = (md.WORKERS_PER_MODEL, md.WORKERS_AUTO, md.CLAIM_SIZE, md.FLUSH_SECONDS, md.MAX_TOKENS)
FIGURES = (
    md.COUNT, md.SKIPPED, md.FAILED, md.DURATION_S, md.DOCS_PER_SEC, md.REQUESTS_PER_DOC,
    md.VERIFIED_SHARE, md.FLAGGED,
)  # fmt: skip
MODEL_SPEED = md.MODEL_DOCS_PER_SEC  # the models column: each model's docs/s
# The quality column: each model's verified share, flagged pages and the reasons that flagged them.
REASONS = md.MODEL_FLAGS
READS = (*DIALS, *FIGURES)  # of the run's keys; and MODEL_SPEED of each model's

_DTYPES: dict[type, Any] = {int: pl.Int64, float: pl.Float64, bool: pl.Boolean}
SCHEMA: dict[str, Any] = {
    "time": pl.Datetime("us"),
    "partition": pl.String,
    "run_id": pl.String,
    **{key.name: _DTYPES[key.type] for key in DIALS},
    "models": pl.String,
    **{key.name: _DTYPES[key.type] for key in FIGURES},
    "quality": pl.String,
    # The Dagster run's: success, failure (a step failed, e.g. wiki_index after the pages were
    # written), canceled, started (still running).
    "status": pl.String,
}
COLUMNS: tuple[str, ...] = tuple(SCHEMA)

# The brief view, what a terminal shows by default: (header, column it shows) in order. The last
# one, ``models``, takes what is left of :data:`BRIEF_WIDTH` and is cut with … past it.
BRIEF: tuple[tuple[str, str], ...] = (
    ("when", "time"),
    ("run", "run_id"),
    ("docs", "count"),
    ("seconds", "duration_s"),
    ("docs/s", "docs_per_sec"),
    ("req/doc", "requests_per_doc"),
    ("workers", "workers_per_model"),
    ("claim", "claim_size"),
    ("status", "status"),
    ("models", "models"),
)
BRIEF_WIDTH = 100
SORT_NAMES = {header: column for header, column in BRIEF}
"""The brief view's headers, which ``--sort`` takes as well as the columns' names."""


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
    runs: dict[str, dg.EventLogRecord] = {}
    for record in _run_records(instance, partition):
        if record.run_id in runs:
            continue
        runs[record.run_id] = record
        if limit is not None and len(runs) == limit:
            break  # newest first: the shown runs are read
    order = _partition_order(instance)
    statuses = _statuses(instance, list(runs))
    rows = [
        (*_row(instance, record, order, partition), statuses.get(record.run_id))
        for record in runs.values()
    ]
    # Shown to the second, but two runs can end within one: the exact time breaks ties.
    exact = [record.timestamp for record in runs.values()]
    return (
        pl.DataFrame(rows, schema=SCHEMA, orient="row")
        .with_columns(pl.Series("_exact", exact, dtype=pl.Float64))
        .sort([sort, "_exact"], descending=descending, nulls_last=True)
        .drop("_exact")
    )


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


def _statuses(instance: dg.DagsterInstance, run_ids: list[str]) -> dict[str, str]:
    """Each run's status, lower case (``success``), in one query."""
    if not run_ids:
        return {}
    runs = instance.get_runs(filters=dg.RunsFilter(run_ids=run_ids))
    return {run.run_id: run.status.value.lower() for run in runs}


def _partition_order(instance: dg.DagsterInstance) -> dict[str, int]:
    name = collections_partitions.name or ""
    return {key: index for index, key in enumerate(instance.get_dynamic_partitions(name))}


def _row(
    instance: dg.DagsterInstance,
    record: dg.EventLogRecord,
    order: Mapping[str, int],
    partition: str | None,
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
        *(dial.read(metadata) for dial in DIALS),
        _models(metadata),
        *(figure.read(metadata) for figure in FIGURES),
        _quality(metadata),
    )


def _models(metadata: Mapping[str, Any]) -> str:
    """``name docs/s`` per model, from ``model/<name>/docs_per_sec``."""
    parts = []
    for name, figures in md.models_of(metadata).items():
        speed = MODEL_SPEED.read(figures)
        parts.append(f"{name} {speed:.2f}/s" if speed is not None else name)
    return ", ".join(parts)


def _quality(metadata: Mapping[str, Any]) -> str:
    """Per model: ``name verified 0.92 · flagged 3 (prompt_echo 2, hit_max_tokens 1)``."""
    parts = []
    for name, figures in md.models_of(metadata).items():
        verified = md.MODEL_VERIFIED_SHARE.read(figures)
        flagged = md.MODEL_FLAGGED.read(figures)
        if verified is None and flagged is None:
            continue  # a run recorded before pages were checked
        reasons = [
            f"{key.name.removeprefix('flagged_')} {count}"
            for key in REASONS
            if (count := key.read(figures))
        ]
        shown = f"{name} verified {verified:.2f}" if verified is not None else name
        shown += f" · flagged {flagged or 0}"
        parts.append(f"{shown} ({', '.join(reasons)})" if reasons else shown)
    return "; ".join(parts)


def to_json(table: pl.DataFrame) -> str:
    """The rows as a JSON list of objects; ``time`` as ISO 8601 local time."""
    rows = table.with_columns(pl.col("time").dt.strftime("%Y-%m-%dT%H:%M:%S")).to_dicts()
    return json.dumps(rows, ensure_ascii=False, indent=2)


def to_text(table: pl.DataFrame, *, wide: bool = False) -> str:
    """The brief view (:data:`BRIEF`, lines of at most :data:`BRIEF_WIDTH` characters), or with
    ``wide`` the whole table in polars' own format, every column, nothing truncated; run ids
    short in both."""
    short = table.with_columns(pl.col("run_id").str.slice(0, SHORT_RUN_ID))
    return table_text(short) if wide else brief_text(short)


def brief_text(table: pl.DataFrame, width: int = BRIEF_WIDTH) -> str:
    """The :data:`BRIEF` columns as plain aligned text, numbers right-aligned: ``when`` to the
    minute, ``workers`` the count or ``auto``, ``status`` ``ok``, ``N failed`` (documents) or the
    run's status where it did not succeed; the last column cut at ``width``."""
    rows = [[header for header, _ in BRIEF]]
    rows += [_brief(row) for row in table.to_dicts()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(BRIEF) - 1)]
    numeric = {"docs", "seconds", "docs/s", "req/doc", "workers", "claim"}
    lines = []
    for row in rows:
        cells = [
            cell.rjust(size) if header in numeric else cell.ljust(size)
            for (header, _), cell, size in zip(BRIEF, row, widths, strict=False)
        ]
        line = "  ".join([*cells, row[-1]])
        lines.append(line if len(line) <= width else line[: width - 1] + "\u2026")
    return "\n".join(lines)


def _brief(row: dict[str, Any]) -> list[str]:
    def number(value: Any, digits: int = 0) -> str:
        return "" if value is None else f"{value:.{digits}f}" if digits else str(value)

    status = row["status"] or ""
    if status == "success":
        status = f"{row['failed']} failed" if row["failed"] else "ok"
    workers = "auto" if row["workers_auto"] else number(row["workers_per_model"])
    when = row["time"].strftime("%Y-%m-%d %H:%M") if row["time"] is not None else ""
    return [
        when, row["run_id"] or "", number(row["count"]), number(row["duration_s"], 1),
        number(row["docs_per_sec"], 2), number(row["requests_per_doc"], 2), workers,
        number(row["claim_size"]), status,
        row["models"] or "",
    ]  # fmt: skip


def table_text(table: pl.DataFrame) -> str:
    """A table for a terminal, in polars' own format: every row and column, nothing truncated,
    no dtype row or shape line (for `wiki-assets runs` and `wiki-assets check`)."""
    widest = sum(
        max([len(name), *(len(str(value)) for value in table[name].to_list())]) + 3
        for name in table.columns
    )
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=widest + 10,
        fmt_str_lengths=max(widest, 100),
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
    ):
        return str(table)
