"""`wiki-assets runs` compares past `wiki_pages` runs from the Dagster instance: after two real
ingests with different dials (the first over every collection, the second over one collection with
a changed document), the table has one row per run with that run's dials, each model's real
workers, models with docs/s, counts and the wiki it wrote, the partitions of a single-run backfill
joined in one row; `--partition` keeps only the runs that materialized it, `--sort`/`--desc` order
the rows, `--limit` keeps the most recent runs, and the CLI prints the same rows as JSON and as an
untruncated polars table. Runs that failed or were stopped are rows too, with their status; the
brief view shows the wiki once runs of two wikis share the instance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from conftest import SAMPLE_COLLECTIONS, Workspace, summarizer_for

from wiki_assets.cli.history import COLUMNS, MODEL_SPEED, READS, SCHEMA, runs_table
from wiki_assets.cli.runner import (
    IngestOutcome,
    config_of,
    execute_in_location,
    sync_then_ingest,
)
from wiki_assets.cli.text import brief_text
from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.metadata.comparison import RUNS
from wiki_assets.defs.metadata.recording import Markdown
from wiki_assets.defs.names import INGEST_JOB
from wiki_assets.defs.resources import CorpusResource, ModelConfig, SummarizerResource
from wiki_assets.defs.sync.plan import MODEL_READS
from wiki_assets.defs.tags import run_tags
from wiki_assets.defs.wiki_pages import IngestConfig, run_config
from wiki_assets.engine.llm.child_server import free_port
from wiki_assets.simulator import SimServer

ALL = ",".join(SAMPLE_COLLECTIONS)
FIRST = IngestConfig(workers_per_model=2, claim_size=4, flush_seconds=0.2, max_tokens=200)
SECOND = IngestConfig(workers_per_model="auto", claim_size=16, flush_seconds=0.5, max_tokens=200)


@dataclass
class History:
    workspace: Workspace
    instance: dg.DagsterInstance
    first: IngestOutcome
    second: IngestOutcome


@pytest.fixture
def history(workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer) -> History:
    summarizer = summarizer_for(sim)
    first = sync_then_ingest(instance, workspace.corpus, summarizer, FIRST)
    # Only `people` changes, so the second run covers that one partition and redoes that one
    # document (the sync plans with the run's own dials, which shape pages the same way).
    (workspace.synced / "people" / "leave-policy.md").write_text("# Leave\n\nNew rules.\n")
    second = sync_then_ingest(instance, workspace.corpus, summarizer, SECOND)
    assert first.success and second.success, (first.error, second.error)
    assert second.plan.pending == ["people"]
    return History(workspace, instance, first, second)


def cli(history: History, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "runs", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DAGSTER_HOME": str(history.workspace.home)},
    )


def test_one_row_per_run_with_its_dials_and_figures(history: History) -> None:
    table = runs_table(history.instance)

    assert table.columns == list(COLUMNS)
    assert table["run_id"].to_list() == [history.first.run_id, history.second.run_id]
    first, second = table.to_dicts()
    assert first["partition"] == ALL
    assert second["partition"] == "people"
    assert (first["workers_per_model"], first["claim_size"]) == (2, 4)
    assert (first["flush_seconds"], first["max_tokens"]) == (0.2, 200)
    assert (first["workers_auto"], second["workers_auto"]) == (False, True)
    # 'auto' is a flag, never a number standing for it.
    assert (second["workers_per_model"], second["claim_size"]) == (None, 16)
    assert (second["flush_seconds"], second["max_tokens"]) == (0.5, 200)
    documents = len(history.workspace.documents())
    people = len(list((history.workspace.synced / "people").iterdir()))
    assert (first["count"], first["skipped"], first["failed"]) == (documents, 0, 0)
    assert (second["count"], second["skipped"], second["failed"]) == (1, people - 1, 0)
    for row, outcome in ((first, history.first), (second, history.second)):
        assert row["docs_per_sec"] == outcome.metadata["docs_per_sec"] > 0
        assert row["duration_s"] == outcome.metadata["duration_s"] > 0
        speed = outcome.metadata["model/sim0/docs_per_sec"]
        assert row["models"] == f"sim0 {speed:.2f}/s"
    assert first["time"] <= second["time"]
    assert (first["status"], second["status"]) == ("success", "success")
    # Each model's real workers: the fixed count, or where automatic workers settled.
    settled = history.second.metadata["model/sim0/workers"]
    assert (first["workers"], second["workers"]) == ("2", f"auto {settled}")
    wiki = str(history.workspace.wiki.resolve())
    assert (first["wiki"], second["wiki"]) == (wiki, wiki)


def test_filter_sort_and_limit(history: History) -> None:
    first, second = history.first.run_id, history.second.run_id

    engineering = runs_table(history.instance, partition="engineering")
    assert engineering["run_id"].to_list() == [first]
    assert engineering["partition"].to_list() == ["engineering"]
    people = runs_table(history.instance, partition="people")
    assert people["run_id"].to_list() == [first, second]
    assert people["partition"].to_list() == ["people", "people"]
    assert runs_table(history.instance, partition="nowhere").is_empty()

    by_count = runs_table(history.instance, sort="count", descending=True)
    assert by_count["run_id"].to_list() == [first, second]
    by_claim = runs_table(history.instance, sort="claim_size")
    assert by_claim["claim_size"].to_list() == [4, 16]
    newest_first = runs_table(history.instance, sort="time", descending=True)
    assert newest_first["run_id"].to_list() == [second, first]
    assert runs_table(history.instance, limit=1)["run_id"].to_list() == [second]
    with pytest.raises(ValueError, match="unknown column"):
        runs_table(history.instance, sort="speed")


def test_cli_json_and_table(history: History) -> None:
    first, second = history.first.run_id, history.second.run_id
    assert first is not None and second is not None

    done = cli(history, "--json", "--sort", "claim_size", "--desc")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [row["run_id"] for row in rows] == [second, first]
    assert [row["claim_size"] for row in rows] == [16, 4]
    assert [row["partition"] for row in rows] == ["people", ALL]
    assert set(rows[0]) == set(COLUMNS)

    product = json.loads(cli(history, "--json", "--partition", "product").stdout)
    assert [row["run_id"] for row in product] == [first]
    assert [row["partition"] for row in product] == ["product"]

    plain = cli(history, "--sort", "docs_per_sec", "--desc", "--wide")
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    header = next(line for line in lines if "run_id" in line)
    for column in COLUMNS:
        assert column in header
    (row_first,) = [line for line in lines if first[:8] in line]
    assert ALL in row_first and "sim0 " in row_first and "success" in row_first
    assert first not in plain.stdout  # run ids are shown short, as in the UI
    assert "…" not in plain.stdout  # nothing truncated
    fastest_first = sorted(
        [history.first, history.second], key=lambda run: run.metadata["docs_per_sec"], reverse=True
    )
    positions = [
        next(index for index, line in enumerate(lines) if str(run.run_id)[:8] in line)
        for run in fastest_first
    ]
    assert positions[0] < positions[1]

    # The default view fits a 100-column terminal: the columns runs are compared by.
    brief = cli(history, "--sort", "docs/s", "--desc")
    assert brief.returncode == 0, brief.stderr
    lines = brief.stdout.splitlines()
    assert all(len(line) <= 100 for line in lines), brief.stdout
    headers = "when run docs seconds docs/s req/doc workers claim status models"
    assert lines[0].split() == headers.split()
    assert "run_id" not in brief.stdout and "flush_seconds" not in brief.stdout
    documents = len(history.workspace.documents())
    (row_first,) = [line for line in lines if first[:8] in line]
    assert f" {documents} " in row_first and " 2 " in row_first and " 4 " in row_first
    assert " ok " in row_first and "sim0 " in row_first
    (row_second,) = [line for line in lines if second[:8] in line]
    assert " auto " in row_second and " 16 " in row_second and " ok " in row_second
    assert "wiki" not in lines[0]  # one wiki: no column for it
    assert str(fastest_first[0].run_id)[:8] in lines[1]  # --sort takes the view's headers

    bad = cli(history, "--sort", "speed")
    assert bad.returncode == 1 and "--sort speed" in bad.stderr


def test_compare_puts_the_runs_side_by_side_with_the_dials_that_differ(history: History) -> None:
    """`runs --compare`, and the UI's `runs` table in the second run's figures: both runs, newest
    first, their docs/s overall and per model, the flagged share of their documents, and as
    columns only the dials that differ (claim 4 and 16, flush 0.2 and 0.5 s, workers 2 and
    auto); max_tokens, the same in both, said once below."""
    first, second = history.first.run_id, history.second.run_id
    assert first and second
    done = cli(history, "--compare")
    assert done.returncode == 0, done.stderr
    header, newer, older, *below = done.stdout.splitlines()
    differing = ["claim", "flush_s", "workers"]
    assert header.split() == ["run", "when", "docs", "docs/s", "flagged", "sim0/s", *differing]
    assert newer.startswith(second[:8]) and older.startswith(first[:8])
    # docs, docs/s, flagged share, sim0's docs/s and the dials, read back as numbers and words
    docs, speed, flagged, sim0, claim, flush, workers = newer.split()[3:]
    assert (docs, claim, flush, workers) == ("1", "16", "0.5", "auto")
    assert float(speed) == float(sim0) > 0  # one model: its docs/s are the run's
    assert older.split()[3] == str(len(history.workspace.documents()))
    assert older.split()[-3:] == ["4", "0.2", "2"]
    # The default simulated model's pages repeat the prompt's words: all flagged, never more.
    assert flagged == older.split()[5] == "100%"
    assert "max_tokens 200" in " ".join(below) and "claim_size" not in " ".join(below)
    rows = json.loads(cli(history, "--compare", "--json").stdout)
    assert [row["run_id"] for row in rows] == [second, first]
    assert all(0 <= row["flagged_share"] <= 1 for row in rows)
    assert rows[1]["dials"]["workers_per_model"] == 2 and rows[0]["models"]["sim0"] > 0
    # The UI: the second run's figures hold the same comparison, each run id a link to its run.
    (record,) = [
        r
        for r in history.instance.fetch_observations(dg.AssetKey("wiki_pages"), limit=10).records
        if r.run_id == second
    ]
    shown = record.asset_observation.metadata[RUNS.name].value  # type: ignore[union-attr]
    table, *every = shown.split("\n\n")
    lines = table.splitlines()
    assert (
        lines[0] == "| run | when | docs | docs/s | flagged | sim0/s | claim | flush_s | workers |"
    )
    assert lines[2].startswith(f"| [{second[:8]}](/runs/{second}) |") and "| auto |" in lines[2]
    assert lines[3].startswith(f"| [{first[:8]}](/runs/{first}) |") and "| 100% |" in lines[3]
    assert "max_tokens 200" in every[0]
    # Recorded once per run, first after its outcome.
    assert list(record.asset_observation.metadata)[:2] == ["outcome", "runs"]  # type: ignore[union-attr]


def test_the_brief_view_cuts_only_its_last_column() -> None:
    """Many models (or long names) would wrap a terminal's line: the models column, the last,
    is cut at 100 characters; every other column stays whole."""
    from datetime import datetime

    row = {name: None for name in COLUMNS} | {
        "time": datetime(2026, 3, 1, 9, 30, 15),
        "run_id": "abcdef12",
        "count": 12345,
        "failed": 3,
        "duration_s": 1234.56,
        "docs_per_sec": 10.0,
        "requests_per_doc": 1.42,
        "workers_auto": True,
        "workers": "auto 12",
        "claim_size": 16,
        "status": "success",
        "models": ", ".join(f"qwen-2.5-7b-instruct-{n} 1.23/s" for n in range(6)),
    }
    text = brief_text(pl.DataFrame([row], schema=SCHEMA))
    header, line = text.splitlines()
    assert len(line) == 100 and line.endswith("…")
    assert line.startswith(
        "2026-03-01 09:30  abcdef12  12345   1234.6   10.00     1.42  auto 12     16"
    )
    assert line.endswith("3 failed  qwen-2.5-7b-…")
    failed = brief_text(pl.DataFrame([row | {"status": "failure", "models": "m"}], schema=SCHEMA))
    assert failed.splitlines()[1].endswith("failure  m")
    stopped = row | {"status": "failure", "unfinished": 7, "models": "m"}
    assert brief_text(pl.DataFrame([stopped], schema=SCHEMA)).splitlines()[1].endswith("stopped  m")
    # A run whose other models did the work is no plain "ok" when one of them was out.
    out = row | {"failed": 0, "models_out": "gw no answer", "models": "m"}
    assert brief_text(pl.DataFrame([out], schema=SCHEMA)).splitlines()[1].endswith("1 model out  m")


def test_empty_history(instance: dg.DagsterInstance, workspace: Workspace) -> None:
    table = runs_table(instance)
    assert table.is_empty() and table.columns == list(COLUMNS)
    assert table.schema["docs_per_sec"] == pl.Float64
    done = subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "runs"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home)},
    )
    assert done.returncode == 0, done.stderr
    assert "no wiki_pages materializations" in done.stdout


def test_every_key_the_readers_read_is_one_the_writer_writes(history: History) -> None:
    """On the two runs' recorded figures: the UI plots only the figures tuning runs are compared
    by (a number each); the rest of the run's figures, its dials and each model's figures are one
    table each, every model a row. Each key `runs` and the plan's estimate read is there with its
    declared type, and every recorded key and column is one run_figures.py defines."""
    types = {
        int: dg.IntMetadataValue,
        float: dg.FloatMetadataValue,
        bool: dg.BoolMetadataValue,
        str: dg.TextMetadataValue,
        list: dg.JsonMetadataValue,
        Markdown: dg.MarkdownMetadataValue,
    }
    columns = {int: "int", float: "float", bool: "bool", str: "string"}
    records = history.instance.fetch_observations(dg.AssetKey("wiki_pages"), limit=10).records
    assert {r.run_id for r in records} == {history.first.run_id, history.second.run_id}
    for record in records:
        recorded = record.asset_observation.metadata  # type: ignore[union-attr]
        values = md.plain(recorded)
        models = md.models_of(values)
        assert set(models) == {"sim0"}
        plotted = {
            name
            for name, value in recorded.items()
            if isinstance(value, (dg.IntMetadataValue, dg.FloatMetadataValue, dg.BoolMetadataValue))
        }
        # (requests_per_doc once the engine reports it)
        assert {key.name for key in md.PLOTTED} - {md.REQUESTS_PER_DOC.name} <= plotted
        assert plotted <= {key.name for key in md.PLOTTED}
        tables = (md.DETAILS_TABLE, md.DIALS_TABLE, md.MODELS_TABLE, md.MODEL_DETAILS_TABLE)
        defined = {key.name: key for key in (*md.HEADLINE, RUNS, *md.PLOTTED, *md.OUTCOME)}
        assert set(recorded) <= set(defined) | {table.name for table in tables} | {md.REPORT_FILE}
        assert isinstance(recorded[md.REPORT_FILE], dg.PathMetadataValue)  # the whole report's
        for name, value in recorded.items():
            if name in defined:
                assert isinstance(value, types[defined[name].type]), name
        for table in tables:
            value = recorded[table.name]
            assert isinstance(value, dg.TableMetadataValue), table.name
            assert len(value.records) == 1  # the run's row; one model
            keys = {key.name: key for key in table.columns}
            for column in value.schema.columns:
                assert column.type == columns[keys[column.name].type], (table.name, column)
        assert recorded[md.MODELS_TABLE.name].value.records[0].data["name"] == "sim0"
        # The models table fits a screen; the rest is in the details beside it.
        assert len(recorded[md.MODELS_TABLE.name].schema.columns) <= 10
        assert recorded[md.OUTCOME_TEXT.name].value.endswith("summarized")
        assert md.MODELS_OUT.name not in recorded  # every model served to the end
        fixed = record.run_id == history.first.run_id  # the second run's workers are 'auto'
        for key in READS:
            if key is md.WORKERS_PER_MODEL and not fixed:
                assert key.name not in values  # the empty column of an 'auto' run
                continue
            if key.name in ("judge", "redo_models"):
                assert key.name not in values  # dials with no value unless set
                continue
            assert key.read(values) is not None, key.name
        for key in (MODEL_SPEED, *MODEL_READS):
            assert key.read(models["sim0"]) is not None, key.name
        assert md.STOPPED_BY.name not in recorded  # only on a run a signal stopped


def test_failed_and_stopped_runs_are_rows_and_two_wikis_get_a_column(
    history: History, sim: SimServer, tmp_path: Path
) -> None:
    instance, workspace = history.instance, history.workspace
    # A partition that names no collection (added by hand, a typo): its run fails before it
    # records any figure, with a line that says so.
    instance.add_dynamic_partitions("collections", ["peopel"])
    config = {
        **run_config(FIRST),
        "resources": {
            "summarizer": {"config": config_of(summarizer_for(sim))},
            "corpus": {"config": config_of(workspace.corpus)},
        },
    }
    tags = {"dagster/partition": "peopel", **run_tags("ui", FIRST)}
    typo = execute_in_location(instance, INGEST_JOB, config, tags)
    assert not typo.success
    failure = next(event for event in typo.all_events if event.is_failure)
    assert "partition 'peopel' names no collection" in str(failure.event_specific_data)
    # A run whose only model is down is stopped: its figures are recorded, its status failure.
    other = tmp_path / "other-wiki"
    corpus = CorpusResource(synced_root=str(workspace.synced), wiki_root=str(other))
    down = SummarizerResource(
        models=[ModelConfig(name="down", base_url=f"http://127.0.0.1:{free_port()}/v1", model="m")]
    )
    assert "peopel" in instance.get_dynamic_partitions("collections")
    stopped = sync_then_ingest(instance, corpus, down, FIRST)
    assert not stopped.success
    # Its sync dropped the partition that names no collection.
    assert "peopel" not in instance.get_dynamic_partitions("collections")

    table = runs_table(instance, sort="time")
    rows = {row["run_id"]: row for row in table.to_dicts()}
    assert list(rows)[:2] == [history.first.run_id, history.second.run_id]
    assert rows[typo.run_id]["status"] == "failure" and rows[typo.run_id]["partition"] == "peopel"
    assert rows[typo.run_id]["count"] is None  # no figures: it never ran the engine
    assert rows[stopped.run_id]["status"] == "failure"
    assert rows[stopped.run_id]["unfinished"] == len(workspace.documents())
    assert rows[stopped.run_id]["wiki"] == str(other.resolve())
    assert runs_table(instance, partition="peopel")["run_id"].to_list() == [typo.run_id]

    brief = cli(history).stdout.splitlines()
    assert brief[0].split()[-2:] == ["wiki", "models"]  # two wikis: a column says which
    (line,) = [line for line in brief if stopped.run_id[:8] in line]
    assert " stopped " in line and " other-wiki " in line  # the folder's name tells them apart
