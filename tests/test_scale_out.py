"""Scaling out: per-document state in PostgreSQL as well as SQLite, fleet-wide model limits shared
by parallel runs, and the ingest flow on a Dagster instance whose storage is PostgreSQL (the
deployment layout of deploy/postgres/dagster.yaml)."""

from __future__ import annotations

import shutil
import threading
import time
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest
from conftest import NO_E5, PROJECT, SAMPLE_COLLECTIONS, StoreFor, Workspace, summarizer_for

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.defs.sync import PARTITION_RANGE_END, PARTITION_RANGE_START, SyncPlan
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.defs.wiki_pages.backfill import backfill_policy
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, IngestReport, ingest
from wiki_assets.engine.state.journal import FAILED, WRITTEN, Journal
from wiki_assets.engine.state.leases import WorkerLeases
from wiki_assets.engine.state.store import JOURNAL_FILE, StateStore
from wiki_assets.simulator import SimModel, SimServer

FAST = IngestConfig(flush_seconds=0.2, workers_per_model=4, claim_size=4)


def test_journal_records_and_reads_back_on_either_store(
    tmp_path: Path, store_for: StoreFor
) -> None:
    store = store_for(tmp_path / "wiki")
    related = [{"path": "c/z.md", "reason": "z"}, {"path": "c/b.md", "reason": "b"}]
    result = {"title": "A", "related": related}
    with Journal(store) as journal:
        journal.record_summary(
            path="c/a.md", collection="c", content_hash="h1", fingerprint="f",
            page="c/a.md", model="m", result=result,
        )  # fmt: skip
        journal.record_failure(
            path="d/x.md", collection="d", content_hash="h2", fingerprint="f", reason="bad bytes"
        )
        journal.mark_written(["c/a.md"])
    with Journal(store) as journal:  # a new connection: everything was committed
        entry = journal.get("c/a.md")
        assert entry is not None and entry.status == WRITTEN and entry.result == result
        # The model's order, not alphabetical.
        assert journal.links_from("c/a.md") == [("c/z.md", "z"), ("c/b.md", "b")]
        assert journal.links_to("c/b.md") == ["c/a.md"]
        assert journal.page_owner("c/a.md") == "c/a.md"
        failed = journal.get("d/x.md")
        assert failed is not None and failed.status == FAILED and failed.reason == "bad bytes"
        assert journal.collections() == {"c", "d"}
        # A new summary replaces the old row and its links.
        journal.record_summary(
            path="c/a.md", collection="c", content_hash="h3", fingerprint="f",
            page="c/a.md", model="m", result={"title": "A2", "related": []},
        )  # fmt: skip
        assert journal.links_from("c/a.md") == [] and journal.links_to("c/b.md") == []
        journal.forget(["c/a.md"])
        assert journal.get("c/a.md") is None and list(journal.paths_in(["c"])) == []
    assert (store.state_dir / JOURNAL_FILE).exists() == (store.url is None)


def test_worker_leases_bound_a_model_across_holders_and_expire(
    tmp_path: Path, store_for: StoreFor
) -> None:
    store = store_for(tmp_path / "wiki")
    first, second = WorkerLeases(store, ttl_s=0.5), WorkerLeases(store, ttl_s=0.5)
    try:
        taken = [first.try_acquire("m", 3), second.try_acquire("m", 3), first.try_acquire("m", 3)]
        assert sorted(taken) == [0, 1, 2]  # type: ignore[type-var]
        assert second.try_acquire("m", 3) is None, "a fourth request would exceed the limit"
        assert first.in_use("m") == 3
        assert second.try_acquire("other", 3) == 0, "limits are per model"
        first.release("m", taken[0])  # type: ignore[arg-type]
        assert second.try_acquire("m", 3) == taken[0]
        # A holder that stops renewing (a killed run) loses its leases after their time.
        time.sleep(0.7)
        assert second.renew() == 3  # leases 1 and 0 of "m", and one of "other"
        assert first.in_use("m") == 2
        assert second.try_acquire("m", 3) == taken[2], "the silent holder's lease is free again"
    finally:
        first.close()
        second.close()
    assert WorkerLeases(store).in_use("m") == 0, "closing gives every lease back"


def corpus(root: Path, collections: list[str], per_collection: int) -> list[str]:
    paths = []
    for name in collections:
        (root / name).mkdir(parents=True)
        for i in range(per_collection):
            (root / name / f"doc-{i:03}.md").write_text(f"# {name} {i}\n\nAbout {name} {i}. " * 8)
            paths.append(f"{name}/doc-{i:03}.md")
    return paths


