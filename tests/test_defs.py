"""The Dagster definitions load as `dagster dev -w workspace.yaml` and `dg` load them, with the
asset keys, resource key, job, schedule and partitions that other tools rely on; importing the
module that holds them reads nothing (no project file, no environment variable) until the location
loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from wiki_assets.definitions import defs as load_defs

PROJECT = Path(__file__).resolve().parents[1]


def test_definitions_load_with_the_fixed_names() -> None:
    defs = load_defs()
    dg.Definitions.validate_loadable(defs)
    graph = defs.resolve_asset_graph()
    assert {key.to_user_string() for key in graph.get_all_asset_keys()} == {
        "synced_documents",
        "wiki_pages",
        "wiki_index",
        "wiki_verification",
        "wiki_digest",
    }
    wiki_pages = graph.get(dg.AssetKey("wiki_pages"))
    assert wiki_pages.parent_keys == {dg.AssetKey("synced_documents")}
    assert isinstance(wiki_pages.partitions_def, dg.DynamicPartitionsDefinition)
    assert wiki_pages.partitions_def.name == "collections"
    assert not graph.get(dg.AssetKey("synced_documents")).is_materializable
    assert set(defs.resources or {}) >= {"summarizer", "corpus"}
    schedule = defs.resolve_schedule_def("daily_sync_then_ingest")
    assert schedule.cron_schedule == "0 6 * * *" and schedule.job_name == "sync_job"
    assert defs.resolve_sensor_def("ingest_after_sync") is not None
    # The verification pass runs after the pages and the index, in the same job, partitioned and
    # backfilled as the pages are.
    verification = graph.get(dg.AssetKey("wiki_verification"))
    assert verification.parent_keys == {dg.AssetKey("wiki_index")}
    assert verification.partitions_def == wiki_pages.partitions_def
    assert verification.backfill_policy == wiki_pages.backfill_policy
    ingest_job = defs.resolve_job_def("ingest_job")
    assert {key.to_user_string() for key in ingest_job.asset_layer.executable_asset_keys} == {
        "wiki_pages", "wiki_index", "wiki_verification",
    }  # fmt: skip
    wiki_digest = graph.get(dg.AssetKey("wiki_digest"))
    assert wiki_digest.parent_keys == {dg.AssetKey("wiki_index")}
    assert isinstance(wiki_digest.partitions_def, dg.DailyPartitionsDefinition)
    assert wiki_digest.partitions_def.timezone == "UTC"
    assert defs.resolve_job_def("wiki_digest_job") is not None
    assert defs.resolve_sensor_def("wiki_digest_after_ingest") is not None


def test_dagster_definitions_validate_passes_on_the_workspace() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-w", "workspace.yaml"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_importing_the_definitions_reads_nothing(tmp_path: Path) -> None:
    """A `@dg.definitions` function: the import succeeds with a bad project file and a bad
    environment variable, which only the location's load reads."""
    done = subprocess.run(
        [sys.executable, "-c", "import wiki_assets.definitions"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "WIKI_ASSETS_CONFIG": str(tmp_path / "missing.yaml"),
            "WIKI_ASSETS_COLLECTIONS_PER_RUN": "x",
        },
    )
    assert done.returncode == 0, done.stderr


def test_dg_check_defs_passes_on_the_project() -> None:
    """`dg check defs` (CI runs it too) loads the location the [tool.dg] section names."""
    dg_cli = Path(sys.executable).with_name("dg")
    done = subprocess.run(
        [str(dg_cli), "check", "defs"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
