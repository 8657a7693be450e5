"""The project as a real Dagster deployment: `dagster dev -w workspace.yaml` (webserver, daemon and
code server) starts on a loopback port with a temporary DAGSTER_HOME holding the project's
dagster.yaml and WIKI_ASSETS_CONFIG naming a project file with a simulated fleet; a backfill of
several `wiki_pages` partitions launched through GraphQL with no resources in its run config runs
through the queued run coordinator as one run on that fleet (counted at the server), records each
partition's own counts and the run's figures once, the automation sensor rebuilds `wiki_index`
and the digest sensor builds the day's digest after it; the daemon ticks the
`daily_sync_then_ingest` schedule, which starts a `sync_job` run, and once a document changed the
sensor after that run starts one run with the file's dials on the file's fleet; a CLI run
re-executes through GraphQL as a run of the loaded job, on the CLI run's own fleet; the runs'
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
from conftest import PROJECT, SAMPLE, SAMPLE_COLLECTIONS, write_project

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.names import AUTOMATION_SENSOR
from wiki_assets.defs.resources import ModelConfig, SummarizerResource
from wiki_assets.defs.settings import load_settings
from wiki_assets.defs.sync import INGEST_SENSOR
from wiki_assets.simulator import SimModel, SimServer

pytestmark = pytest.mark.server

LOCATION = "wiki_assets.definitions:defs"
REPOSITORY = {"repositoryLocationName": LOCATION, "repositoryName": "__repository__"}
SCHEDULE = {**REPOSITORY, "scheduleName": "daily_sync_then_ingest"}
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

    def location_loaded(self) -> bool | None:
        """True once the project's code location is loaded (None while the server starts)."""
        try:
            data = self.graphql(
                "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
            )
        except (urllib.error.URLError, ConnectionError):
            return None
        entries = data["workspaceOrError"]["locationEntries"]
        loaded = [(entry["name"], entry["loadStatus"]) for entry in entries]
        return True if loaded == [(LOCATION, "LOADED")] else None

    def automation_evaluated_after(self, moment: float) -> Callable[[], bool | None]:
        """A probe: True once the automation sensor has finished a tick that began after
        ``moment`` (a Unix time)."""

        def probe() -> bool | None:
            sensor = self.graphql(
                """query($selector: SensorSelector!) { sensorOrError(sensorSelector: $selector) {
                     ... on Sensor { sensorState { ticks(limit: 5) { status timestamp } } } } }""",
                {"selector": {**REPOSITORY, "sensorName": AUTOMATION_SENSOR}},
            )["sensorOrError"]
            ticks = sensor["sensorState"]["ticks"]
            done = [t for t in ticks if t["status"] in ("SUCCESS", "SKIPPED")]
            return True if any(tick["timestamp"] > moment for tick in done) else None

        return probe


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
    sim_model = SimModel(model="sim-fast", per_request_tps=20_000, aggregate_tps=200_000)
    with SimServer(sim_model) as sim, SimServer(sim_model) as tuned:
        # The deployment's project file: the fleet and the dials, nothing in any run config.
        project = write_project(
            tmp_path / "wiki_assets.yaml", sim, synced, wiki, flush_seconds=0.2, claim_size=4
        )
        settings = load_settings(project)
        # Register the collections and ingest them once before the daemon starts, as a CLI tuning
        # run on another server would (same model id, so the pages count as the file fleet's).
        tuning = SummarizerResource(
            models=[ModelConfig(name="sim", base_url=tuned.base_url, model="sim-fast")]
        )
        with dg.DagsterInstance.from_config(str(home)) as instance:
            first = sync_then_ingest(instance, settings.corpus, tuning, settings.dials)
        assert first.success, first.error
        assert len(first.plan.added) == len(SAMPLE_COLLECTIONS) and first.metadata["count"] > 0

        dev = start_dev(tmp_path, home, synced, wiki, {"WIKI_ASSETS_CONFIG": str(project)})
        try:
            check_server(dev, sim, synced, documents, lambda: reexecute(dev, first.run_id, tuned))
        finally:
            leftovers = stop_dev(dev)
    assert leftovers == [], f"SIGTERM left {leftovers} running:\n{dev.output()[-4000:]}"
    assert group_members(dev.process.pid) == []
    assert processes_mentioning(str(home)) == []
    assert "Shutting down Dagster services" in dev.output()


