"""A judge from the fleet checks the sentences the rules leave unchecked: on two simulated models
over HTTP, one writing pages whose summary contradicts its document, the other judging."""

from __future__ import annotations

from pathlib import Path

import pytest

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.errors import ConfigurationError
from wiki_assets.engine.ingestion.figures import report_json
from wiki_assets.engine.verification.standing import Standing
from wiki_assets.engine.wiki.catalog import read_catalog
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimModel, SimServer

DOCUMENT = """# Travel policy {n}

Travel to a customer site in region {n} needs the approval of the travel desk in advance.
The travel desk books trains for any trip shorter than {hours} hours by rail.
Hotel nights are covered up to {euros} euros per night in every city of the region.
Receipts are filed in the expense tool within {days} days of the trip's end.
Meals on the road are paid by the daily allowance, not claimed one by one.
"""


def _mirror(root: Path, count: int) -> Path:
    synced = root / "synced"
    (synced / "travel").mkdir(parents=True)
    for n in range(count):
        text = DOCUMENT.format(n=n, hours=4 + n % 3, euros=120 + n, days=30 + n % 5)
        (synced / "travel" / f"policy-{n:02d}.md").write_text(text, encoding="utf-8")
    return synced


def _run(
    tmp_path: Path, judge: str = "right", behaviour: str = "contradicting", flagged: str = "keep"
) -> tuple[dict, list]:
    """Two models that write pages whose summary contradicts its document (or ``behaviour``),
    four workers each: at the end of the run, the faster model has no document left while the
    other's last requests are out, and judges the other model's pages meanwhile.

    The slower model is slower by a fixed 0.3 s per answer, not by a lower token rate: its
    answers then come well apart from the faster model's at every round, so which model takes
    the last documents, and so the idle time left to judge, does not hang on a few milliseconds
    of a busy machine's scheduling."""
    synced = _mirror(tmp_path, 24)
    sims = [SimModel(model=name, behaviour=behaviour, judge=judge, per_request_tps=400,
                     latency_s=latency)
            for name, latency in (("a", 0.0), ("b", 0.3))]  # fmt: skip
    with SimServer(sims[0]) as a, SimServer(sims[1]) as b:
        report = ingest(
            corpus=Corpus(synced, ["travel"]), wiki_root=tmp_path / "wiki",
            fleet=Fleet([Endpoint(name=server.sim.model, base_url=server.base_url,
                                  model=server.sim.model) for server in (a, b)]),
            dials=Dials(flush_seconds=0.2, flagged_pages=flagged, claim_size=1, max_tokens=1024,
                        judge_share=1.0),  # type: ignore[arg-type]
        )  # fmt: skip
    assert report.tally.stopped is None and not report.failed
    index_wiki(tmp_path / "wiki")
    return report_json(report), read_catalog(tmp_path / "wiki")


def test_the_rules_mark_a_contradicted_number_and_a_judge_settles_the_rest(tmp_path: Path) -> None:
    figures, catalog = _run(tmp_path)
    assert len(catalog) == 24
    for record in catalog:
        statuses = {s["status"] for s in record["prose"] if s["part"] == "summary"}
        # The summary's changed number is caught: the page is flagged, and says what the
        # document says instead.
        assert "contradicted" in statuses, record["prose"]
        assert record["verdict"] == "flagged" and "contradicted_prose" in record["flags"]
        said = [s for s in record["prose"] if s["status"] == "contradicted"]
        assert all(s["document_says"] for s in said)
    judged = [(r["model"], s) for r in catalog for s in r["prose"] if s["checked_by"] != "rules"]
    assert judged, "a judge settled sentences the rules left unchecked"
    assert all(model != s["checked_by"] and s["status"] != "unchecked" for model, s in judged)
    models = figures["models"]
    assert models["a"]["judgements"] + models["b"]["judgements"] > 0
    # Its controls (a line of the document, and one with its number changed) all came out right.
    assert all(m["controls_right"] == m["controls"] for m in models.values())
    assert all(0 < m["supported_share"] < 1 for m in models.values() if m["docs"])
    # The pages show it: the contradicted sentence struck through, with what the document says.
    page = (tmp_path / "wiki" / catalog[0]["page"]).read_text(encoding="utf-8")
    assert "~~" in page and "*(contradicted: the document says" in page


