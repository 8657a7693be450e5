"""What a run prints on the console, on an instance configured by the project's dagster.yaml: when
the run config names the definitions' `console` logger (as the CLI, the schedule and the documented
launchpad config do), every line, Dagster's own events at DEBUG included, has the aligned
`timestamp  LEVEL  message` format; a run launched without naming it falls back to Dagster's
built-in console logger, which dagster.yaml's `python_logs` keeps at INFO (no DEBUG chatter)."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import PROJECT, Workspace

from wiki_assets.simulator import SimServer

ALIGNED = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (INFO |WARNING|ERROR|DEBUG) +\S")

# One ingest of the `people` collection through the ingest job, in a fresh process whose instance
# is built from DAGSTER_HOME's dagster.yaml (the project's, not a test instance's).
SCRIPT = """
import sys
import dagster as dg
from wiki_assets.definitions import build_defs
from wiki_assets.defs.names import INGEST_JOB
from wiki_assets.defs.wiki_pages import IngestConfig, run_config
from wiki_assets.defs.resources import CorpusResource, ModelConfig, SummarizerResource
from wiki_assets.defs.sync import sync

synced, wiki, home, base_url, model, level = sys.argv[1:7]
corpus = CorpusResource(synced_root=synced, wiki_root=wiki)
summarizer = SummarizerResource(models=[ModelConfig(name="sim", base_url=base_url, model=model)])
config = run_config(IngestConfig(flush_seconds=0.2))
if level == "none":
    del config["loggers"]
else:
    config["loggers"] = {"console": {"config": {"log_level": level}}}
with dg.DagsterInstance.from_config(home) as instance:
    sync(instance, corpus, summarizer)
    job = build_defs(corpus, summarizer).resolve_job_def(INGEST_JOB)
    result = job.execute_in_process(run_config=config, instance=instance, partition_key="people")
sys.exit(0 if result.success else 1)
"""


def run(workspace: Workspace, sim: SimServer, level: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(workspace.synced), str(workspace.wiki),
         str(workspace.home), sim.base_url, sim.sim.model, level],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=PROJECT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    return [line for line in done.stderr.splitlines() if line.strip()]


def test_named_console_logger_prints_every_line_aligned(
    workspace: Workspace, sim: SimServer
) -> None:
    lines = run(workspace, sim, "DEBUG")

    assert all(ALIGNED.match(line) for line in lines), "\n".join(lines)
    debug = [line for line in lines if "  DEBUG  " in line]
    # Dagster's own events, in the same format as the pipeline's lines.
    assert any('Started execution of step "wiki_pages"' in line for line in debug), lines
    assert any('Finished execution of run for "ingest_job"' in line for line in debug), lines
    assert any("  INFO     ingest done: 6 docs" in line for line in lines), lines


def test_the_console_at_info_says_what_the_run_did_and_no_dagster_chatter(
    workspace: Workspace, sim: SimServer
) -> None:
    lines = run(workspace, sim, "INFO")

    assert any("  INFO     ingest done: 6 docs" in line for line in lines), lines
    assert any("  INFO     index: " in line for line in lines), lines
    # The page checks' per-collection evaluations are not outputs, which Dagster notes.
    assert not [line for line in lines if "did not yield or return expected outputs" in line]


def test_unnamed_logger_falls_back_to_dagster_console_at_info(
    workspace: Workspace, sim: SimServer
) -> None:
    lines = run(workspace, sim, "none")

    # Dagster's built-in format: "<time> - dagster - <LEVEL> - <job> - <run id> - ...".
    done = [line for line in lines if "ingest done" in line]
    assert done and all(" - dagster - INFO - ingest_job - " in line for line in done), lines
    assert not [line for line in lines if " - DEBUG - " in line], lines
    assert not [line for line in lines if ALIGNED.match(line)], lines
