"""Shared fixtures: a copy of the sample corpus, a real SQLite Dagster instance, and simulated
OpenAI-compatible servers over HTTP (the project's own, not mocks)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from wiki_assets.defs.resources import CorpusResource, ModelConfig, SummarizerResource
from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.record import Page
from wiki_assets.simulator import SimModel, SimServer

PROJECT = Path(__file__).resolve().parents[1]
SAMPLE = PROJECT / "synced"
# The sample's collections, in the order the sync registers them as partitions.
SAMPLE_COLLECTIONS = sorted({doc.collection for doc in scan(SAMPLE)})


@dataclass
class Workspace:
    synced: Path
    wiki: Path
    home: Path

    @property
    def corpus(self) -> CorpusResource:
        return CorpusResource(synced_root=str(self.synced), wiki_root=str(self.wiki))

    def documents(self) -> list[str]:
        """The synced files that are documents (not a stylesheet or an export's page list)."""
        return sorted(doc.path for doc in scan(self.synced))

    def pages(self) -> list[str]:
        return sorted(
            p.relative_to(self.wiki).as_posix()
            for p in self.wiki.rglob("*.md")
            if ".wiki_assets" not in p.parts
        )


@pytest.fixture(scope="session")
def empty_project_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    empty = tmp_path_factory.mktemp("config") / "no-project-file.yaml"
    empty.write_text("")
    return empty


@pytest.fixture(autouse=True)
def no_project_file(empty_project_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests configure their fleet themselves: a developer's own wiki_assets.yaml (or a
    WIKI_ASSETS_CONFIG in the environment) must not reach them. Tests of the project file set the
    variable again."""
    monkeypatch.setenv("WIKI_ASSETS_CONFIG", str(empty_project_file))


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    synced = tmp_path / "synced"
    shutil.copytree(SAMPLE, synced)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    return Workspace(synced=synced, wiki=tmp_path / "wiki", home=home)


@pytest.fixture
def instance(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Iterator[dg.DagsterInstance]:
    """A real SQLite-backed instance in a temporary DAGSTER_HOME (the CLI finds it there too)."""
    monkeypatch.setenv("DAGSTER_HOME", str(workspace.home))
    with dg.instance_for_test(temp_dir=str(workspace.home)) as test_instance:
        yield test_instance


@pytest.fixture
def sim() -> Iterator[SimServer]:
    """A fast simulated model: answers in milliseconds, but with real HTTP and batching."""
    with SimServer(
        SimModel(model="sim-fast", per_request_tps=20_000, aggregate_tps=200_000)
    ) as server:
        yield server


# The tests' fleets link by n-grams alone: the embedded e5 (on by default for any fleet) is
# tested where links by meaning are what is tested (test_mixed_mirror, test_links_across_languages),
# not started beside every simulated run.
NO_E5 = {"embedded_embeddings": False}


def summarizer_for(*servers: SimServer, **overrides: object) -> SummarizerResource:
    return SummarizerResource(
        models=[
            ModelConfig(
                name=f"sim{index}",
                base_url=server.base_url,
                model=server.sim.model,
                **overrides,  # type: ignore[arg-type]
            )
            for index, server in enumerate(servers)
        ],
        **NO_E5,  # type: ignore[arg-type]
    )


POSTGRES_ENV = "WIKI_ASSETS_TEST_POSTGRES"


def write_project(path: Path, sim: SimServer, synced: Path, wiki: Path, **dials: object) -> Path:
    """A project file (``wiki_assets.yaml``): ``sim`` as the whole fleet, the corpus roots and the
    dials under ``ops.wiki_pages.config``."""
    model = {"name": "sim", "base_url": sim.base_url, "model": sim.sim.model}
    config = {
        "resources": {
            "summarizer": {"config": {"models": [model], **NO_E5}},
            "corpus": {"config": {"synced_root": str(synced), "wiki_root": str(wiki)}},
        },
        "ops": {"wiki_pages": {"config": dials}},
    }
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The test PostgreSQL server that .ci/run starts (scripts/test-postgres). Outside CI a
    machine without one skips these tests; in CI a missing server fails them."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"{POSTGRES_ENV} is not set: .ci/run starts PostgreSQL for these tests")
        pytest.skip(f"no PostgreSQL: run `export {POSTGRES_ENV}=$(scripts/test-postgres)`")
    return url


@pytest.fixture
def pg_schema(postgres_url: str) -> Iterator[str]:
    """A fresh schema of the test database for one test, dropped afterwards."""
    import psycopg2

    schema = f"test_{uuid.uuid4().hex[:10]}"
    yield schema
    with psycopg2.connect(postgres_url) as connection, connection.cursor() as cursor:
        cursor.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[str]:
    """URL of a fresh database for one test (a whole Dagster instance), dropped afterwards."""
    import psycopg2
    from psycopg2 import sql

    name = f"test_{uuid.uuid4().hex[:10]}"

    def admin(statement: sql.Composable) -> None:
        connection = psycopg2.connect(postgres_url)
        connection.autocommit = True  # CREATE/DROP DATABASE cannot run in a transaction
        try:
            with connection.cursor() as cursor:
                cursor.execute(statement)
        finally:
            connection.close()

    admin(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield postgres_url.rsplit("/", 1)[0] + "/" + name
    admin(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


StoreFor = Callable[[Path], StateStore]


@pytest.fixture(params=["sqlite", "postgres"])
def store_for(request: pytest.FixtureRequest) -> StoreFor:
    """Runs a test once per state store: SQLite in the wiki's state folder, and PostgreSQL."""
    if request.param == "sqlite":
        return lambda wiki: StateStore(wiki / ".wiki_assets")
    url = request.getfixturevalue("postgres_url")
    schema = request.getfixturevalue("pg_schema")
    return lambda wiki: StateStore(wiki / ".wiki_assets", url, schema)


@dataclass
class Tick:
    """What one daily tick led to: the sync_job run the schedule requested, then what the sensor
    ingest_after_sync asked for after it (the ingest runs, or why none)."""

    sync: dg.ExecuteInProcessResult
    run_requests: list[dg.RunRequest]
    skip_message: str | None


def daily_tick(defs: dg.Definitions, instance: dg.DagsterInstance) -> Tick:
    """The daily chain as the daemon runs it, in this process: the schedule's evaluation, the
    sync_job run it requests, and the sensor's evaluation on that run's success."""
    schedule = defs.resolve_schedule_def("daily_sync_then_ingest")
    with dg.build_schedule_context(instance=instance) as context:
        (request,) = schedule.evaluate_tick(context).run_requests or []
    sync = defs.resolve_job_def(request.job_name or "sync_job").execute_in_process(
        instance=instance, run_config=request.run_config, tags=request.tags
    )
    assert sync.success
    run = instance.get_run_by_id(sync.run_id)
    success = next(
        record.event_log_entry.dagster_event
        for record in instance.get_records_for_run(sync.run_id).records
        if record.event_log_entry.dagster_event_type == dg.DagsterEventType.RUN_SUCCESS
    )
    context = dg.build_run_status_sensor_context(
        sensor_name="ingest_after_sync", dagster_instance=instance, dagster_run=run,  # type: ignore[arg-type]
        dagster_event=success,  # type: ignore[arg-type]
    )  # fmt: skip
    result = defs.resolve_sensor_def("ingest_after_sync")(context)  # type: ignore[operator]
    if isinstance(result, dg.SkipReason):
        return Tick(sync, [], result.skip_message)
    assert isinstance(result, dg.SensorResult)
    return Tick(sync, list(result.run_requests or []), None)


def page_record(name: str = "p.md", **fields: Any) -> Page:
    """A wiki page built by hand: ``name`` (also its source), the fields a test sets, and a
    placeholder for each other field a page needs."""
    placeholders: dict[str, Any] = {
        "source": name,
        "source_hash": "h",
        "title": "T",
        "description": "D",
        "summary": "S",
        "key_points": (),
        "topics": (),
        "language": "English",
        "parts": 1,
        "model": "m",
        "prompt_version": "1",
        "generated": "now",
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "hit_max_tokens": False,
    }
    return Page(name=name, **{**placeholders, **fields})


def run_cli(
    workspace: Workspace,
    command: str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """``wiki-assets COMMAND`` on ``workspace``'s synced root and wiki, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", command, "--synced", str(workspace.synced),
         "--wiki", str(workspace.wiki), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home), **(env or {})},
    )  # fmt: skip


def check_cli(workspace: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    """``wiki-assets check`` on ``workspace``."""
    return run_cli(workspace, "check", *args, timeout=120)
