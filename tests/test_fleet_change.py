"""Changing the fleet never silently redoes the wiki: a model removed from the fleet leaves its
pages current (the sync plans nothing, so no run is started), and the ``redo_models`` dial redoes
exactly that model's pages on the models still in the fleet. Pages and the index are written with
the mode the umask gives a new file (0644 under 022), not the temporary file's 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

import dagster as dg
import pytest
from conftest import Workspace, summarizer_for

from wiki_assets.defs.assets import IngestConfig
from wiki_assets.defs.runner import sync_then_ingest
from wiki_assets.defs.sync import sync
from wiki_assets.simulator import SimModel, SimServer

FAST = IngestConfig(flush_seconds=0.2, workers_per_model=2, claim_size=1)


@pytest.fixture
def second_sim() -> Iterator[SimServer]:
    with SimServer(
        SimModel(model="sim-other", per_request_tps=20_000, aggregate_tps=200_000)
    ) as server:
        yield server


def pages_by(workspace: Workspace, model: str) -> set[str]:
    return {
        page
        for page in workspace.pages()
        if f'model: "{model}"' in (workspace.wiki / page).read_text(encoding="utf-8")
    }


def test_a_removed_model_keeps_its_pages_until_asked_to_redo_them(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer, second_sim: SimServer
) -> None:
    first = sync_then_ingest(instance, workspace.corpus, summarizer_for(sim, second_sim), FAST)
    assert first.success, first.error
    others = pages_by(workspace, "sim-other")
    mine = pages_by(workspace, "sim-fast")
    assert others and mine, "both models wrote pages"

    alone = summarizer_for(sim)
    plan = sync(instance, workspace.corpus, alone, dials=FAST)
    assert plan.pending == [], "the departed model's pages are still current"
    answered = sim.snapshot().answered
    again = sync_then_ingest(instance, workspace.corpus, alone, FAST)
    assert again.run_id is None and sim.snapshot().answered == answered

    redo = IngestConfig(**{**FAST.model_dump(), "redo_models": ["sim-other"]})
    planned = sync(instance, workspace.corpus, alone, dials=redo)
    assert sum(state.to_summarize for state in planned.states) == len(others)
    assert {reason for state in planned.states for reason in state.reasons} == {"model"}
    redone = sync_then_ingest(instance, workspace.corpus, alone, redo)
    assert redone.success, redone.error
    assert redone.metadata["count"] == len(others)
    assert sim.snapshot().answered == answered + len(others)
    assert pages_by(workspace, "sim-other") == set()
    assert pages_by(workspace, "sim-fast") == mine | others


def test_pages_and_index_get_the_umask_mode(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    old = os.umask(0o022)
    try:
        assert sync_then_ingest(instance, workspace.corpus, summarizer_for(sim), FAST).success
    finally:
        os.umask(old)
    pages = workspace.pages()
    assert "index.md" in pages and len(pages) == len(workspace.documents()) + 1
    modes = {page: stat.S_IMODE((workspace.wiki / page).stat().st_mode) for page in pages}
    assert set(modes.values()) == {0o644}, modes
