"""The sync step: an optional sync command mirrors the sources into the synced root before it is
observed, its output is logged, and a failing command stops the ingest with a clear message
(exit code 1, nothing written)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

from conftest import Workspace

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
