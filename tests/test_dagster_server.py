"""The project as a real Dagster deployment: `dagster dev -w workspace.yaml` (webserver, daemon and
code server) starts on a loopback port with a temporary DAGSTER_HOME holding the project's
dagster.yaml; a backfill of several `wiki_pages` partitions launched through GraphQL with the
endpoints in its run config runs through the queued run coordinator as one run against a simulated
model over HTTP and records count and docs/s per partition; the daemon ticks the
`daily_sync_then_ingest` schedule, which skips because every collection is up to date; the run's
console lines in the server output use the aligned format and no run line uses Dagster's own; and
SIGTERM to the server's process group shuts everything down, leaving no process of this test."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import dagster as dg
import pytest
from conftest import PROJECT, SAMPLE

from wiki_assets.defs.assets import IngestConfig
from wiki_assets.defs.resources import CorpusResource, ModelConfig, SummarizerResource
from wiki_assets.defs.runner import sync_then_ingest
from wiki_assets.engine.local_model import EMBEDDED_MODEL
from wiki_assets.simulator import SimModel, SimServer

pytestmark = pytest.mark.server

LOCATION = "wiki_assets.definitions:defs"
SCHEDULE = {
    "repositoryLocationName": LOCATION,
    "repositoryName": "__repository__",
    "scheduleName": "daily_sync_then_ingest",
}
BACKFILL = ["engineering", "operations", "people"]  # contiguous: one run (single-run policy)
ALIGNED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (INFO |WARNING|ERROR|DEBUG) +\S")
STARTUP_S = 120.0
BACKFILL_S = 150.0
TICK_S = 150.0  # the cron ticks every minute; the daemon evaluates at the minute boundary
SHUTDOWN_S = 60.0

# A process started in the background by a non-interactive shell inherits SIGINT as ignored, and
# `dagster dev` maps SIGTERM onto its SIGINT handler, so it would ignore SIGTERM too. Restore the
# default before exec so the server (and every child it starts) can be stopped with SIGTERM.
LAUNCH = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, '-m', 'dagster', *sys.argv[1:]])"
)

T = TypeVar("T")


@dataclass
class DevServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    home: Path

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/graphql",
            data=json.dumps({"query": query, "variables": variables or {}}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            body = json.load(response)
        assert not body.get("errors"), body["errors"]
        return body["data"]

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def wait_for(what: str, timeout_s: float, probe: Callable[[], T | None], dev: DevServer) -> T:
    """Poll ``probe`` until it returns a value; fail with the server's output on timeout or exit."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if dev.process.poll() is not None:
            pytest.fail(f"dagster dev exited ({dev.process.returncode}):\n{dev.output()[-4000:]}")
        value = probe()
        if value is not None:
            return value
        time.sleep(1.0)
    pytest.fail(f"timed out after {timeout_s:.0f}s waiting for {what}:\n{dev.output()[-4000:]}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_dev(
    tmp_path: Path, home: Path, synced: Path, wiki: Path, env: dict[str, str] | None = None
) -> DevServer:
    port = free_port()
    log = tmp_path / "dagster-dev.log"
    environment = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "WIKI_ASSETS_SYNCED_ROOT": str(synced),
        "WIKI_ASSETS_WIKI_ROOT": str(wiki),
        "WIKI_ASSETS_CRON": "* * * * *",
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCH, "dev", "-w", "workspace.yaml", "-h", "127.0.0.1",
             "-p", str(port)],
            cwd=PROJECT,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, signalled as a whole below
        )  # fmt: skip
    return DevServer(process=process, port=port, log=log, home=home)


