"""The sync step: an optional sync command mirrors the sources into the synced root before it is
observed, its output is logged, and a failing command stops the ingest with a clear message
(exit code 1, nothing written); the daily schedule's sync_job run runs it too."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import dagster as dg
from conftest import Workspace, daily_tick, summarizer_for

from wiki_assets.definitions import build_defs
from wiki_assets.simulator import SimServer


def ingest(workspace: Workspace, sim: SimServer, command: str) -> subprocess.CompletedProcess[str]:
    config = workspace.home.parent / "run.yaml"
    config.write_text(
        json.dumps(
            {
                "resources": {
                    "summarizer": {
                        "config": {
                            "models": [
                                {"name": "sim", "base_url": sim.base_url, "model": sim.sim.model}
                            ]
                        }
                    },
                    "corpus": {"config": {"sync_command": command}},
                },
                "ops": {"wiki_pages": {"config": {"flush_seconds": 0.2}}},
            }
        )
    )
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(workspace.synced),
         "--wiki", str(workspace.wiki), "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home)},
    )  # fmt: skip


def test_sync_command_mirrors_before_observing(workspace: Workspace, sim: SimServer) -> None:
    target = workspace.synced / "legal" / "nda.md"
    script = (
        "import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(exist_ok=True); "
        "p.write_text('# NDA\\n\\nMutual NDA template.'); print('mirrored 1 file')"
    )
    done = ingest(workspace, sim, shlex.join([sys.executable, "-c", script, str(target)]))

    assert done.returncode == 0, done.stderr
    assert "sync | mirrored 1 file" in done.stderr
    assert "legal" in json.loads(done.stdout)["collections"]
    assert (workspace.wiki / "legal" / "nda.md").is_file()


def test_failing_sync_command_stops_the_ingest(workspace: Workspace, sim: SimServer) -> None:
    script = "import sys; print('remote unreachable'); sys.exit(3)"
    done = ingest(workspace, sim, shlex.join([sys.executable, "-c", script]))

    assert done.returncode == 1
    assert "sync command failed with exit code 3 (remote unreachable)" in done.stderr
    assert json.loads(done.stdout)["success"] is False
    assert not workspace.wiki.exists() and sim.snapshot().requests == 0


def test_the_daily_sync_run_runs_the_command_and_a_failure_fails_that_run(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    """The schedule's sync_job run runs the command (the schedule's evaluation never does); a
    failing command fails that run with the command's last line, so no ingest follows it."""
    target = workspace.synced / "legal" / "nda.md"
    script = (
        "import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(exist_ok=True); "
        "p.write_text('# NDA\\n\\nMutual NDA template.'); print('mirrored 1 file')"
    )
    command = shlex.join([sys.executable, "-c", script, str(target)])
    corpus = workspace.corpus.model_copy(update={"sync_command": command})
    tick = daily_tick(build_defs(corpus, summarizer_for(sim)), instance)
    assert "legal" in instance.get_dynamic_partitions("collections")
    (request,) = tick.run_requests
    assert request.tags["dagster/asset_partition_range_start"] != ""

    failing = shlex.join([sys.executable, "-c", "import sys; print('unreachable'); sys.exit(3)"])
    corpus = workspace.corpus.model_copy(update={"sync_command": failing})
    defs = build_defs(corpus, summarizer_for(sim))
    result = defs.resolve_job_def("sync_job").execute_in_process(
        instance=instance, raise_on_error=False
    )
    assert not result.success  # the sensor follows successful sync runs only
    failure = next(event for event in result.all_events if event.is_step_failure)
    error = failure.step_failure_data.error  # type: ignore[union-attr]
    while error.cause is not None:  # Dagster wraps the op's exception
        error = error.cause
    assert "sync command failed with exit code 3 (unreachable)" in error.message
