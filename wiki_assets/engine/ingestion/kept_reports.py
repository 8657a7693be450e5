"""A run's whole report (:func:`~.figures.report_json`), kept in the wiki's state folder under the
run's id.

A run's recorded figures list at most :data:`~.figures.MAX_LISTED_FAILURES` failures, to stay
readable where they are shown; the kept report lists every failure and every file without text,
and the run's figures name its file. A caller that executed the run reads it from there (the
CLI's JSON), and so can a person who wants the whole list of a run the UI shows. The newest
:data:`KEPT` reports are kept: a daily run's for three months.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from wiki_assets.engine.ingestion.figures import report_json
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.wiki.files import Wiki, write_file

__all__ = ["KEPT", "keep_report", "read_report"]

REPORTS_DIR = "runs"  # in the wiki's state folder
KEPT = 100
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")  # a file name of its own (Dagster's: a UUID)


def keep_report(wiki_root: Path, run_id: str, report: IngestReport) -> Path:
    """Write ``report`` as the run ``run_id``'s (atomically: a reader never sees half of it) and
    drop the oldest beyond :data:`KEPT`; returns the file."""
    if not _RUN_ID.fullmatch(run_id):
        raise ValueError(f"a run id names a file of its own: {run_id!r}")
    wiki = Wiki(wiki_root)
    folder = wiki.state_dir / REPORTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    wiki.scratch.mkdir(parents=True, exist_ok=True)
    target = folder / f"{run_id}.json"
    text = json.dumps(report_json(report), ensure_ascii=False, indent=1)
    write_file(wiki.scratch, target, text.encode("utf-8"))
    kept = sorted(folder.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
    for old in kept[KEPT:]:
        old.unlink(missing_ok=True)
    return target


def read_report(path: Path) -> dict[str, Any]:
    """A kept report, as :func:`~.figures.report_json` made it."""
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return report