def group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        if stat.rsplit(")", 1)[1].split()[2] == str(pgid):
            members.append(int(entry.name))
    return members


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line names ``text`` (every Dagster process of the server gets
    the instance's paths on its command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def stop_dev(dev: DevServer) -> list[int]:
    """SIGTERM to the process group, SIGKILL after a timeout. Returns the pids that SIGTERM left
    running (killed since).

    SIGTERM reaches the code server at the same time as `dagster dev`, whose code server manager
    may start a fresh one before it shuts down itself; that one (in the same group) gets SIGTERM
    too instead of lingering until its heartbeat times out."""
    pgid = dev.process.pid
    deadline = time.monotonic() + SHUTDOWN_S
    signal_group(pgid, signal.SIGTERM)
    try:
        dev.process.wait(timeout=SHUTDOWN_S)
    except subprocess.TimeoutExpired:
        pass
    while group_members(pgid) and time.monotonic() < deadline:
        signal_group(pgid, signal.SIGTERM)
        time.sleep(1.0)
    leftovers = group_members(pgid)
    if leftovers:
        signal_group(pgid, signal.SIGKILL)
        dev.process.wait(timeout=30)
    return leftovers


def test_dagster_dev_backfill_schedule_and_shutdown(tmp_path: Path) -> None:
    synced, wiki, home = tmp_path / "synced", tmp_path / "wiki", tmp_path / "dagster_home"
    shutil.copytree(SAMPLE, synced)
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    documents = {
        name: sum(1 for path in (synced / name).rglob("*") if path.is_file()) for name in BACKFILL
    }
    # The simulator serves the embedded model's id. The schedule plans with the definitions'
    # default summarizer (the embedded model), so pages this model wrote count as current there.
    sim_model = SimModel(model=EMBEDDED_MODEL, per_request_tps=20_000, aggregate_tps=200_000)
    with SimServer(sim_model) as sim:
        models = [{"name": "sim", "base_url": sim.base_url, "model": EMBEDDED_MODEL}]
        # Register the collections and ingest them once before the daemon starts, so that every
        # schedule tick finds them up to date and skips (a tick with work would start the embedded
        # llama.cpp model, not the simulator).
        with dg.DagsterInstance.from_config(str(home)) as instance:
            first = sync_then_ingest(
                instance,
                CorpusResource(synced_root=str(synced), wiki_root=str(wiki)),
                SummarizerResource(models=[ModelConfig(**models[0])]),
                IngestConfig(flush_seconds=0.2),
            )
        assert first.success, first.error
        assert len(first.plan.added) == 5 and first.metadata["count"] > 0

        dev = start_dev(tmp_path, home, synced, wiki)
        try:
            check_server(dev, models, documents)
        finally:
            leftovers = stop_dev(dev)
    assert leftovers == [], f"SIGTERM left {leftovers} running:\n{dev.output()[-4000:]}"
    assert group_members(dev.process.pid) == []
    assert processes_mentioning(str(home)) == []
    assert "Shutting down Dagster services" in dev.output()


def check_server(dev: DevServer, models: list[dict[str, str]], documents: dict[str, int]) -> None:
    def location_loaded() -> bool | None:
        try:
            data = dev.graphql(
                "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
            )
        except (urllib.error.URLError, ConnectionError):
            return None
        entries = data["workspaceOrError"]["locationEntries"]
        loaded = [(entry["name"], entry["loadStatus"]) for entry in entries]
        return True if loaded == [(LOCATION, "LOADED")] else None

    wait_for("the GraphQL endpoint and the code location", STARTUP_S, location_loaded, dev)

    # A backfill of several partitions; the endpoints come from run config, as do the dials
    # (force: redo every page, so the figures do not depend on what ran before) and the console
    # logger that prints the aligned format.
    run_config = {
        "ops": {"wiki_pages": {"config": {"force": True, "flush_seconds": 0.2}}},
        "resources": {"summarizer": {"config": {"models": models}}},
        "loggers": {"console": {"config": {"log_level": "INFO"}}},
    }
    launched = dev.graphql(
        """mutation($params: LaunchBackfillParams!) {
          launchPartitionBackfill(backfillParams: $params) {
            __typename
            ... on LaunchBackfillSuccess { backfillId }
            ... on PythonError { message }
            ... on RunConfigValidationInvalid { errors { message } }
          }
        }""",
        {
            "params": {
                "partitionNames": BACKFILL,
                "assetSelection": [{"path": ["wiki_pages"]}],
                "runConfigData": run_config,
            }
        },
    )["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    backfill_id = launched["backfillId"]

    def backfill_done() -> dict[str, Any] | None:
        backfill = dev.graphql(
            """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
                 ... on PartitionBackfill { status runs(limit: 10) { runId status } } } }""",
            {"id": backfill_id},
        )["partitionBackfillOrError"]
        return None if backfill["status"] in ("REQUESTED", "CANCELING", "FAILING") else backfill

    backfill = wait_for("the backfill to finish", BACKFILL_S, backfill_done, dev)
    assert backfill["status"] == "COMPLETED_SUCCESS", backfill
    (run,) = backfill["runs"]  # one run for the whole range
    assert run["status"] == "SUCCESS"
    run_id = run["runId"]

    events = dev.graphql(
        """query($partitions: [String!]) {
          assetOrError(assetKey: {path: ["wiki_pages"]}) {
            ... on Asset { assetMaterializations(partitions: $partitions) {
              partition runId
              metadataEntries { label
                ... on IntMetadataEntry { intValue }
                ... on FloatMetadataEntry { floatValue } } } } } }""",
        {"partitions": BACKFILL},
    )["assetOrError"]["assetMaterializations"]
    from_backfill = [event for event in events if event["runId"] == run_id]
    assert sorted(event["partition"] for event in from_backfill) == sorted(BACKFILL)
    total = sum(documents.values())
    for event in from_backfill:
        values = {
            entry["label"]: entry.get("intValue", entry.get("floatValue"))
            for entry in event["metadataEntries"]
        }
        assert values["count"] == total, values
        assert values["skipped"] == 0 and values["failed"] == 0
        assert values["partitions"] == len(BACKFILL)
        assert values["model/sim/docs"] == total
        assert values["docs_per_sec"] > 0
        assert values["docs_per_sec"] == pytest.approx(total / values["duration_s"], rel=0.02)

    # The daemon ticks the schedule (every minute here); everything is ingested, so it skips.
    def ticked() -> list[dict[str, Any]] | None:
        schedule = dev.graphql(
            """query($selector: ScheduleSelector!) { scheduleOrError(scheduleSelector: $selector) {
                 ... on Schedule { scheduleState { status
                   ticks(limit: 10) { status skipReason runIds error { message } } } } } }""",
            {"selector": SCHEDULE},
        )["scheduleOrError"]["scheduleState"]
        assert schedule["status"] == "RUNNING"
        return schedule["ticks"] or None

    ticks = wait_for("a schedule tick", TICK_S, ticked, dev)
    for tick in ticks:
        assert tick["status"] == "SKIPPED", tick
        assert "up to date" in tick["skipReason"] and tick["runIds"] == []

    # The run's lines reached the server's console in the aligned format, none in Dagster's own
    # ("<time> - dagster - <LEVEL> - <job> - <run id> - ...").
    output = dev.output().splitlines()
    ours = [line for line in output if "ingest done: " in line or "ingest start: " in line]
    assert len(ours) == 2, output[-40:]
    assert all(ALIGNED.match(line) for line in ours), ours
    assert any(f"ingest done: {total} docs" in line for line in ours)
    assert not [line for line in output if f"- {run_id} -" in line]
