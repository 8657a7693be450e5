"""Past ``wiki_pages`` materializations as one table row per run, to compare tuning runs.

Every partition a run materializes gets the same metadata (the run's figures), so a single-run
backfill of many collections is one row with its partitions joined. Read through the instance's
public API from the newest event backwards, so only the runs shown are read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

import dagster as dg
import polars as pl

from wiki_assets.defs.partitions import collections_partitions

ASSET_KEY = dg.AssetKey("wiki_pages")
PAGE_SIZE = 500
SHORT_RUN_ID = 8  # as the Dagster UI shows run ids

DIALS = ("workers_per_model", "claim_size", "flush_seconds", "max_tokens")
FIGURES = ("count", "skipped", "failed", "duration_s", "docs_per_sec")

SCHEMA: dict[str, Any] = {
    "time": pl.Datetime("us"),
    "partition": pl.String,
    "run_id": pl.String,
    "workers_per_model": pl.Int64,
    "claim_size": pl.Int64,
    "flush_seconds": pl.Float64,
    "max_tokens": pl.Int64,
    "models": pl.String,
    "count": pl.Int64,
    "skipped": pl.Int64,
    "failed": pl.Int64,
    "duration_s": pl.Float64,
    "docs_per_sec": pl.Float64,
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

    ``time`` is when the run's materializations were recorded (local time), ``partition`` the
    run's partitions joined with ``,`` in partition order, ``run_id`` the full id,
    ``workers_per_model`` 0 for ``auto``, ``models`` each model's name and docs/s.
    """
    if sort not in SCHEMA:
        raise ValueError(f"unknown column {sort!r}; one of {', '.join(COLUMNS)}")
    if limit is not None and limit < 1:
        raise ValueError("limit must be at least 1")
    runs: dict[str, list[dg.EventLogRecord]] = {}
    for record in _records(instance, partition):
        if record.run_id not in runs and limit is not None and len(runs) == limit:
            break  # events arrive newest first: every event of the shown runs has been read
        runs.setdefault(record.run_id, []).append(record)
    order = _partition_order(instance)
    rows = [_row(run_id, records, order) for run_id, records in runs.items()]
    # Shown to the second, but two runs can end within one: the exact time breaks ties.
    exact = [max(record.timestamp for record in records) for records in runs.values()]
    return (
        pl.DataFrame(rows, schema=SCHEMA, orient="row")
        .with_columns(pl.Series("_exact", exact, dtype=pl.Float64))
        .sort([sort, "_exact"], descending=descending, nulls_last=True)
        .drop("_exact")
    )


def _records(instance: dg.DagsterInstance, partition: str | None) -> Iterator[dg.EventLogRecord]:
    records_filter = dg.AssetRecordsFilter(
        asset_key=ASSET_KEY, asset_partitions=[partition] if partition is not None else None
    )
    cursor: str | None = None
    while True:
        result = instance.fetch_materializations(records_filter, limit=PAGE_SIZE, cursor=cursor)
        yield from result.records
        if not result.has_more:
            return
        cursor = result.cursor


def _partition_order(instance: dg.DagsterInstance) -> dict[str, int]:
    name = collections_partitions.name or ""
    return {key: index for index, key in enumerate(instance.get_dynamic_partitions(name))}


def _row(
    run_id: str, records: Sequence[dg.EventLogRecord], order: Mapping[str, int]
) -> tuple[Any, ...]:
    latest = records[0]  # newest first
    materialization = latest.asset_materialization
    metadata = {
        key: value.value
        for key, value in (materialization.metadata if materialization else {}).items()
    }
    keys = {record.partition_key for record in records if record.partition_key is not None}
    partitions = sorted(keys, key=lambda key: (order.get(key, len(order)), key))
    return (
        datetime.fromtimestamp(max(record.timestamp for record in records)).replace(microsecond=0),
        ",".join(partitions),
        run_id,
        *(_number(metadata.get(dial)) for dial in DIALS),
        _models(metadata),
        *(_number(metadata.get(figure)) for figure in FIGURES),
    )


def _number(value: Any) -> float | int | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _models(metadata: Mapping[str, Any]) -> str:
    """``name docs/s`` per model from the JSON ``models`` entry (per-model Floats as a fallback)."""
    models = metadata.get("models")
    if not isinstance(models, Mapping):
        return ""
    parts = []
    for name, stats in models.items():
        speed = stats.get("docs_per_sec") if isinstance(stats, Mapping) else None
        if speed is None:
            speed = metadata.get(f"model/{name}/docs_per_sec")
        parts.append(f"{name} {speed:.2f}/s" if isinstance(speed, int | float) else str(name))
    return ", ".join(parts)


def to_json(table: pl.DataFrame) -> str:
    """The rows as a JSON list of objects; ``time`` as ISO 8601 local time."""
    rows = table.with_columns(pl.col("time").dt.strftime("%Y-%m-%dT%H:%M:%S")).to_dicts()
    return json.dumps(rows, ensure_ascii=False, indent=2)


def to_text(table: pl.DataFrame) -> str:
    """The table in polars' own format, every row and column, nothing truncated; run ids short."""
    shown = table.with_columns(pl.col("run_id").str.slice(0, SHORT_RUN_ID))
    widest = sum(
        max([len(name), *(len(str(value)) for value in shown[name].to_list())]) + 3
        for name in shown.columns
    )
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_width_chars=widest + 10,
        fmt_str_lengths=max(widest, 100),
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
    ):
        return str(shown)