def reexecute(dev: DevServer, run_id: str | None, tuned: SimServer) -> None:
    """A CLI run re-executes from the UI as a run of the loaded job, on the CLI run's own fleet."""
    launched = dev.graphql(
        """mutation($params: ReexecutionParams!) {
          launchRunReexecution(reexecutionParams: $params) {
            __typename
            ... on LaunchRunSuccess { run { runId } }
            ... on PythonError { message }
            ... on RunConfigValidationInvalid { errors { message } }
          }
        }""",
        {"params": {"parentRunId": run_id, "strategy": "ALL_STEPS"}},
    )["launchRunReexecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    child = launched["run"]["runId"]

    def finished() -> dg.DagsterRun | None:
        with dg.DagsterInstance.from_config(str(dev.home)) as instance:
            found = instance.get_run_by_id(child)
        return found if found is not None and found.is_finished else None

    run = wait_for("the re-execution to finish", BACKFILL_S, finished, dev)
    assert run.status == dg.DagsterRunStatus.SUCCESS, dev.output()[-3000:]
    assert run.remote_job_origin is not None
    assert run.remote_job_origin.location_name == LOCATION
    models = run.run_config["resources"]["summarizer"]["config"]["models"]
    assert [model["base_url"] for model in models] == [tuned.base_url]


def materializations(home: Path, asset: str) -> int:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return len(instance.fetch_materializations(dg.AssetKey(asset), limit=100).records)


def check_server(
    dev: DevServer,
    sim: SimServer,
    synced: Path,
    documents: dict[str, int],
    then: Callable[[], None],
) -> None:
    wait_for("the GraphQL endpoint and the code location", STARTUP_S, dev.location_loaded, dev)
    then()
    # Dagster's eager condition sees what changed between two of the sensor's evaluations as one
    # update: pages and the index rebuilt by the run above (or the sensor's first evaluation,
    # which only sets its baseline) in the same interval as the backfill's pages would hide them.
    # So the backfill starts once the sensor has looked after the run (as a user's would, 30 s on).
    wait_for(
        "the automation sensor to evaluate after the run",
        TICK_S,
        dev.automation_evaluated_after(time.time()),
        dev,
    )

    # A backfill of several partitions. Its run config has no resources: the fleet is the project
    # file's. force redoes every page (so the figures do not depend on what ran before); the
    # console logger prints the aligned format.
    run_config = {
        "ops": {"wiki_pages": {"config": {"force": True, "flush_seconds": 0.2}}},
        "loggers": {"console": {"config": {"log_level": "INFO"}}},
    }
    answered = sim.snapshot().answered
    indexed_before = materializations(dev.home, "wiki_index")
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
    total = sum(documents.values())
    assert sim.snapshot().answered == answered + total, "the backfill ran on the file's fleet"

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
    for event in from_backfill:
        values = {
            entry["label"]: entry.get("intValue", entry.get("floatValue"))
            for entry in event["metadataEntries"]
        }
        # Each partition's own counts, not the run's totals.
        own = documents[event["partition"]]
        assert values["documents"] == values["summarized"] == own, values
        assert values["skipped"] == 0 and values["failed"] == 0
    with dg.DagsterInstance.from_config(str(dev.home)) as instance:
        records = instance.fetch_observations(dg.AssetKey("wiki_pages"), limit=20).records
    (observation,) = [r.asset_observation for r in records if r.run_id == run_id]
    assert observation is not None
    figures = md.plain(observation.metadata)  # the tables' cells as keys (model/sim/docs)
    assert figures["count"] == figures["model/sim/docs"] == total
    assert figures["partitions"] == len(BACKFILL)
    assert figures["docs_per_sec"] == pytest.approx(total / figures["duration_s"], rel=0.02)

    # The backfill selected wiki_pages alone; the automation sensor (on by default) rebuilds
    # wiki_index after it with no further action.
    wait_for(
        "wiki_index to be rebuilt after the backfill",
        TICK_S,
        lambda: materializations(dev.home, "wiki_index") > indexed_before or None,
        dev,
    )
    # The backfill ran as Dagster's __ASSET_JOB; the digest sensor follows it all the same.
    with dg.DagsterInstance.from_config(str(dev.home)) as instance:
        backfill_run = instance.get_run_by_id(run_id)
    assert backfill_run is not None and backfill_run.job_name == "__ASSET_JOB"

    def digest_after_backfill() -> dg.DagsterRun | None:
        with dg.DagsterInstance.from_config(str(dev.home)) as instance:
            runs = instance.get_runs(dg.RunsFilter(job_name="wiki_digest_job"))
        after = [r for r in runs if r.tags.get("dagster/run_key", "").endswith(f"after {run_id}")]
        return after[0] if after and after[0].is_finished else None

    digest_run = wait_for("the digest after the backfill", TICK_S, digest_after_backfill, dev)
    assert digest_run.status == dg.DagsterRunStatus.SUCCESS

    # The daemon ticks the schedule every minute: a sync_job run each time. With one document
    # changed, the sensor after that sync requests one run for its collection with the file's
    # dials, and that run asks the file's fleet.
    edited = synced / "people" / "leave-policy.md"
    edited.write_text(edited.read_text() + "\nCarry-over is now 7 days.\n")
    answered = sim.snapshot().answered

    def ingested_after_sync() -> str | None:
        # Each tick starts a sync_job run; after one that finds the change, the sensor requests
        # the ingest run.
        with dg.DagsterInstance.from_config(str(dev.home)) as instance:
            runs = instance.get_runs(
                dg.RunsFilter(job_name="ingest_job", tags={"dagster/sensor_name": INGEST_SENSOR})
            )
        return runs[0].run_id if runs else None

    tick_run = wait_for("an ingest run after a sync run", TICK_S, ingested_after_sync, dev)
    schedule = dev.graphql(
        """query($selector: ScheduleSelector!) { scheduleOrError(scheduleSelector: $selector) {
             ... on Schedule { scheduleState { status
               ticks(limit: 10) { status runIds error { message } } } } } }""",
        {"selector": SCHEDULE},
    )["scheduleOrError"]["scheduleState"]
    assert schedule["status"] == "RUNNING"
    for tick in schedule["ticks"]:  # each tick asks for a sync run, nothing else
        assert tick["status"] in ("SUCCESS", "STARTED"), tick
    with dg.DagsterInstance.from_config(str(dev.home)) as instance:
        syncs = instance.get_runs(dg.RunsFilter(job_name="sync_job"))
    assert syncs and all(run.status != dg.DagsterRunStatus.FAILURE for run in syncs)

    def finished() -> dg.DagsterRun | None:
        with dg.DagsterInstance.from_config(str(dev.home)) as instance:
            found = instance.get_run_by_id(tick_run)
        return found if found is not None and found.is_finished else None

    tick = wait_for("the scheduled run to finish", BACKFILL_S, finished, dev)
    assert tick.status == dg.DagsterRunStatus.SUCCESS
    assert tick.run_config["ops"]["wiki_pages"]["config"]["claim_size"] == 4
    assert sim.snapshot().answered == answered + 1, "the scheduled run asked the file's fleet"

    # The runs' lines reached the server's console in the aligned format, none in Dagster's own
    # ("<time> - dagster - <LEVEL> - <job> - <run id> - ...").
    output = dev.output().splitlines()
    ours = [line for line in output if "ingest done: " in line or "ingest start: " in line]
    assert len(ours) == 6, output[-40:]  # the re-execution, the backfill, the scheduled run
    assert all(ALIGNED.match(line) for line in ours), ours
    assert any(f"ingest done: {total} docs" in line for line in ours)
    assert not [line for line in output if f"- {run_id} -" in line]


def test_a_run_terminated_through_graphql_ends_canceled_with_its_locks_freed(
    tmp_path: Path,
) -> None:
    """The UI's "Terminate" (GraphQL ``terminateRun``) reaches the run as a signal: the engine
    stops its requests, keeps what came back, releases the collection's lock, and Dagster marks
    the run canceled."""
    synced, wiki, home = tmp_path / "synced", tmp_path / "wiki", tmp_path / "dagster_home"
    shutil.copytree(SAMPLE, synced)
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    # About 3 s a document, one at a time: the run is still busy when it is terminated.
    slow = SimModel(model="sim-slow", per_request_tps=60, aggregate_tps=60, max_batch=1)
    with SimServer(slow) as sim:
        project = write_project(
            tmp_path / "wiki_assets.yaml", sim, synced, wiki, workers_per_model=1, claim_size=1
        )
        from wiki_assets.defs.names import collections_partitions

        with dg.DagsterInstance.from_config(str(home)) as instance:
            instance.add_dynamic_partitions(collections_partitions.name or "", ["people"])
        # The schedule is not under test here, and must not tick: with every document new, its
        # run (the whole sample, a few minutes on this model) would hold the one run slot, and the
        # backfill's run would wait behind it.
        quiet = {"WIKI_ASSETS_CONFIG": str(project), "WIKI_ASSETS_CRON": "0 0 1 1 *"}
        dev = start_dev(tmp_path, home, synced, wiki, quiet)
        try:
            run_id = _launch_and_terminate(dev, sim)
        finally:
            stop_dev(dev)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        run = instance.get_run_by_id(run_id)
        messages = [entry.message for entry in instance.all_logs(run_id)]
    assert run is not None and run.status == dg.DagsterRunStatus.CANCELED, messages[-10:]
    from wiki_assets.engine.state.store import StateStore

    with StateStore(wiki / ".wiki_assets").collection_locks(["people"]):
        pass  # free: the run let go of it


def _launch_and_terminate(dev: DevServer, sim: SimServer) -> str:
    wait_for("the code location", STARTUP_S, dev.location_loaded, dev)
    launched = dev.graphql(
        """mutation($params: LaunchBackfillParams!) {
          launchPartitionBackfill(backfillParams: $params) {
            __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message }
          }
        }""",
        {"params": {"partitionNames": ["people"], "assetSelection": [{"path": ["wiki_pages"]}]}},
    )["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched

    def running() -> str | None:
        with dg.DagsterInstance.from_config(str(dev.home)) as instance:
            runs = instance.get_runs(limit=1)
        started = runs and runs[0].status == dg.DagsterRunStatus.STARTED
        return runs[0].run_id if started and sim.snapshot().answered >= 1 else None

    run_id = wait_for("the run to be under way", BACKFILL_S, running, dev)
    terminated = dev.graphql(
        """mutation($runId: String!) { terminateRun(runId: $runId) {
             __typename ... on PythonError { message } } }""",
        {"runId": run_id},
    )["terminateRun"]
    assert terminated["__typename"] == "TerminateRunSuccess", terminated

    def finished() -> dg.DagsterRun | None:
        with dg.DagsterInstance.from_config(str(dev.home)) as instance:
            found = instance.get_run_by_id(run_id)
        return found if found is not None and found.is_finished else None

    wait_for("the terminated run to end", 90.0, finished, dev)
    return run_id