def test_a_judge_wrong_half_the_time_is_found_out(tmp_path: Path) -> None:
    right, right_catalog = _run(tmp_path / "right")
    coin, coin_catalog = _run(tmp_path / "coin", judge="coin")
    # Its controls come out wrong about half the time, which the run sees; its verdicts apply
    # only while its record holds, so far fewer of them reach the pages than a right judge's.
    controls = sum(m["controls"] for m in coin["models"].values())
    wrong = controls - sum(m["controls_right"] for m in coin["models"].values())
    assert controls >= 8 and 0.25 * controls <= wrong <= 0.75 * controls

    def settled(catalog: list) -> int:
        return sum(1 for r in catalog for s in r["prose"] if s["checked_by"] != "rules")

    assert settled(coin_catalog) < settled(right_catalog) / 2


def test_a_page_a_judge_flags_gets_a_second_opinion(tmp_path: Path) -> None:
    # Both models add a sentence no document says to faithful pages; the rules cannot place it,
    # the other model judges it not stated, and with flagged_pages 'retry' each page it flagged
    # goes back for a second opinion, as a first answer the rules flag does.
    figures, catalog = _run(tmp_path, behaviour="embellishing", flagged="retry")
    judged = [s for r in catalog for s in r["prose"] if s["checked_by"] != "rules"]
    assert judged and all(s["status"] == "unsupported" for s in judged)
    flagged_by_judge = sum(
        m["flags"].get("unsupported_prose", 0) for m in figures["models"].values()
    )
    assert figures["second_opinions"] >= flagged_by_judge > 0


def test_no_judge_in_a_fleet_of_one(tmp_path: Path) -> None:
    synced = _mirror(tmp_path, 3)
    with SimServer(SimModel(model="solo", behaviour="faithful")) as server:
        report = ingest(
            corpus=Corpus(synced, ["travel"]), wiki_root=tmp_path / "wiki",
            fleet=Fleet([Endpoint(name="solo", base_url=server.base_url, model="solo")]),
            dials=Dials(flush_seconds=0.2),
        )  # fmt: skip
    assert report.count == 3 and report.models[0].tally.judgements == 0
    assert report_json(report)["judgements_skipped"] == {}


def test_a_judge_that_names_no_model_of_the_fleet_is_an_error(tmp_path: Path) -> None:
    synced = _mirror(tmp_path, 1)
    with SimServer(SimModel(model="solo")) as server, pytest.raises(ConfigurationError) as raised:
        ingest(
            corpus=Corpus(synced, ["travel"]), wiki_root=tmp_path / "wiki",
            fleet=Fleet([Endpoint(name="solo", base_url=server.base_url, model="solo")]),
            dials=Dials(judge="sollo"),
        )  # fmt: skip
    assert "dial judge: 'sollo' is no model of the fleet (solo)" in str(raised.value)
    assert not (tmp_path / "wiki").exists()


def test_a_judges_standing_is_laplaces_estimate_over_its_controls() -> None:
    # Two controls right: (2 + 1) / (2 + 2) = 0.75, enough for the run to apply its verdicts as
    # it answers, not enough for the pass, which wants 6 controls before a judge is proven.
    learning = Standing()
    learning.count(2, 2)
    assert learning.trusted() and not learning.proven() and not learning.useless()
    learning.count(4, 4)
    assert learning.proven()
    # Half of 6 controls right: (3 + 1) / (6 + 2) = 0.5, below 0.6: asked no more.
    coin = Standing()
    coin.count(5, 3)
    assert not coin.useless()  # 5 controls are not yet the evidence to give up on it
    coin.count(1, 0)
    assert coin.useless() and not coin.trusted() and not coin.proven()