def test_parallel_runs_keep_each_model_under_its_fleet_wide_limit(
    tmp_path: Path, store_for: StoreFor
) -> None:
    """Three runs at once, each with 4 workers per model, on two models limited to 3 and 2 requests
    in flight in all: the servers never see more, the limits are used to the full, and every
    document is asked for exactly once."""
    collections = ["a", "b", "c"]
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    documents = corpus(synced, collections, 16)
    store = store_for(wiki)
    limits = {"big": 3, "small": 2}
    reports: list[IngestReport] = []
    errors: list[BaseException] = []
    with (
        SimServer(SimModel(model="big", latency_s=0.03, per_request_tps=8000)) as big,
        SimServer(SimModel(model="small", latency_s=0.05, per_request_tps=4000)) as small,
    ):
        endpoints = [
            Endpoint(name=s.sim.model, base_url=s.base_url, model=s.sim.model,
                     max_in_flight=limits[s.sim.model])
            for s in (big, small)
        ]  # fmt: skip

        def run(collection: str) -> None:
            try:
                reports.append(
                    ingest(
                        corpus=Corpus(synced, [collection]), wiki_root=wiki,
                        fleet=Fleet(endpoints), store=store,
                        # "keep" and no judge: the simulator's pages are flagged and their
                        # sentences unchecked (no second opinion, no judge's request).
                        dials=Dials(
                            workers_per_model=4, claim_size=2, flush_seconds=0.2,
                            flagged_pages="keep", judge_share=0.0,
                        ),
                    )
                )  # fmt: skip
            except BaseException as error:  # reported below, with the others' results
                errors.append(error)

        threads = [threading.Thread(target=run, args=(name,)) for name in collections]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        stats = {s.sim.model: s.snapshot() for s in (big, small)}
        asked = Counter(
            line.removeprefix("Document: ") for s in (big, small) for line in s.request_log()
        )
    assert not errors, errors
    for model, limit in limits.items():
        assert stats[model].peak_in_flight == limit, (model, stats[model].peak_in_flight)
    # Once each, but for a request raced at the tail (a hedge: counted in the figures). A hedge
    # the first answer overtakes before it is sent is cancelled unseen by the server.
    hedged = sum(report.tally.hedged for report in reports)
    assert sorted(asked) == documents
    assert len(documents) <= sum(asked.values()) <= len(documents) + hedged
    assert set(asked.values()) <= {1, 2}
    assert sum(report.count for report in reports) == len(documents)
    with Journal(store) as journal:
        assert sorted(entry.path for entry in journal.pages()) == documents
    assert WorkerLeases(store).in_use(endpoints[0].identity) == 0


def test_backfill_policy_and_schedule_split_runs_by_collections_per_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan = SyncPlan(states=[], added=[], pending=["a", "b", "c", "d", "e"])
    monkeypatch.delenv("WIKI_ASSETS_COLLECTIONS_PER_RUN", raising=False)
    assert backfill_policy().max_partitions_per_run is None  # one run for any backfill
    (one,) = plan.run_requests(None)
    assert (one.tags[PARTITION_RANGE_START], one.tags[PARTITION_RANGE_END]) == ("a", "e")
    monkeypatch.setenv("WIKI_ASSETS_COLLECTIONS_PER_RUN", "2")
    assert backfill_policy().max_partitions_per_run == 2
    requests = plan.run_requests(2)
    ranges = [(r.tags[PARTITION_RANGE_START], r.tags[PARTITION_RANGE_END]) for r in requests]
    assert ranges == [("a", "b"), ("c", "d"), ("e", "e")]
    monkeypatch.setenv("WIKI_ASSETS_COLLECTIONS_PER_RUN", "zero")
    with pytest.raises(ValueError, match="positive integer"):
        backfill_policy()


