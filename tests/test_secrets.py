"""Secrets: an API key comes only from the environment variable a model names; it reaches the
endpoint, and appears nowhere else: not in the CLI's output and logs, not in Dagster's storage
(run config, event log, metadata, compute logs) and not in any wiki page or state file."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import Workspace

from wiki_assets.simulator import SimServer


def files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_planted_key_reaches_the_endpoint_and_nothing_else(
    workspace: Workspace, sim: SimServer
) -> None:
    key = "sk-planted-" + secrets.token_hex(16)
    config = workspace.home.parent / "run.yaml"
    model = {"name": "gw", "base_url": sim.base_url, "model": sim.sim.model}
    config.write_text(
        yaml.safe_dump(
            {
                "resources": {
                    "summarizer": {"config": {"models": [{**model, "api_key_env": "WIKI_GW_KEY"}]}}
                },
                "ops": {"wiki_pages": {"config": {"flush_seconds": 0.2}}},
            }
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(workspace.synced),
         "--wiki", str(workspace.wiki), "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home), "WIKI_GW_KEY": key},
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert sim.bearer_tokens() == {key}, "the key from the environment was used"
    assert key not in done.stdout and key not in done.stderr
    assert files_containing(workspace.home, key.encode()) == []
    assert files_containing(workspace.wiki, key.encode()) == []
    # The search does read Dagster's storage: the run's metadata is found there.
    assert files_containing(workspace.home, b"docs_per_sec")
