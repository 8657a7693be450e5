"""Endpoint faults against the project's simulated servers: whatever the models do (errors, 429s,
hangs, garbage, death), every document ends summarized, failed with a reason, or left for the next
run; a dead model is taken out and its documents go to the others; when every model is down the run
stops cleanly; two runs cannot work on one collection at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.store import CollectionBusy, StateStore
from wiki_assets.simulator import SimModel, SimServer, fleet

FAST = {"per_request_tps": 5000.0, "aggregate_tps": 50000.0}


def corpus(root: Path, count: int) -> Path:
    (root / "c").mkdir(parents=True)
    for i in range(count):
        (root / "c" / f"doc-{i:03}.md").write_text(f"# Doc {i}\n\nText of document {i}. " * 10)
    return root


def endpoint(server: SimServer, **fields: object) -> Endpoint:
    name = server.sim.model
    return Endpoint(name=name, base_url=server.base_url, model=name, **fields)  # type: ignore[arg-type]


def test_flaky_model_and_dead_model_still_account_for_every_document(tmp_path: Path) -> None:
    synced = corpus(tmp_path / "synced", 80)
    flaky = SimModel(
        model="flaky", error_rate=0.2, hang_rate=0.05, garbage_rate=0.05, seed=7, **FAST
    )
    dead = SimModel(model="dead", die_after=0, **FAST)
    with fleet(flaky, dead) as (flaky_server, dead_server):
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet(
                [
                    # No client retries: every hang surfaces as a timeout the engine must handle.
                    endpoint(flaky_server, timeout_s=0.5, max_retries=0),
                    endpoint(dead_server, timeout_s=0.5, max_retries=1),
                ]
            ),
            dials=Dials(workers_per_model=4, claim_size=4, flush_seconds=1, max_tokens=64),
        )
        flaky_stats = flaky_server.snapshot()
    failed = {entry["path"] for entry in report.failed}
    pages = {p.name for p in (tmp_path / "wiki" / "c").glob("*.md")}
    assert report.count + len(failed) == 80 and report.unfinished == 0
    assert pages == {f"doc-{i:03}.md" for i in range(80)} - {Path(p).name for p in failed}
    assert all(entry["reason"].startswith("model flaky:") for entry in report.failed)
    by_name = {m.name: m for m in report.models}
    assert by_name["dead"].tally.docs == 0 and by_name["dead"].breaker_trips >= 1
    assert by_name["dead"].tally.errors >= 3 and by_name["dead"].tally.failed == 0
    assert by_name["flaky"].tally.docs == report.count
    assert by_name["flaky"].tally.timeouts >= 1 and by_name["flaky"].tally.garbage >= 1
    assert report.tally.requeued >= 1
    assert flaky_stats.errors > 0 and flaky_stats.hung > 0 and flaky_stats.garbage > 0


def test_every_model_down_stops_cleanly_and_leaves_the_rest(tmp_path: Path) -> None:
    synced = corpus(tmp_path / "synced", 30)
    wiki = tmp_path / "wiki"
    # One answer each, then both die: the run cannot finish and must say so.
    dying = [SimModel(model=f"m{i}", die_after=1, **FAST) for i in range(2)]
    with fleet(*dying) as servers:
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=wiki,
            fleet=Fleet([endpoint(s, max_retries=0) for s in servers]),
            dials=Dials(workers_per_model=1, claim_size=2, flush_seconds=1, give_up_after_s=0.5),
        )
    assert report.tally.stopped is not None and "every model is down" in report.tally.stopped
    assert report.count == 2 and not report.failed
    assert report.unfinished == 28
    with Journal(StateStore(wiki / ".wiki_assets")) as journal:
        recorded = list(journal.paths_in(["c"]))
    assert len(recorded) == 2, "unfinished documents are not marked done or failed"

    # The same models, back up: pages they wrote are current, so only the rest is requested.
    with fleet(*(SimModel(model=f"m{i}", **FAST) for i in range(2))) as healthy:
        again = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=wiki,
            fleet=Fleet([endpoint(s) for s in healthy]),
            # "keep" and no judge: the simulator's pages are flagged and their sentences
            # unchecked; second opinions and judges would ask again.
            dials=Dials(flush_seconds=1, flagged_pages="keep", judge_share=0.0),
        )
        requested = [line for s in healthy for line in s.request_log()]
    assert (again.count, again.skipped, again.tally.stopped) == (28, 2, None)
    assert len(requested) == 28, "the two finished documents are not asked for again"


def test_rate_limits_are_honoured_and_everything_finishes(tmp_path: Path) -> None:
    synced = corpus(tmp_path / "synced", 30)
    limited = SimModel(model="limited", rate_limit_rate=0.3, retry_after_s=0.05, seed=3, **FAST)
    with SimServer(limited) as server:
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(server)]),
            dials=Dials(workers_per_model=4, flush_seconds=1),
        )
        stats = server.snapshot()
    assert stats.rate_limited > 0
    assert report.count + len(report.failed) == 30
    assert stats.answered == report.count


def test_a_second_run_on_the_same_collection_is_refused(tmp_path: Path) -> None:
    synced = corpus(tmp_path / "synced", 2)
    wiki = tmp_path / "wiki"
    store = StateStore(wiki / ".wiki_assets")
    # flock locks belong to an open file, so holding one here stands for another process.
    with store.collection_locks(["c"]), SimServer(SimModel(model="m", **FAST)) as server:
        with pytest.raises(CollectionBusy, match=r"'c' is being ingested by another run \(.*pid"):
            ingest(
                corpus=Corpus(synced, ["c"]),
                wiki_root=wiki,
                fleet=Fleet([endpoint(server)]),
                dials=Dials(),
            )
        assert server.snapshot().requests == 0
    assert not (wiki / "c").exists()


def test_a_fleet_that_cannot_be_reached_is_given_up_at_once_naming_each_url(
    tmp_path: Path,
) -> None:
    # Nothing listens on port 9 (discard): every connection is refused. With the default
    # give_up_after_s (60 s), a model that never answered and refuses connections is out at once.
    synced = corpus(tmp_path / "synced", 6)
    endpoints = [
        Endpoint(name=name, base_url=f"http://127.0.0.1:9/v{n}", model="m")
        for n, name in enumerate(["vllm", "gateway"], start=1)
    ]
    report = ingest(
        corpus=Corpus(synced, ["c"]),
        wiki_root=tmp_path / "wiki",
        fleet=Fleet(endpoints),
        dials=Dials(workers_per_model=2, claim_size=2, flush_seconds=1),
    )
    assert report.tally.stopped is not None
    lines = report.tally.stopped.splitlines()
    assert lines[0] == "every model is down:"
    assert lines[1].strip().startswith("vllm at http://127.0.0.1:9/v1: connection failed")
    assert lines[2].strip().startswith("gateway at http://127.0.0.1:9/v2: connection failed")
    assert report.unfinished == 6 and not report.failed
    assert report.duration_s < 15, report.duration_s  # not the 60 s of give_up_after_s