def postgres_home(tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DAGSTER_HOME holding the documented deployment dagster.yaml, its variables set."""
    home = tmp_path / "dagster_home_pg"
    home.mkdir()
    shutil.copy(PROJECT / "deploy" / "postgres" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    url = url.replace("postgresql://", "postgresql+psycopg2://")  # one URL for both, as documented
    monkeypatch.setenv("DAGSTER_PG_URL", url)
    monkeypatch.setenv("WIKI_ASSETS_STATE_URL", url)
    monkeypatch.setenv("WIKI_ASSETS_MAX_CONCURRENT_RUNS", "2")
    return home


def test_the_ingest_flow_on_a_postgres_instance(
    tmp_path: Path,
    workspace: Workspace,
    pg_database: str,
    sim: SimServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = postgres_home(tmp_path, pg_database, monkeypatch)
    corpus_resource = CorpusResource(
        synced_root=str(workspace.synced), wiki_root=str(workspace.wiki)
    )
    store = corpus_resource.state_store()
    assert store.url and store.url.endswith(pg_database.split("//", 1)[1])
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        outcome = sync_then_ingest(instance, corpus_resource, summarizer_for(sim), FAST)
        assert outcome.success, outcome.error
        documents = workspace.documents()
        assert outcome.metadata["count"] == len(documents)
        assert outcome.metadata["docs_per_sec"] > 0
        assert len(workspace.pages()) == len(documents) + 1  # and index.md
        again = sync_then_ingest(instance, corpus_resource, summarizer_for(sim), FAST)
        assert again.success and again.run_id is None, "nothing changed: no run"
        runs = instance.get_runs()
        assert [run.run_id for run in runs] == [outcome.run_id]
        materialized = instance.fetch_materializations(dg.AssetKey("wiki_pages"), limit=10)
        assert {record.partition_key for record in materialized.records} == set(
            outcome.run_partitions
        )
    # The per-document state is in PostgreSQL, not in a SQLite file beside the pages.
    with Journal(store) as journal:
        assert sorted(entry.path for entry in journal.pages()) == documents
    assert not (workspace.wiki / ".wiki_assets" / JOURNAL_FILE).exists()
    assert (
        StateStore(workspace.wiki / ".wiki_assets", pg_database)
        .describe()
        .startswith("postgres 127.0.0.1:")
    )


@pytest.mark.server
def test_a_backfill_runs_as_parallel_runs_that_share_the_model_limit(
    tmp_path: Path, workspace: Workspace, pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`dagster dev` on the PostgreSQL instance: a backfill of every collection becomes one run per
    collection, which Dagster's run queue executes two at a time; each run has 4 workers, but the
    model never has more than its 2 fleet-wide workers in flight, and every document is summarized
    exactly once."""
    from test_dagster_server import LOCATION, start_dev, stop_dev, wait_for

    from wiki_assets.defs.sync import sync
    from wiki_assets.engine.llm.local_server import EMBEDDED_MODEL

    home = postgres_home(tmp_path, pg_database, monkeypatch)
    limit, parallel = 2, 2
    env = {
        "WIKI_ASSETS_COLLECTIONS_PER_RUN": "1",
        "WIKI_ASSETS_MAX_CONCURRENT_RUNS": str(parallel),
        "WIKI_ASSETS_CRON": "0 0 1 1 *",  # no schedule tick during the test
    }
    # Slow enough (1.5 s a request: a run lasts longer than the daemon takes to launch the next
    # one, even on a busy machine) that the runs overlap; the simulator serves the embedded
    # model's id so that nothing counts as stale for the definitions' default summarizer.
    sim_model = SimModel(model=EMBEDDED_MODEL, latency_s=1.5, per_request_tps=20_000)
    with SimServer(sim_model) as server:
        models = [
            {"name": "sim", "base_url": server.base_url, "model": EMBEDDED_MODEL,
             "max_in_flight": limit}
        ]  # fmt: skip
        with dg.DagsterInstance.from_config(str(home)) as instance:
            plan = sync(instance, workspace.corpus, summarizer_for(server))
        collections = [state.name for state in plan.states]
        assert len(collections) == len(SAMPLE_COLLECTIONS)

        dev = start_dev(tmp_path, home, workspace.synced, workspace.wiki, env)
        try:

            def location_loaded() -> bool | None:
                try:
                    data = dev.graphql(
                        "{ workspaceOrError { ... on Workspace {"
                        " locationEntries { loadStatus } } } }"
                    )
                except OSError:
                    return None
                entries = data["workspaceOrError"]["locationEntries"]
                return True if [e["loadStatus"] for e in entries] == ["LOADED"] else None

            wait_for(f"the code location {LOCATION}", 120, location_loaded, dev)
            launched = dev.graphql(
                """mutation($params: LaunchBackfillParams!) {
                  launchPartitionBackfill(backfillParams: $params) {
                    __typename ... on LaunchBackfillSuccess { backfillId }
                    ... on PythonError { message } } }""",
                {
                    "params": {
                        "partitionNames": collections,
                        "assetSelection": [{"path": ["wiki_pages"]}],
                        "runConfigData": {
                            "ops": {"wiki_pages": {"config": {"flush_seconds": 0.2}}},
                            "resources": {"summarizer": {"config": {"models": models, **NO_E5}}},
                        },
                    }
                },
            )["launchPartitionBackfill"]
            assert launched["__typename"] == "LaunchBackfillSuccess", launched

            def backfill_done() -> dict | None:
                backfill = dev.graphql(
                    """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
                         ... on PartitionBackfill { status runs(limit: 20) { runId status } }
                       } }""",
                    {"id": launched["backfillId"]},
                )["partitionBackfillOrError"]
                return None if backfill["status"] in ("REQUESTED", "CANCELING") else backfill

            backfill = wait_for("the backfill to finish", 300, backfill_done, dev)
        finally:
            leftovers = stop_dev(dev)
        stats = server.snapshot()
        asked = Counter(line.removeprefix("Document: ") for line in server.request_log())
    assert leftovers == []
    assert backfill["status"] == "COMPLETED_SUCCESS", (backfill, dev.output()[-3000:])
    assert len(backfill["runs"]) == len(collections), "one run per collection"
    assert {run["status"] for run in backfill["runs"]} == {"SUCCESS"}
    with dg.DagsterInstance.from_config(str(home)) as instance:
        records = instance.get_run_records(
            dg.RunsFilter(run_ids=[run["runId"] for run in backfill["runs"]])
        )
    spans = sorted((r.start_time, r.end_time) for r in records if r.start_time and r.end_time)
    assert len(spans) == len(collections)
    overlapping = (
        max(sum(1 for start, end in spans if start < moment < end) for moment, _ in spans) + 1
    )  # the run starting at that moment
    assert overlapping >= parallel, f"runs never ran in parallel: {spans}"
    assert max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans) <= parallel
    assert stats.peak_in_flight == limit, "the shared limit held across the parallel runs"
    assert sorted(asked) == workspace.documents() and set(asked.values()) == {1}
