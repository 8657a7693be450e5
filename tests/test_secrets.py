"""Secrets: an API key comes only from the environment variable a model names; it reaches the
endpoint, and appears nowhere else: not in the CLI's output and logs, not in Dagster's storage
(run config, event log, metadata, compute logs) and not in any wiki page or state file. The same
for the password in the state store's URL when the store refuses the run."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from conftest import Workspace

from wiki_assets.simulator import SimServer


def files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def cli_ingest(
    workspace: Workspace, *args: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(workspace.synced),
         "--wiki", str(workspace.wiki), "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home), **env},
    )  # fmt: skip


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
    done = cli_ingest(workspace, "--config", str(config), env={"WIKI_GW_KEY": key})

    assert done.returncode == 0, done.stderr
    assert sim.bearer_tokens() == {key}, "the key from the environment was used"
    assert key not in done.stdout and key not in done.stderr
    assert files_containing(workspace.home, key.encode()) == []
    assert files_containing(workspace.wiki, key.encode()) == []
    # The search does read Dagster's storage: the run's metadata is found there.
    assert files_containing(workspace.home, b"docs_per_sec")


@pytest.mark.parametrize("server", ["closed port", "wrong password"])
def test_a_state_store_password_appears_nowhere(
    workspace: Workspace, server: str, request: pytest.FixtureRequest
) -> None:
    """The state store's URL holds a password; when the store refuses, the run stops with an
    error that names the store (host, port, database) and not the password."""
    password = "pw-planted-" + secrets.token_hex(8)
    if server == "closed port":
        url = f"postgresql://wiki:{password}@127.0.0.1:9/wiki"
    else:
        real = urlsplit(request.getfixturevalue("postgres_url"))
        url = f"postgresql://{real.username}:{password}@{real.hostname}:{real.port}{real.path}"
    done = cli_ingest(workspace, env={"WIKI_ASSETS_STATE_URL": url})
    assert done.returncode == 1, done.stderr
    error = json.loads(done.stdout)["error"]
    assert error.startswith("state store postgres ") and "unavailable" in error
    assert password not in done.stdout and password not in done.stderr
    assert files_containing(workspace.home, password.encode()) == []
    assert not workspace.wiki.exists() or files_containing(workspace.wiki, password.encode()) == []
