"""The Checks tab of ``wiki_pages`` in the Dagster UI: its "Execute all" button launches the checks
with no partition. The test does what the button does, through the same GraphQL API the UI
uses, against the code location loaded from ``workspace.yaml`` in a code server of its own (as
``dagster dev`` loads it) and the instance's own run launcher: the run succeeds, every partition
gets its result of every check, and the wiki as a whole one more."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from conftest import PROJECT, Workspace, summarizer_for, write_project
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus
from dagster_graphql.client.query import LAUNCH_PIPELINE_EXECUTION_MUTATION
from dagster_graphql.test.utils import define_out_of_process_context, execute_dagster_graphql
from test_checks import FAST, partition_results

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.wiki_pages.checks import MODELS_IN_SERVICE
from wiki_assets.engine.wiki.audit import FLAGGED_SHARE, NO_FAILED_DOCUMENTS
from wiki_assets.simulator import SimServer

# What the Checks tab asks of the asset before it offers "Execute all" (Dagster's
# ExecuteChecksButton: the asset's jobs, repository and checks).
CHECKS_TAB = """
query($assetKey: AssetKeyInput!) {
  assetNodeOrError(assetKey: $assetKey) {
    ... on AssetNode {
      jobNames
      repository { name location { name } }
      assetChecksOrError {
        ... on AssetChecks { checks { name canExecuteIndividually } }
      }
    }
  }
}
"""
RUN_WITHIN_S = 120
# Runs start as they are launched, as under `dagster dev` with its daemon (whose queue this
# test has no daemon for).
LAUNCHED_AT_ONCE = {
    "run_coordinator": {"module": "dagster._core.run_coordinator", "class": "DefaultRunCoordinator"}
}


@pytest.fixture
def ui_instance(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> Iterator[dg.DagsterInstance]:
    monkeypatch.setenv("DAGSTER_HOME", str(workspace.home))
    with dg.instance_for_test(overrides=LAUNCHED_AT_ONCE, temp_dir=str(workspace.home)) as home:
        yield home


def execute_all(context: Any) -> str:
    """Click "Execute all": the launch the button sends (the first of the asset's jobs, no asset,
    every check it can execute, no partition, empty run config); the run's id."""
    node = execute_dagster_graphql(context, CHECKS_TAB, {"assetKey": {"path": ["wiki_pages"]}})
    asset = node.data["assetNodeOrError"]
    checks = asset["assetChecksOrError"]["checks"]
    launchable = [c["name"] for c in checks if c["canExecuteIndividually"] == "CAN_EXECUTE"]
    assert set(launchable) >= {"no_failed_documents", "flagged_share", "models_in_service"}
    params = {
        "mode": "default",
        "executionMetadata": {},
        "runConfigData": "{}",
        "selector": {
            "jobName": asset["jobNames"][0],
            "repositoryLocationName": asset["repository"]["location"]["name"],
            "repositoryName": asset["repository"]["name"],
            "assetSelection": [],
            "assetCheckSelection": [
                {"assetKey": {"path": ["wiki_pages"]}, "name": name} for name in launchable
            ],
        },
    }
    launched = execute_dagster_graphql(
        context, LAUNCH_PIPELINE_EXECUTION_MUTATION, {"executionParams": params}
    ).data["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return str(launched["run"]["runId"])


def test_execute_all_on_the_checks_tab_checks_every_partition(
    workspace: Workspace,
    ui_instance: dg.DagsterInstance,
    sim: SimServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    instance = ui_instance
    (workspace.synced / "product" / "logo.png.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST).success
    collections = set(instance.get_dynamic_partitions("collections"))
    # The code location reads its corpus and fleet from the project file, as under dagster dev.
    project = write_project(tmp_path / "wiki_assets.yaml", sim, workspace.synced, workspace.wiki)
    monkeypatch.setenv("WIKI_ASSETS_CONFIG", str(project))
    with define_out_of_process_context(str(PROJECT / "workspace.yaml"), None, instance) as ui:
        run_id = execute_all(ui)
        deadline = time.monotonic() + RUN_WITHIN_S
        while not (run := instance.get_run_by_id(run_id)) or not run.is_finished:
            assert time.monotonic() < deadline, f"the checks' run did not end: {run}"
            time.sleep(0.5)
    failures = [
        entry.dagster_event.event_specific_data.error.message  # type: ignore[union-attr]
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    ]
    assert run.status == dg.DagsterRunStatus.SUCCESS, failures
    assert "dagster/partition" not in run.tags  # a run of no partition, as the button launches
    for check in (NO_FAILED_DOCUMENTS, FLAGGED_SHARE, MODELS_IN_SERVICE):
        results = partition_results(instance, check, run_id)
        # Every partition's result, and the whole wiki's (the one Dagster planned for a run of
        # no partition): none left pending, which the UI would show as skipped.
        assert set(results) == collections | {None}, check.name
        assert {record.status for record in results.values()} <= {
            AssetCheckExecutionRecordStatus.SUCCEEDED,
            AssetCheckExecutionRecordStatus.FAILED,
        }
    # The results are the checks' own: `product` holds the file that failed, and so the wiki.
    failed = partition_results(instance, NO_FAILED_DOCUMENTS, run_id)
    assert failed["product"].status == AssetCheckExecutionRecordStatus.FAILED
    assert failed["people"].status == AssetCheckExecutionRecordStatus.SUCCEEDED
    whole = failed[None].event
    assert failed[None].status == AssetCheckExecutionRecordStatus.FAILED and whole is not None
    data = whole.dagster_event.event_specific_data  # type: ignore[union-attr]
    assert data.metadata["problems"].value == 1
    assert "product/logo.png.txt: binary file" in data.metadata["found"].value
