"""Changing the fleet never silently redoes the wiki: a model removed from the fleet leaves its
pages current (the sync plans nothing, so no run is started), and the ``redo_models`` dial redoes
exactly that model's pages on the models still in the fleet. The one exception is the demo's
compact pages (the embedded model's shape): a fleet that writes full pages redoes them, and the
plan says so with the reason "page shape", as the README states. A page whose settings changed
gives the setting's name as its reason (``max_tokens``, ``language``). Pages and the index are
written with the mode the umask gives a new file (0644 under 022), not the temporary file's
0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from conftest import Workspace, summarizer_for

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.sync import sync
from wiki_assets.defs.wiki_pages import IngestConfig
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


def test_moving_from_the_compact_demo_model_to_a_fleet_redoes_its_pages_for_page_shape(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer, second_sim: SimServer
) -> None:
    # The embedded model's shape, on a simulated model: compact pages, prose in English only.
    demo = summarizer_for(second_sim, page_shape="compact", prose_languages=["English"])
    assert sync_then_ingest(instance, workspace.corpus, demo, FAST).success
    fleet = summarizer_for(sim)  # full pages
    planned = sync(instance, workspace.corpus, fleet, dials=FAST)
    documents = len(workspace.documents())
    assert sum(state.to_summarize for state in planned.states) == documents
    assert {reason for state in planned.states for reason in state.reasons} == {"page shape"}
    # The README states this rule where it says what changing the fleet redoes.
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme.split())
    assert "a fleet with no `compact` model redoes them" in said and '"page shape"' in said


def test_a_changed_setting_is_named_as_the_reason(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    fleet = summarizer_for(sim)
    assert sync_then_ingest(instance, workspace.corpus, fleet, FAST).success
    documents = len(workspace.documents())
    for changed, reason in (
        ({"max_tokens": 321}, "max_tokens"),
        ({"language": "ko"}, "language"),
        ({"max_tokens": 321, "language": "ko"}, "max_tokens, language"),
    ):
        dials = IngestConfig(**{**FAST.model_dump(), **changed})
        planned = sync(instance, workspace.corpus, fleet, dials=dials)
        reasons: dict[str, int] = {}
        for state in planned.states:
            for why, count in state.reasons.items():
                reasons[why] = reasons.get(why, 0) + count
        assert reasons == {reason: documents}, changed


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
