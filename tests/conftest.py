"""Shared fixtures: a copy of the sample corpus, a real SQLite Dagster instance, and simulated
OpenAI-compatible servers over HTTP (the project's own, not mocks)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from wiki_assets.defs.resources import CorpusResource, ModelConfig, SummarizerResource
from wiki_assets.simulator import SimModel, SimServer

PROJECT = Path(__file__).resolve().parents[1]
SAMPLE = PROJECT / "synced"


@dataclass
class Workspace:
    synced: Path
    wiki: Path
    home: Path

    @property
    def corpus(self) -> CorpusResource:
        return CorpusResource(synced_root=str(self.synced), wiki_root=str(self.wiki))

    def documents(self) -> list[str]:
        return sorted(
            p.relative_to(self.synced).as_posix() for p in self.synced.rglob("*") if p.is_file()
        )

    def pages(self) -> list[str]:
        return sorted(
            p.relative_to(self.wiki).as_posix()
            for p in self.wiki.rglob("*.md")
            if ".wiki_assets" not in p.parts
        )


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
        ]
    )
