"""The project file (``wiki_assets.yaml`` or ``$WIKI_ASSETS_CONFIG``) is the one home of a
deployment's configuration: the definitions build their fleet and dials from it, so after a CLI run
on that fleet the daily schedule's sync run (over the loaded definitions) leads to no run, and after
one changed document it requests one run with the file's dials that asks the simulated server, not
the embedded model. ``--config`` is layered over it (``force`` redoes every document). Every kind of
typo, at every level, stops the CLI with exit 1 and one line naming the file, the key, where it is
and the nearest valid key, and stops the code location from loading with the same line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml
from conftest import PROJECT, SAMPLE_COLLECTIONS, Workspace, daily_tick, write_project

from wiki_assets.defs.metadata.run_figures import models_of, plain
from wiki_assets.defs.settings import ConfigError, load_settings
from wiki_assets.defs.sync import PARTITION_RANGE_END, PARTITION_RANGE_START
from wiki_assets.simulator import SimServer


def project_file(path: Path, workspace: Workspace, sim: SimServer, **dials: object) -> Path:
    settings: dict[str, object] = {"flush_seconds": 0.2, "claim_size": 8, **dials}
    return write_project(path, sim, workspace.synced, workspace.wiki, **settings)


def cli(workspace: Workspace, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home), "WIKI_ASSETS_CONFIG": str(project)},
    )


def test_schedule_after_a_cli_run_uses_the_project_files_fleet_and_dials(
    workspace: Workspace,
    instance: dg.DagsterInstance,
    sim: SimServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = project_file(workspace.home.parent / "wiki_assets.yaml", workspace, sim)
    done = cli(workspace, project, "--json")
    assert done.returncode == 0, done.stderr
    total = len(workspace.documents())
    assert json.loads(done.stdout)["count"] == total

    # What `dagster dev` and the daemon load: the definitions of the project file.
    monkeypatch.setenv("WIKI_ASSETS_CONFIG", str(project))
    from wiki_assets.definitions import project_defs

    defs = project_defs()
    # The launchpad's defaults (and a UI materialization left as it is) are the file's dials.
    job = defs.resolve_job_def("ingest_job")
    ops = job.run_config_schema.config_type.fields["ops"].config_type  # type: ignore[attr-defined]
    launchpad = ops.fields["wiki_pages"].config_type.fields["config"].config_type.fields
    assert (launchpad["claim_size"].default_value, launchpad["flush_seconds"].default_value) == (
        8,
        0.2,
    )
    idle = daily_tick(defs, instance)
    assert not idle.run_requests, "an up-to-date wiki on the configured fleet needs no run"
    assert "up to date" in (idle.skip_message or "")

    edited = workspace.synced / "people" / "leave-policy.md"
    edited.write_text(edited.read_text() + "\nCarry-over is now 7 days.\n")
    stale = daily_tick(defs, instance)
    assert len(stale.run_requests) == 1
    request = stale.run_requests[0]
    assert (request.tags[PARTITION_RANGE_START], request.tags[PARTITION_RANGE_END]) == (
        "people",
        "people",
    )
    dials = request.run_config["ops"]["wiki_pages"]["config"]
    assert (dials["claim_size"], dials["flush_seconds"]) == (8, 0.2)

    answered = sim.snapshot().answered
    result = defs.resolve_job_def("ingest_job").execute_in_process(
        run_config=request.run_config, tags=request.tags, instance=instance
    )
    assert result.success
    figures = plain(result.asset_observations_for_node("wiki_pages")[0].metadata)
    assert sim.snapshot().answered == answered + 1, "the run asked the configured server"
    assert set(models_of(figures)) == {"sim"}, "and no other model (never the embedded one)"
    assert figures["count"] == 1 and figures["claim_size"] == 8


def test_cli_config_is_layered_over_the_project_file_and_force_redoes_everything(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    project = project_file(workspace.home.parent / "wiki_assets.yaml", workspace, sim)
    assert cli(workspace, project).returncode == 0
    answered = sim.snapshot().answered
    tuning = workspace.home.parent / "tune.yaml"
    tuning.write_text("ops: {wiki_pages: {config: {force: true, workers_per_model: 2}}}\n")

    done = cli(workspace, project, "--config", str(tuning), "--json")

    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    total = len(workspace.documents())
    assert summary["count"] == total and summary["skipped"] == 0
    assert sim.snapshot().answered == answered + total
    # The project file's fleet and claim size, the tuning file's workers.
    assert "1 models (sim ×2) · 2 workers/model · claim 8" in done.stderr


def test_a_file_in_the_working_directory_is_the_default(
    workspace: Workspace, sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    project_file(workspace.home.parent / "wiki_assets.yaml", workspace, sim, claim_size=5)
    monkeypatch.delenv("WIKI_ASSETS_CONFIG")
    monkeypatch.chdir(workspace.home.parent)
    settings = load_settings()
    assert settings.dials.claim_size == 5 and settings.summarizer.models[0].name == "sim"
    monkeypatch.setenv("WIKI_ASSETS_CONFIG", str(workspace.home.parent / "missing.yaml"))
    with pytest.raises(ConfigError, match="WIKI_ASSETS_CONFIG=.*missing.yaml: no such file"):
        load_settings()


MODEL = {"name": "sim", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
TYPOS = [
    ({"opz": {}}, "unknown key 'opz' in the top level; did you mean 'ops'?"),
    ({"ops": {"wiki_pagez": {"config": {}}}},
     "unknown key 'wiki_pagez' in ops; did you mean 'wiki_pages'?"),
    ({"ops": {"wiki_pages": {"config": {"claim_sise": 8}}}},
     "unknown key 'claim_sise' in ops.wiki_pages.config; did you mean 'claim_size'?"),
    ({"ops": {"wiki_pages": {"confg": {}}}},
     "unknown key 'confg' in ops.wiki_pages; did you mean 'config'?"),
    ({"resources": {"sumarizer": {}}},
     "unknown key 'sumarizer' in resources; did you mean 'summarizer'?"),
    ({"resources": {"summarizer": {"config": {"modles": [MODEL]}}}},
     "unknown key 'modles' in resources.summarizer.config; did you mean 'models'?"),
    ({"resources": {"summarizer": {"config": {"models": [{**MODEL, "base_ulr": "x"}]}}}},
     "unknown key 'base_ulr' in resources.summarizer.config.models[0]; did you mean 'base_url'?"),
    ({"resources": {"summarizer": {"config": {"embeddings": {**MODEL, "modle": "e5"}}}}},
     "unknown key 'modle' in resources.summarizer.config.embeddings; did you mean 'model'?"),
    ({"resources": {"corpus": {"config": {"synced_rot": "x"}}}},
     "unknown key 'synced_rot' in resources.corpus.config; did you mean 'synced_root'?"),
    ({"ops": {"wiki_pages": {"config": {"claim_size": 0}}}},
     "bad value for 'claim_size' in ops.wiki_pages.config: Input should be greater than or equal"),
    ({"resources": {"summarizer": {"config": {"models": [{"name": "sim", "model": "m"}]}}}},
     "missing key 'base_url' in resources.summarizer.config.models[0]"),
    ({"ops": {"wiki_pages": {"config": {"workers_per_model": "many"}}}},
     "bad value for 'workers_per_model' in ops.wiki_pages.config: must be an integer of at"),
    ({"ops": {"wiki_verification": {"config": {"budget_page": 5}}}},
     "unknown key 'budget_page' in ops.wiki_verification.config; did you mean 'budget_pages'?"),
    ({"ops": {"wiki_verificaton": {"config": {}}}},
     "unknown key 'wiki_verificaton' in ops; did you mean 'wiki_verification'?"),
    ({"ops": {"wiki_verification": {"config": {"budget_pages": -1}}}},
     "bad value for 'budget_pages' in ops.wiki_verification.config: Input should be greater"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "message"), TYPOS, ids=[m.split(" in ")[0] for _, m in TYPOS])
def test_each_kind_of_typo_is_one_line_and_exit_one(
    workspace: Workspace, tmp_path: Path, content: dict[str, object], message: str
) -> None:
    bad = tmp_path / "wiki_assets.yaml"
    bad.write_text(yaml.safe_dump(content))
    with pytest.raises(ConfigError) as raised:
        read = load_settings(bad)
        pytest.fail(f"accepted: {read}")
    assert str(raised.value) == f"{bad}: {message}" or str(raised.value).startswith(
        f"{bad}: {message}"
    )


@pytest.mark.parametrize("where", ["project file", "--config"])
def test_cli_stops_on_a_typo_before_any_work(
    workspace: Workspace, sim: SimServer, tmp_path: Path, where: str
) -> None:
    project = project_file(tmp_path / "wiki_assets.yaml", workspace, sim)
    bad = tmp_path / "bad.yaml"
    bad.write_text("ops:\n  wiki_pages:\n    config: {claim_sise: 8}\n")
    if where == "project file":
        done = cli(workspace, bad)
    else:
        done = cli(workspace, project, "--config", str(bad))

    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].endswith(
        f"ERROR    {bad}: unknown key 'claim_sise' in ops.wiki_pages.config; "
        "did you mean 'claim_size'?"
    )
    assert sim.snapshot().answered == 0 and not workspace.wiki.exists()


def test_a_bad_project_file_stops_the_code_location_with_the_same_line(tmp_path: Path) -> None:
    bad = tmp_path / "wiki_assets.yaml"
    bad.write_text("resources:\n  summarizer:\n    config: {modles: []}\n")
    # What the code location's load does: call the `@dg.definitions` function.
    load = "from wiki_assets.definitions import defs; defs()"
    done = subprocess.run(
        [sys.executable, "-c", load],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT,
        env={**os.environ, "WIKI_ASSETS_CONFIG": str(bad)},
    )
    assert done.returncode != 0
    line = f"{bad}: unknown key 'modles' in resources.summarizer.config; did you mean 'models'?"
    assert done.stderr.strip().splitlines()[-1] == f"wiki_assets.defs.settings.ConfigError: {line}"


def test_broken_yaml_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "wiki_assets.yaml"
    bad.write_text("ops:\n  wiki_pages: {config: {claim_size: 8}\n")
    with pytest.raises(ConfigError, match=r"not valid YAML: .* at line \d+, column \d+$"):
        load_settings(bad)


def test_the_verification_pass_takes_its_settings_from_the_project_file(
    workspace: Workspace, sim: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ops.wiki_verification.config`` in the project file: the launchpad's defaults (what the
    schedule's and the sensor's runs and a UI materialization run with) are the file's."""
    project = project_file(workspace.home.parent / "wiki_assets.yaml", workspace, sim)
    written = yaml.safe_load(project.read_text())
    written["ops"]["wiki_verification"] = {"config": {"budget_pages": 3, "judge": "sim"}}
    project.write_text(yaml.safe_dump(written))
    monkeypatch.setenv("WIKI_ASSETS_CONFIG", str(project))
    from wiki_assets.definitions import project_defs

    job = project_defs().resolve_job_def("ingest_job")
    ops = job.run_config_schema.config_type.fields["ops"].config_type  # type: ignore[attr-defined]
    launchpad = ops.fields["wiki_verification"].config_type.fields["config"].config_type.fields
    assert launchpad["budget_pages"].default_value == 3
    assert launchpad["judge"].default_value == "sim"


