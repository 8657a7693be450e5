"""`wiki-assets ingest` runs sync-then-ingest through Dagster in a subprocess, as a user would: its
log lines use the aligned format, --json prints the promised fields, and the exit code says whether
everything was summarized or skipped (0), some documents failed (2) or the run failed (1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import dagster as dg
import pytest
import yaml
from conftest import NO_E5, Workspace, run_cli

from wiki_assets.defs.metadata.run_figures import MAX_LISTED_FAILURES, plain
from wiki_assets.simulator import SimServer

LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (INFO |WARNING|ERROR) {1,3} \S")


def write_config(path: Path, models: list[dict[str, object]], **dials: object) -> Path:
    config = {
        "resources": {"summarizer": {"config": {"models": models, **NO_E5}}},
        "ops": {"wiki_pages": {"config": {"flush_seconds": 0.2, **dials}}},
    }
    path.write_text(yaml.safe_dump(config))
    return path


def cli(workspace: Workspace, *args: str, env: dict[str, str] | None = None):
    return run_cli(workspace, "ingest", *args, env=env)


def sim_model(sim: SimServer, **extra: object) -> dict[str, object]:
    return {"name": "sim", "base_url": sim.base_url, "model": sim.sim.model, **extra}


def test_ingest_json_and_exit_code_zero(workspace: Workspace, sim: SimServer) -> None:
    config = write_config(workspace.home.parent / "run.yaml", [sim_model(sim)], claim_size=8)
    done = cli(workspace, "--config", str(config), "--json")

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    total = len(workspace.documents())
    assert summary["count"] == total and summary["skipped"] == 0 and summary["failed"] == []
    assert summary["duration_s"] > 0 and summary["docs_per_sec"] > 0
    assert summary["models"]["sim"]["docs"] == total
    lines = done.stderr.splitlines()
    assert any(
        "ingest start: 1 models (sim ×4) · 4 workers/model · claim 8 · flush 0.2s" in x
        for x in lines
    )
    assert any(f"ingest done: {total} docs · " in line for line in lines)
    assert all(LINE.match(line) for line in lines if line.strip()), done.stderr

    again = cli(workspace, "--config", str(config), "--json")
    assert again.returncode == 0
    assert json.loads(again.stdout)["skipped"] == total


def test_failed_documents_exit_two_with_reasons(workspace: Workspace, sim: SimServer) -> None:
    (workspace.synced / "product" / "logo.png.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    config = write_config(workspace.home.parent / "run.yaml", [sim_model(sim)])
    done = cli(workspace, "--config", str(config), "--json")

    assert done.returncode == 2, done.stderr
    summary = json.loads(done.stdout)
    assert summary["failed"] == [
        {"path": "product/logo.png.txt", "reason": "binary file (contains NUL bytes)"}
    ]
    assert summary["count"] == len(workspace.documents()) - 1


def test_run_failure_exits_one(workspace: Workspace, sim: SimServer) -> None:
    # The key's variable is not set, so the fleet cannot be built: the run itself fails.
    config = write_config(
        workspace.home.parent / "run.yaml", [sim_model(sim, api_key_env="WIKI_TEST_MISSING_KEY")]
    )
    done = cli(workspace, "--config", str(config), "--json", env={"WIKI_TEST_MISSING_KEY": ""})

    assert done.returncode == 1
    summary = json.loads(done.stdout)
    assert summary["success"] is False
    assert "WIKI_TEST_MISSING_KEY is not set" in summary["error"]


def test_a_fleet_that_cannot_be_reached_ends_with_one_line_per_model(
    workspace: Workspace,
) -> None:
    # Nothing listens on port 9: the run is given up at once (not after give_up_after_s), exit 1,
    # and the reason names each model's URL once in the run's log, without Dagster's follow-on
    # block of ERROR lines (steps skipped, run failed).
    models = [
        {"name": name, "base_url": f"http://127.0.0.1:9/{name}/v1", "model": "m"}
        for name in ("vllm", "gateway")
    ]
    config = write_config(workspace.home.parent / "down.yaml", models)
    done = cli(workspace, "--config", str(config))
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if "  ERROR  " in line]
    assert len(errors) == 2, errors  # the run's reason, and the CLI's last line
    assert "Dependencies for step" not in done.stderr and "Execution of run" not in done.stderr
    for name in ("vllm", "gateway"):
        url = f"{name} at http://127.0.0.1:9/{name}/v1: connection failed"
        assert done.stderr.count(url) == 2, done.stderr  # the engine's line and the CLI's
    assert "dagster._core" not in done.stderr


def test_bad_config_names_the_field(workspace: Workspace, sim: SimServer) -> None:
    config = write_config(
        workspace.home.parent / "run.yaml", [sim_model(sim, base_url="gpu1:8000")], claim_size=0
    )
    done = cli(workspace, "--config", str(config))

    assert done.returncode == 1
    assert "base_url" in done.stderr and "must be an http(s) URL" in done.stderr
    assert not workspace.wiki.exists()


def test_json_lists_every_failure_past_what_metadata_keeps(
    workspace: Workspace, sim: SimServer
) -> None:
    # More failures than the run's metadata lists: the JSON is the engine's report, whole.
    # (Text files that are not text: a binary file of no known kind would hold no text.)
    blobs = workspace.synced / "blobs"
    blobs.mkdir()
    for index in range(MAX_LISTED_FAILURES + 5):
        (blobs / f"blob-{index:03}.txt").write_bytes(b"\x7fELF\x02\x01\x00\x00" + bytes([index]))
    config = write_config(workspace.home.parent / "run.yaml", [sim_model(sim)])
    done = cli(workspace, "--config", str(config), "--json")

    assert done.returncode == 2, done.stderr
    summary = json.loads(done.stdout)
    expected = [
        {"path": f"blobs/blob-{index:03}.txt", "reason": "binary file (contains NUL bytes)"}
        for index in range(MAX_LISTED_FAILURES + 5)
    ]
    assert sorted(summary["failed"], key=lambda failure: failure["path"]) == expected
    assert summary["count"] == len(workspace.documents()) - len(expected)
    assert summary["models"]["sim"]["docs"] == summary["count"]

    # The run's metadata counts every failure and lists the first MAX_LISTED_FAILURES.
    with dg.DagsterInstance.from_config(str(workspace.home)) as instance:
        (record,) = instance.fetch_observations(dg.AssetKey("wiki_pages"), limit=10).records
        (blob_partition,) = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("wiki_pages"), asset_partitions=["blobs"]),
            limit=1,
        ).records
    assert record.run_id == summary["run_id"]
    figures = plain(record.asset_observation.metadata)  # type: ignore[union-attr]
    assert figures["failed"] == len(expected)
    assert figures["failed_documents"] == summary["failed"][:MAX_LISTED_FAILURES]
    # ...and names the run's whole report, kept in the wiki's state folder: the JSON's source.
    kept = Path(figures["report_file"])
    assert kept.is_relative_to(workspace.wiki) and kept.name == f"{summary['run_id']}.json"
    assert json.loads(kept.read_text(encoding="utf-8"))["failed"] == summary["failed"]
    counts = plain(blob_partition.asset_materialization.metadata)  # type: ignore[union-attr]
    assert counts["failed"] == counts["documents"] == len(expected)


def test_ingest_help_says_how_to_redo_pages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`ingest --help` tells a user how to redo pages that are current (all of them, or those of
    given models) with a file they can copy, and speaks no Dagster ("resources + ops")."""
    from wiki_assets.cli import main

    with pytest.raises(SystemExit) as done:
        main(["ingest", "--help"])
    assert done.value.code == 0
    said = capsys.readouterr().out
    assert "redo pages" in said
    assert "force: true" in said and "redo_models: [" in said
    assert "wiki-assets ingest --config redo.yaml" in said
    assert "resources + ops" not in said and "run config" not in said
    # The example is a file that loads: it asks for what the help says it does.
    from wiki_assets.defs.settings import load_settings

    redo = tmp_path / "redo.yaml"
    redo.write_text(said[said.index("# redo.yaml") :].split("\n\n")[0])
    assert load_settings(redo).dials.force is True
    redo.write_text(said[said.index("Only the pages") :].split("\n\n")[1])
    dials = load_settings(redo).dials
    assert not dials.force and "Qwen/Qwen2.5-7B-Instruct" in dials.redo_models
