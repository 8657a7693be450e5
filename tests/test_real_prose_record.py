"""The recorder of the labelled real prose, against the simulator's models over HTTP: a new
labelling round records each model's pages of the documents no earlier answer of that model is
about, so a second model's pages of the same documents belong to the same round."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.real_prose_record import HANDBOOK, document_text, record
from wiki_assets.engine import Endpoint
from wiki_assets.simulator import SimModel, SimServer


def test_new_documents_skips_a_page_only_where_the_same_model_wrote_one(tmp_path: Path) -> None:
    out = tmp_path / "answers.jsonl"
    documents = len([path for path in HANDBOOK.iterdir() if path.is_file()])
    with (
        SimServer(SimModel(model="sim-a", instant=True)) as a,
        SimServer(SimModel(model="sim-b", instant=True)) as b,
    ):
        first = Endpoint(name="a", base_url=a.base_url, model="sim-a")
        second = Endpoint(name="b", base_url=b.base_url, model="sim-b")
        assert record(first, out, ["handbook"], new_documents=True) == documents
        before = out.read_text("utf-8")
        assert record(second, out, ["handbook"], new_documents=True) == documents
        assert record(first, out, ["handbook"], new_documents=True) == 0
    assert out.read_text("utf-8").startswith(before)  # lines are appended, never rewritten
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert {(row["model"], row["corpus"]) for row in rows} == {
        ("sim-a", "handbook"),
        ("sim-b", "handbook"),
    }
    assert len({row["source"] for row in rows}) == documents
    # Each page's document is read back as the run read it (the benchmark checks against it).
    korean = next(row for row in rows if row["source"].endswith("pantry-ko.md"))
    assert "탕비실" in document_text(korean["corpus"], korean["source"])
