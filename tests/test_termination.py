"""A run stops cleanly on a signal: `wiki-assets ingest` receiving SIGTERM mid-run (or while its
workers wait at the end of a run on a long request) exits within seconds with one line saying
what was done and what is left, exit code 143, no traceback and no asyncio warnings; every answer
that came back is journaled with its page, and the next run asks no model again for those."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import yaml

from wiki_assets.engine.ingestion.signals import exit_code
from wiki_assets.simulator import SimModel, SimServer, fleet

PROJECT = Path(__file__).resolve().parents[1]
STOP_WITHIN_S = 10.0


def config_file(tmp_path: Path, servers: list[SimServer], **dials: object) -> Path:
    config = {
        "resources": {
            "summarizer": {
                "config": {
                    "models": [
                        {"name": s.sim.model, "base_url": s.base_url, "model": s.sim.model}
                        for s in servers
                    ]
                }
            }
        },
        "ops": {"wiki_pages": {"config": {"flush_seconds": 1, "max_tokens": 64, **dials}}},
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def start_cli(tmp_path: Path, synced: Path, config: Path) -> subprocess.Popen[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    shutil.copy(PROJECT / "dagster_home" / "dagster.yaml", home)
    env = {**os.environ, "DAGSTER_HOME": str(home), "WIKI_ASSETS_CONFIG": str(config)}
    command = [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(synced)]
    command += ["--wiki", str(tmp_path / "wiki"), "--config", str(config)]
    return subprocess.Popen(
        command, cwd=tmp_path, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def wait_until(condition, limit_s: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "the run never reached the state to signal in"
        time.sleep(0.05)


def stop(process: subprocess.Popen[str]) -> tuple[int, str, float]:
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    return process.returncode, output, time.monotonic() - sent


def assert_clean(output: str) -> None:
    for noise in ("Traceback", "Task was destroyed", "was never awaited", "ExceptionGroup"):
        assert noise not in output, output


def pages(wiki: Path) -> set[str]:
    return {p.relative_to(wiki).as_posix() for p in wiki.rglob("*.md") if p.name != "index.md"}


def test_sigterm_mid_run_stops_within_seconds_and_the_next_run_resumes(tmp_path: Path) -> None:
    synced = tmp_path / "synced" / "c"
    synced.mkdir(parents=True)
    for i in range(40):
        (synced / f"d{i:02}.md").write_text(f"# Note {i}\n\n" + f"topic {i} words " * 60)
    # About 0.5 s a document, two at a time: the run would take about 10 s.
    slowish = SimModel(model="steady", per_request_tps=400, aggregate_tps=800, max_batch=2)
    with fleet(slowish) as (server,):
        workers = 2
        config = config_file(tmp_path, [server], workers_per_model=workers, claim_size=4)
        process = start_cli(tmp_path, synced.parent, config)
        wait_until(lambda: server.snapshot().answered >= 6)
        code, output, took = stop(process)
        asked_first = server.snapshot().requests
        assert code == exit_code("SIGTERM") == 143, output
        assert took < STOP_WITHIN_S, output
        assert_clean(output)
        line = next(line for line in output.splitlines() if "stopped by SIGTERM" in line)
        done = int(line.split("stopped by SIGTERM: ")[1].split(" done")[0])
        left = int(line.split(", ")[-1].split(" left")[0])
        # Answers the server had sent may still have been on their way to a worker, whose
        # request the stop cancels: at most one per worker.
        assert 6 - workers <= done < 40 and done + left == 40, line
        written = pages(tmp_path / "wiki")
        assert len(written) == done, "every answer that came back has its page"

        server.reset_stats()
        process = start_cli(tmp_path, synced.parent, config)
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 0, output
        asked_again = set(server.request_log())
    assert len(pages(tmp_path / "wiki")) == 40
    titles_done = {f"# Note {int(Path(page).stem[1:])}" for page in written}
    assert not titles_done & asked_again, "the next run asked a model again for a finished page"
    assert len(asked_again) == 40 - done and asked_first >= done


def test_sigterm_while_workers_wait_at_the_end_of_a_run(tmp_path: Path) -> None:
    synced = tmp_path / "synced" / "c"
    synced.mkdir(parents=True)
    # Long, but one request: the slow model holds the whole of it.
    (synced / "a-long.md").write_text("# Long\n\n" + "a long document " * 1000)
    for i in range(5):
        (synced / f"short-{i}.md").write_text(f"# Short {i}\n\nA short note {i}.")
    # The slow model is first in the fleet, so its worker takes the long document at the start
    # and holds it for minutes; the fast one does the rest, then waits at the end of the run.
    slow = SimModel(model="slow", latency_s=300.0, per_request_tps=5000, aggregate_tps=50_000)
    fast = SimModel(model="fast", per_request_tps=300, aggregate_tps=3000)
    with fleet(slow, fast) as servers:
        config = config_file(tmp_path, servers, workers_per_model=1, claim_size=1)
        process = start_cli(tmp_path, synced.parent, config)
        wait_until(lambda: servers[1].snapshot().answered >= 5)
        time.sleep(0.5)  # the fast model's worker is now waiting: nothing is left unstarted
        code, output, took = stop(process)
    assert code == 143, output
    assert took < STOP_WITHIN_S, output
    assert_clean(output)
    assert "stopped by SIGTERM: 5 done, 1 left for the next run" in output, output
    assert len(pages(tmp_path / "wiki")) == 5


def test_sigterm_while_a_first_run_indexes_its_corpus(tmp_path: Path) -> None:
    """A first run indexes the whole corpus before its first request; a signal then ends the
    planning pass at its next group of documents. What was indexed is kept (and nothing is
    pruned: the pass did not see the whole tree), no model is asked, and the run exits 143."""
    synced = tmp_path / "synced" / "c"
    synced.mkdir(parents=True)
    notes = 12_000  # several seconds of indexing, in batches of 2,048
    for i in range(notes):
        (synced / f"n{i:05}.md").write_text(f"# Note {i}\n\nTopic {i % 97} and item {i}.\n")
    related = tmp_path / "wiki" / ".wiki_assets" / "related.sqlite"

    def indexed() -> int:
        if not related.exists():
            return 0
        with sqlite3.connect(f"file:{related}?mode=ro", uri=True) as db:
            try:
                return int(db.execute("SELECT count(*) FROM docs").fetchone()[0])
            except sqlite3.OperationalError:  # the tables are not there yet
                return 0

    with fleet(SimModel(model="instant", instant=True)) as (server,):
        config = config_file(tmp_path, [server])
        process = start_cli(tmp_path, synced.parent, config)
        wait_until(lambda: indexed() > 0)  # the first batch is committed
        code, output, took = stop(process)
        asked = server.snapshot().requests
    assert code == 143, output
    assert took < STOP_WITHIN_S, output
    assert_clean(output)
    assert "stopped by SIGTERM: 0 done" in output, output
    assert 0 < indexed() < notes, "the pass stopped before the end of the tree"
    assert asked == 0 and not pages(tmp_path / "wiki")
