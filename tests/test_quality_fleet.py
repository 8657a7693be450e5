"""A fleet of a faithful and a fabricating model, run through Dagster over HTTP: the per-model
figures tell them apart (verified shares, flagged pages and their reasons, in the run's metadata
and in `wiki-assets runs`), and the fabricating model's pages are the ones under "Needs review"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import quote

import dagster as dg
from conftest import Workspace, summarizer_for

from wiki_assets.cli.history import runs_table
from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine.wiki.audit import FLAGGED_SHARE, front_matter, pages_of
from wiki_assets.simulator import SimModel, SimServer

# Their pages are real text of 300 to 800 tokens: 1,024 leaves room for the longest whole page
# (a page cut at the cap is flagged whichever model wrote it).
# flagged_pages="keep": the fabricating model's pages stay its own (the default would ask the
# faithful model again, see test_flagged_pages.py).
DIALS = IngestConfig(
    flush_seconds=0.2, workers_per_model=2, claim_size=2, max_tokens=1024, flagged_pages="keep"
)


def test_per_model_quality_separates_a_faithful_from_a_fabricating_model(
    workspace: Workspace, instance: dg.DagsterInstance
) -> None:
    faithful = SimModel(model="faithful", behaviour="faithful", per_request_tps=5_000)
    fabricating = SimModel(model="fabricating", behaviour="fabricating", per_request_tps=5_000)
    with SimServer(faithful) as one, SimServer(fabricating) as other:
        outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(one, other), DIALS)
    assert outcome.success, outcome.error
    metadata = outcome.metadata
    # summarizer_for names them sim0 (faithful) and sim1 (fabricating); both took documents.
    assert metadata["model/sim0/docs"] > 0 and metadata["model/sim1/docs"] > 0
    assert metadata["model/sim0/verified_share"] >= 0.9
    assert metadata["model/sim1/verified_share"] <= 0.1
    per_model = {key: value for key, value in metadata.items() if key.startswith("model/")}
    assert metadata["model/sim0/flagged"] == 0, (metadata["hedged"], per_model)
    assert metadata["model/sim1/flagged"] == metadata["model/sim1/docs"]
    assert metadata["model/sim1/flagged_unverified_points"] == metadata["model/sim1/docs"]
    assert metadata["model/sim1/flagged_ungrounded_summary"] == metadata["model/sim1/docs"]
    assert metadata["model/sim0/flagged_ungrounded_summary"] == 0
    assert metadata["flagged"] == metadata["model/sim1/docs"]

    # The pages say the same: the fabricating model's are flagged, and listed under Needs review.
    index = (workspace.wiki / "index.md").read_text(encoding="utf-8")
    review = index.split("## Needs review", 1)[1].split("## By collection", 1)[0]
    flagged = []
    for page in pages_of(workspace.wiki):
        meta = front_matter(page.read_text(encoding="utf-8"))
        name = page.relative_to(workspace.wiki).as_posix()
        if meta["model"] == "fabricating":
            assert meta["verdict"] == "flagged" and "unverified_points" in meta["flags"], name
            flagged.append(name)
        else:
            assert meta["verdict"] == "ok", (name, meta["flags"])
            assert meta["points_verified"] == meta["points_total"] > 0, name
    # (Links are quoted: the sample's zip holds Korean names.)
    assert flagged and all(f"({quote(name)})" in review for name in flagged)

    # `wiki-assets runs` shows the same figures, one quality entry per model.
    row = runs_table(instance).row(0, named=True)
    assert row["flagged"] == len(flagged)
    quality = dict(part.split(" ", 1) for part in row["quality"].split("; "))
    # The faithful model's prose is its documents' own sentences: all supported.
    assert quality["sim0"] == "verified 1.00 · supported 1.00 · flagged 0"
    # Its invented points are not verified, its invented prose is in no line of the documents,
    # and its sentences state figures the documents never do: each says so.
    assert quality["sim1"] == (
        f"verified 0.00 · supported 0.00 · flagged {len(flagged)} "
        f"(unverified_points {len(flagged)}, "
        f"ungrounded_summary {len(flagged)}, unsupported_prose {len(flagged)})"
    )

    # The flagged_share asset check warns (half the pages are flagged, past 0.2), on a
    # collection whose pages the fabricating model wrote...
    history = instance.event_log_storage.get_asset_check_execution_history(
        dg.AssetCheckKey(dg.AssetKey("wiki_pages"), FLAGGED_SHARE.name), limit=100
    )
    evaluations = [r.event.dagster_event.event_specific_data for r in history if r.event]  # type: ignore[union-attr]
    check = next(evaluation for evaluation in evaluations if not evaluation.passed)
    assert check.severity == dg.AssetCheckSeverity.WARN

    # A result per collection: the share of its own pages flagged.
    def collection(name: str) -> str:
        return name.split("/")[0] if "/" in name else "_root"

    pages = [page.relative_to(workspace.wiki).as_posix() for page in pages_of(workspace.wiki)]
    mine = [name for name in pages if collection(name) == check.partition]
    assert mine, check.partition
    assert check.metadata["share"].value == round(
        len([name for name in flagged if collection(name) == check.partition]) / len(mine), 3
    )
    # ...and so does `wiki-assets check`, which exits 0 on warnings; past a higher threshold it
    # passes.
    for threshold, passed in (("0.2", False), ("0.9", True)):
        done = subprocess.run(
            [sys.executable, "-m", "wiki_assets.cli", "check", "--synced", str(workspace.synced),
             "--wiki", str(workspace.wiki), "--max-flagged-share", threshold, "--json"],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, "DAGSTER_HOME": str(workspace.home)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        checks = {c["check"]: c for c in json.loads(done.stdout)["checks"]}
        assert checks[FLAGGED_SHARE.name]["passed"] is passed
        assert len(checks[FLAGGED_SHARE.name]["findings"]) == (0 if passed else len(flagged))
