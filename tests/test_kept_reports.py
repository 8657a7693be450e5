"""A run's whole report, kept in the wiki's state folder by run id (what the CLI's JSON is)."""

import os
from pathlib import Path

import pytest

from wiki_assets.engine.config import Dials
from wiki_assets.engine.ingestion.kept_reports import KEPT, keep_report, read_report
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.wiki.files import STATE_DIR


def _report(count: int) -> IngestReport:
    report = IngestReport(collections=["people"], dials=Dials(), models=[])
    report.count = count
    report.failed = [{"path": f"people/{n}.bin", "reason": "binary file"} for n in range(count)]
    return report


def test_a_kept_report_lists_what_the_run_reported_in_the_wikis_state_folder(
    tmp_path: Path,
) -> None:
    kept = keep_report(tmp_path / "wiki", "1b2c-3d", _report(3))

    assert kept == tmp_path / "wiki" / STATE_DIR / "runs" / "1b2c-3d.json"
    figures = read_report(kept)
    assert figures["count"] == 3 and figures["collections"] == ["people"]
    assert [failure["path"] for failure in figures["failed"]] == [
        "people/0.bin", "people/1.bin", "people/2.bin"
    ]  # fmt: skip
    assert not list((tmp_path / "wiki" / STATE_DIR / "tmp").iterdir())  # written, then renamed


def test_only_the_newest_reports_are_kept(tmp_path: Path) -> None:
    folder = tmp_path / "wiki" / STATE_DIR / "runs"
    for n in range(KEPT + 2):
        path = keep_report(tmp_path / "wiki", f"run-{n:03}", _report(1))
        os.utime(path, (1_000_000 + n, 1_000_000 + n))  # one a second: their order is certain
    keep_report(tmp_path / "wiki", "newest", _report(1))

    names = {path.stem for path in folder.glob("*.json")}
    assert len(names) == KEPT and "newest" in names
    assert {"run-000", "run-001", "run-002"}.isdisjoint(names)
    assert f"run-{KEPT + 1:03}" in names


@pytest.mark.parametrize("run_id", ["../escape", "a/b", "", ".hidden"])
def test_a_run_id_that_is_no_file_name_of_its_own_is_refused(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(ValueError, match="run id"):
        keep_report(tmp_path / "wiki", run_id, _report(0))
    assert not (tmp_path / "wiki" / STATE_DIR / "runs").exists()
