"""What the commands print as tables: ``wiki-assets runs``' rows (:mod:`.history`) as text, the
brief view a terminal gets by default, the columns users compare in 100 characters
(:data:`BRIEF`), or every column (``--wide``), and as JSON; ``runs --compare``
(:func:`compare_text`); ``wiki-assets check``'s table, one row per check (:func:`audit_table`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import PurePath
from typing import Any

import polars as pl

from wiki_assets.defs.metadata.comparison import RunSummary, columns
from wiki_assets.engine.ingestion.figure import Figure, Shown
from wiki_assets.engine.ingestion.figures import (
    DIAL_FIGURES,
    DOCS_PER_SEC,
    DURATION_S,
    FAILED,
    MODELS,
    MODELS_OUT,
    REQUESTS_PER_DOC,
    RUN_FIGURES,
    UNFINISHED,
)
from wiki_assets.engine.ingestion.model_figures import MODEL_FIGURES
from wiki_assets.engine.wiki.audit import Audit, Outcome, Severity

SHORT_RUN_ID = 8  # as the Dagster UI shows run ids

# The brief view, what a terminal shows by default: (header, column it shows) in order, the
# figures declared for it (Shown.BRIEF: the run's, a model's, a dial) between the run's time and
# id and its status and models. The last one, ``models``, takes what is left of
# :data:`BRIEF_WIDTH` and is cut with … past it.
_FIGURES: tuple[Figure[Any], ...] = (*RUN_FIGURES, *MODEL_FIGURES, *DIAL_FIGURES)
_BRIEF_FIGURES = tuple(figure for figure in _FIGURES if Shown.BRIEF in figure.shown)
BRIEF: tuple[tuple[str, str], ...] = (
    ("when", "time"),
    ("run", "run_id"),
    *((figure.column, figure.name) for figure in _BRIEF_FIGURES),
    ("status", "status"),
    (MODELS, MODELS),
)
_NUMERIC = {figure.column for figure in _BRIEF_FIGURES}  # right-aligned
BRIEF_WIDTH = 100
WIKI_HEADER = ("wiki", "wiki")  # in the brief view before models, once rows of two wikis show
SORT_NAMES = {header: column for header, column in BRIEF}
"""The brief view's headers, which ``--sort`` takes as well as the columns' names."""


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
    minute, ``workers`` each model's, ``status`` ``ok``, ``N failed`` (documents) and ``N models
    out`` (of service), ``stopped``
    (documents left for the next run) or the run's status where it did not succeed; ``wiki``
    (in place of ``req/doc``) before ``models`` when the rows are of more than one wiki; the
    last column cut at ``width``."""
    rows = table.to_dicts()
    columns = list(BRIEF)
    wikis = {row["wiki"] for row in rows if row["wiki"]}
    if len(wikis) > 1:
        # Room for it in the width: req/doc is left to --wide.
        columns = [column for column in columns if column[0] != REQUESTS_PER_DOC.column]
        columns.insert(len(columns) - 1, WIKI_HEADER)
        short = _short_paths(wikis)
        rows = [row | {"wiki": short.get(row["wiki"], "")} for row in rows]
    lines_of = [[header for header, _ in columns]]
    lines_of += [[_cell(row, column) for _, column in columns] for row in rows]
    widths = [max(len(line[i]) for line in lines_of) for i in range(len(columns) - 1)]
    lines = []
    for cells_of in lines_of:
        cells = [
            cell.rjust(size) if header in _NUMERIC else cell.ljust(size)
            for (header, _), cell, size in zip(columns, cells_of, widths, strict=False)
        ]
        line = "  ".join([*cells, cells_of[-1]])
        lines.append(line if len(line) <= width else line[: width - 1] + "\u2026")
    return "\n".join(lines)


def _short_paths(paths: set[str]) -> dict[str, str]:
    """Each path by as few of its last folders as tell it from the others."""
    for depth in range(1, max(len(PurePath(path).parts) for path in paths) + 1):
        short = {path: str(PurePath(*PurePath(path).parts[-depth:])) for path in paths}
        if len(set(short.values())) == len(paths):
            return short
    return {path: path for path in paths}


def _cell(row: dict[str, Any], column: str) -> str:
    """One cell of the brief view."""
    value = row[column]
    if column == "status":
        models_out, failed = row[MODELS_OUT.name], row[FAILED.name]
        out = len(models_out.split(", ")) if models_out else 0
        said = [f"{failed} failed"] if failed else []
        said += [f"{out} model{'s' if out > 1 else ''} out"] if out else []
        if value == "success":
            return ", ".join(said) or "ok"
        return "stopped" if row[UNFINISHED.name] else value or ""
    if column == "time":
        return value.strftime("%Y-%m-%d %H:%M") if value is not None else ""
    if value is None:
        return ""
    if column == DURATION_S.name:
        return f"{value:.1f}"
    if column in (DOCS_PER_SEC.name, REQUESTS_PER_DOC.name):
        return f"{value:.2f}"
    return str(value)


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


def audit_table(audit: Audit) -> pl.DataFrame:
    """One row per check, for ``wiki-assets check``."""
    return pl.DataFrame(
        {
            "check": [outcome.check.name for outcome in audit.outcomes],
            "severity": [str(outcome.check.severity) for outcome in audit.outcomes],
            "checked": [outcome.checked for outcome in audit.outcomes],
            "problems": [len(outcome.findings) for outcome in audit.outcomes],
            "result": [_verdict(outcome) for outcome in audit.outcomes],
        }
    )


def _verdict(outcome: Outcome) -> str:
    if outcome.passed:
        return "passed"
    return "FAILED" if outcome.check.severity is Severity.ERROR else "warning"


def compare_text(runs: Sequence[RunSummary], *, as_json: bool = False) -> str:
    """``runs --compare``: the runs side by side (:func:`~wiki_assets.defs.metadata.comparison.
    columns`), aligned, numbers to the right, and the dials every run shares on a line below;
    or the runs as a JSON list (each with its ``flagged_share`` and every dial)."""
    if as_json:
        listed = [
            asdict(run) | {"time": run.time.isoformat(), "flagged_share": run.flagged_share}
            for run in runs
        ]
        return json.dumps(listed, ensure_ascii=False, indent=2)
    if not runs:
        return "no wiki_pages runs with figures to compare"
    headers, rows, shared = columns(runs)
    left = {"run", "when", "notes"}
    widths = [max(len(line[i]) for line in [headers, *rows]) for i in range(len(headers))]
    lines = [
        "  ".join(
            cell.ljust(size) if header in left else cell.rjust(size)
            for header, cell, size in zip(headers, line, widths, strict=True)
        ).rstrip()
        for line in [headers, *rows]
    ]
    line = "every run:"
    for name, value in shared.items():  # a dial and its value never split between two lines
        item = f"{name} {value}"
        if len(line) + len(item) + 3 > BRIEF_WIDTH:
            lines.append(line + " ·")
            line = "  " + item
        else:
            line += (" · " if line != "every run:" else " ") + item
    if shared:
        lines.append(line)
    return "\n".join(lines)
