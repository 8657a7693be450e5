"""`wiki-assets plan` is a dry run that calls no model and writes nothing: per collection it says
how many documents the next ingest would summarize and why, and which pages it would remove, with
an estimate of tokens and time from the fleet's recorded rates; the ingest that follows then
reports exactly those counts, per partition and in total. It asks each configured model once
whether it answers, and names those it cannot reach and why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import yaml
from conftest import Workspace, write_project

from wiki_assets.engine.llm.child_server import free_port
from wiki_assets.engine.related.embed_missing import EMBED_FIRST
from wiki_assets.simulator import SimServer


def run(
    workspace: Workspace, project: Path, *args: str, json_output: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", *args, *(["--json"] if json_output else [])],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home), "WIKI_ASSETS_CONFIG": str(project)},
    )


def test_plan_predicts_what_the_next_run_reports(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    project = write_project(
        workspace.home.parent / "wiki_assets.yaml",
        sim,
        workspace.synced,
        workspace.wiki,
        flush_seconds=0.2,
    )
    fresh = run(workspace, project, "plan")
    assert fresh.returncode == 0, fresh.stderr
    total = len(workspace.documents())
    planned = json.loads(fresh.stdout)
    assert planned["to_summarize"] == total
    assert {reason for c in planned["collections"] for reason in c["reasons"]} == {"new"}
    assert planned["estimate"]["seconds"] is None  # nothing recorded yet
    assert sim.snapshot().answered == 0 and not workspace.wiki.exists()
    assert run(workspace, project, "ingest").returncode == 0

    (workspace.synced / "people" / "leave-policy.md").write_text("# Leave\n\nNew rules.\n")
    (workspace.synced / "engineering" / "new-service.md").write_text("# A new service\n\nText.\n")
    (workspace.synced / "product" / "pricing-page-draft.md").unlink()
    answered = sim.snapshot().answered

    done = run(workspace, project, "plan")
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert sim.snapshot().answered == answered, "plan asks no model"
    by_name = {c["name"]: c for c in plan["collections"]}
    assert by_name["people"]["to_summarize"] == 1 and by_name["people"]["reasons"] == {"changed": 1}
    assert by_name["engineering"]["reasons"] == {"new": 1}
    assert by_name["product"]["removed"] == 1 and by_name["product"]["to_summarize"] == 0
    assert (plan["to_summarize"], plan["removed"]) == (2, 1)
    estimate = plan["estimate"]
    assert estimate["seconds"] > 0 and estimate["prompt_tokens"] > 0, estimate
    assert set(estimate["models"]) == {"sim"}

    ingested = run(workspace, project, "ingest")
    assert ingested.returncode == 0, ingested.stderr
    report = json.loads(ingested.stdout)
    assert (report["count"], report["removed"]) == (plan["to_summarize"], plan["removed"])
    assert sim.snapshot().answered == answered + plan["to_summarize"]
    for collection in plan["collections"]:
        if not collection["to_summarize"] and not collection["removed"]:
            continue
        (record,) = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey("wiki_pages"), asset_partitions=[collection["name"]]
            ),
            limit=1,
        ).records
        assert record.run_id == report["run_id"]
        values = record.asset_materialization.metadata  # type: ignore[union-attr]
        assert values["summarized"].value == collection["to_summarize"], collection
        assert values["removed"].value == collection["removed"], collection
        assert values["documents"].value == collection["documents"], collection


def test_plan_counts_the_documents_another_embedding_model_embeds_again(
    workspace: Workspace, instance: dg.DagsterInstance, sim: SimServer
) -> None:
    project = write_project(
        workspace.home.parent / "wiki_assets.yaml", sim, workspace.synced, workspace.wiki
    )
    config = yaml.safe_load(project.read_text())
    summarizer = config["resources"]["summarizer"]["config"]
    summarizer["embeddings"] = {"name": "sim-e", "base_url": sim.base_url, "model": "first"}
    project.write_text(yaml.safe_dump(config))
    total = len(workspace.documents())
    planned = json.loads(run(workspace, project, "plan").stdout)
    embedding = {"model": "first", "endpoint": f"sim-e at {sim.base_url}", "pages_due": 0}
    # A first run embeds every document (none is indexed yet); no run has measured the speed.
    assert planned["embeddings"] == {
        **embedding, "to_embed": total, "reason": None,
        "beside_the_requests": total > EMBED_FIRST, "docs_per_sec": None, "seconds": None,
    }  # fmt: skip
    ingested = run(workspace, project, "ingest")
    assert ingested.returncode == 0, ingested.stderr
    figures = json.loads(ingested.stdout)
    assert figures["embedded"] == total
    assert sim.snapshot().embedded_inputs == total
    # The next plan has nothing to embed, and knows the speed the run measured with the model.
    planned = json.loads(run(workspace, project, "plan").stdout)["embeddings"]
    assert (planned["to_embed"], planned["seconds"]) == (0, 0.0)
    assert planned["docs_per_sec"] == round(figures["embedded"] / figures["embedding_s"], 2)

    summarizer["embeddings"]["model"] = "second"
    project.write_text(yaml.safe_dump(config))
    again = run(workspace, project, "plan")
    assert json.loads(again.stdout)["embeddings"] == {
        **embedding, "model": "second", "to_embed": total,
        "reason": "embedding model changed from first to second",
        "beside_the_requests": total > EMBED_FIRST, "docs_per_sec": None, "seconds": None,
    }  # fmt: skip
    text = subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "plan"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "DAGSTER_HOME": str(workspace.home), "WIKI_ASSETS_CONFIG": str(project)},
    )  # fmt: skip
    assert (
        f"plan: links by meaning: {total} documents to embed by second (sim-e at {sim.base_url}) "
        "(embedding model changed from first to second), " in text.stdout
    )
    # The vectors are embedded again by the next run that summarizes anything (pages are not
    # summarized again for it).
    (workspace.synced / "people" / "leave-policy.md").write_text("# Leave\n\nNew rules.\n")
    redone = run(workspace, project, "ingest")
    assert json.loads(redone.stdout)["count"] == 1
    assert json.loads(redone.stdout)["embedded"] == total
    assert "every document again: embedding model changed from first to second" in redone.stderr


def test_plan_says_which_models_it_cannot_reach(workspace: Workspace, sim: SimServer) -> None:
    project = write_project(
        workspace.home.parent / "wiki_assets.yaml", sim, workspace.synced, workspace.wiki
    )
    config = yaml.safe_load(project.read_text())
    nobody = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    config["resources"]["summarizer"]["config"]["models"] += [
        {"name": "gone", "base_url": nobody, "model": "m"},
        {"name": "keyless", "base_url": sim.base_url, "model": "m", "api_key_env": "NO_SUCH_KEY"},
    ]
    project.write_text(yaml.safe_dump(config))
    answered = sim.snapshot().answered

    planned = run(workspace, project, "plan")
    assert planned.returncode == 0, planned.stderr
    models = {found["name"]: found for found in json.loads(planned.stdout)["models"]}
    assert models["sim"]["reachable"] and models["sim"]["problem"] is None
    assert not models["gone"]["reachable"] and models["gone"]["problem"] == "connection failed"
    assert not models["keyless"]["reachable"] and "NO_SUCH_KEY" in models["keyless"]["problem"]
    assert sim.snapshot().answered == answered, "a probe asks for no page"

    text = run(workspace, project, "plan", json_output=False)
    (line,) = [line for line in text.stdout.splitlines() if line.startswith("plan: models:")]
    assert "sim ok" in line and f"gone UNREACHABLE at {nobody} (connection failed)" in line