def test_a_cli_run_is_a_run_of_the_code_locations_job(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    project = project_file(workspace.home.parent / "wiki_assets.yaml", workspace, sim)
    # The verification pass's settings from a --config file layered over the project file.
    tuning = workspace.home.parent / "verify.yaml"
    tuning.write_text("ops: {wiki_verification: {config: {budget_pages: 7}}}\n")
    done = cli(workspace, project, "--config", str(tuning), "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)

    # What the job's Runs page and the timeline list: runs of ingest_job in this code location.
    listed = instance.get_runs(
        dg.RunsFilter(
            job_name="ingest_job",
            tags={".dagster/repository": "__repository__@wiki_assets.definitions:defs"},
        )
    )
    assert [run.run_id for run in listed] == [summary["run_id"]]
    (run,) = listed
    assert run.remote_job_origin is not None
    assert run.remote_job_origin.location_name == "wiki_assets.definitions:defs"
    assert run.tags["wiki_assets/source"] == "cli"
    assert run.tags["wiki_assets/config"] == f"{project} + {tuning}"
    assert run.tags["wiki_assets/claim_size"] == "8"  # a tag per dial
    # A re-execution gets the same fleet and dials: they are in the run's own config.
    models = run.run_config["resources"]["summarizer"]["config"]["models"]
    assert [model["base_url"] for model in models] == [sim.base_url]
    assert run.run_config["ops"]["wiki_pages"]["config"]["claim_size"] == 8
    assert run.run_config["ops"]["wiki_verification"]["config"]["budget_pages"] == 7
    verified = instance.fetch_materializations(dg.AssetKey("wiki_verification"), limit=100)
    budgets = {r.asset_materialization.metadata["budget_pages"].value for r in verified.records}  # type: ignore[union-attr]
    assert budgets == {7}, "the pass ran with the --config file's budget"

    # The partitions' own counts add up to the run's.
    records = instance.fetch_materializations(dg.AssetKey("wiki_pages"), limit=100).records
    counts = [r.asset_materialization.metadata for r in records if r.run_id == run.run_id]  # type: ignore[union-attr]
    assert len(counts) == len(SAMPLE_COLLECTIONS)
    for figure, total in (("summarized", "count"), ("skipped", "skipped"), ("removed", "removed")):
        assert sum(c[figure].value for c in counts) == summary[total]
    assert sum(c["documents"].value for c in counts) == len(workspace.documents())


def test_the_shipped_example_is_a_valid_project_file() -> None:
    settings = load_settings(PROJECT / "wiki_assets.example.yaml")
    assert [model.name for model in settings.summarizer.models] == ["vllm", "gateway"]
    assert settings.summarizer.models[1].api_key_env == "GATEWAY_API_KEY"
    assert settings.dials.claim_size == 32


def test_a_bad_environment_variable_is_one_line_too(workspace: Workspace, sim: SimServer) -> None:
    project = project_file(workspace.home.parent / "wiki_assets.yaml", workspace, sim)
    done = subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest"],
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "DAGSTER_HOME": str(workspace.home),
            "WIKI_ASSETS_CONFIG": str(project),
            "WIKI_ASSETS_COLLECTIONS_PER_RUN": "x",
        },
    )
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].endswith(
        "WIKI_ASSETS_COLLECTIONS_PER_RUN must be a positive integer: 'x'"
    ), done.stderr
