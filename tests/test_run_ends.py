"""Every run ends, over real HTTP: long multi-part documents at the end of a run are started by
the model that would finish them first (the old rule left them to each other forever); a fleet
of a flaky, a healthy and a dead model accounts for every document and does not wait at the end
on requests that hang, because an idle model races them (a hedge: the first answer wins, the
other request is cancelled, one result is kept)."""

from __future__ import annotations

import threading
from pathlib import Path

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, IngestReport, ingest
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.simulator import SimModel, SimServer, fleet

PROJECT = Path(__file__).resolve().parents[1]
SAMPLE = PROJECT / "synced"
RUN_LIMIT_S = 240.0  # far beyond what any of these runs needs: past it, the run hung


def changelog(kilobytes: int, seed: int) -> str:
    """A long markdown changelog (summarized in parts), made of the sample's own sentences."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE.rglob("*.md"))]
    lines, release = ["# Changelog", ""], 0
    while sum(len(line) + 1 for line in lines) < kilobytes * 1024:
        release += 1
        lines += [f"## v{seed}.{release}.0", ""]
        text = texts[(release + seed) % len(texts)]
        lines += [f"- {line.strip()}" for line in text.splitlines() if line.strip()][:12]
        lines.append("")
    return "\n".join(lines)


def corpus(root: Path, real: int, long_kb: list[int], bad: int = 0) -> Path:
    collection = root / "c"
    collection.mkdir(parents=True)
    for i in range(real):
        (collection / f"doc-{i:03}.md").write_text(
            f"# Note {i}\n\nWhat team {i % 7} decided about topic {i}. " * 12, encoding="utf-8"
        )
    for i, size in enumerate(long_kb):
        (collection / f"changelog-{i}.md").write_text(changelog(size, i), encoding="utf-8")
    for i in range(bad):
        # Binary (NUL bytes, no byte-order mark): not a text document, it fails with a reason.
        (collection / f"broken-{i:02}.md").write_bytes(b"PK\x03\x04\x00\x00binary\x00" * 50)
    return root


def endpoint(server: SimServer, **fields: object) -> Endpoint:
    name = server.sim.model
    return Endpoint(name=name, base_url=server.base_url, model=name, **fields)  # type: ignore[arg-type]


def run_bounded(**kwargs: object) -> IngestReport:
    """``ingest`` on a thread, so a run that never ends fails the test instead of hanging it."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["report"] = ingest(**kwargs)  # type: ignore[arg-type]
        except BaseException as error:  # noqa: BLE001 - handed to the test below
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(RUN_LIMIT_S)
    assert not thread.is_alive(), f"the run did not end within {RUN_LIMIT_S:.0f} s"
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["report"]  # type: ignore[return-value]


def accounted(report: IngestReport, synced: Path, wiki: Path) -> None:
    """Every document has its page or a recorded reason."""
    failed = {f["path"] for f in report.failed}
    with Journal(StateStore(wiki / ".wiki_assets")) as journal:
        for path in sorted(p.relative_to(synced).as_posix() for p in synced.rglob("*.md")):
            entry = journal.get(path)
            assert entry is not None, f"{path} has no journal entry"
            if path in failed:
                assert entry.reason, path
            else:
                assert entry.page and (wiki / entry.page).is_file(), f"{path} has no page"


def test_two_equally_fast_models_finish_the_long_changelogs(tmp_path: Path) -> None:
    synced = corpus(tmp_path / "synced", real=56, long_kb=[258, 300, 340, 381])
    twin = {"per_request_tps": 1500.0, "aggregate_tps": 24_000.0, "max_batch": 16}
    with fleet(SimModel(model="a", **twin), SimModel(model="b", **twin)) as servers:
        report = run_bounded(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(s) for s in servers]),
            dials=Dials(workers_per_model=4, claim_size=32, flush_seconds=5, max_tokens=64),
        )
    assert report.tally.stopped is None
    assert report.count == 60 and not report.failed, report.failed
    accounted(report, synced, tmp_path / "wiki")


def test_fast_and_slow_batching_servers_end_with_every_changelog(tmp_path: Path) -> None:
    synced = corpus(tmp_path / "synced", real=98, long_kb=[265, 387])
    fast = SimModel(model="fast", per_request_tps=500, aggregate_tps=6000, max_batch=24)
    slow = SimModel(model="slow", per_request_tps=250, aggregate_tps=1000, max_batch=6)
    with fleet(fast, slow) as servers:
        report = run_bounded(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(s) for s in servers]),
            dials=Dials(workers_per_model=4, claim_size=32, flush_seconds=5, max_tokens=64),
        )
    assert report.tally.stopped is None
    assert report.count == 100 and not report.failed, report.failed
    accounted(report, synced, tmp_path / "wiki")


def test_flaky_healthy_and_dead_models_account_for_everything_without_waiting_on_hangs(
    tmp_path: Path,
) -> None:
    synced = corpus(tmp_path / "synced", real=38, long_kb=[258, 381], bad=31)
    quick = {"per_request_tps": 5000.0, "aggregate_tps": 50_000.0}
    flaky = SimModel(
        model="flaky", error_rate=0.2, hang_rate=0.05, garbage_rate=0.05, seed=3, **quick
    )
    healthy = SimModel(model="healthy", **quick)
    dead = SimModel(model="dead", die_after=0, **quick)
    with fleet(flaky, healthy, dead) as servers:
        report = run_bounded(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            # A hung request would hold the run for the whole 120 s timeout.
            fleet=Fleet([endpoint(s, timeout_s=120.0) for s in servers]),
            dials=Dials(workers_per_model=4, claim_size=8, flush_seconds=5, max_tokens=64),
        )
    assert report.tally.stopped is None
    assert report.count + len(report.failed) == 71
    failed = {f["path"] for f in report.failed}
    assert {f"c/broken-{i:02}.md" for i in range(31)} <= failed, report.failed
    accounted(report, synced, tmp_path / "wiki")
    by_name = {m.name: m for m in report.models}
    assert by_name["dead"].tally.docs == 0
    # A hung request is raced at the tail (by the healthy model) and cancelled, never waited out
    # to its 120 s timeout: not even a hedge that hangs in turn.
    assert all(m.tally.timeouts == 0 for m in report.models), [
        (m.name, m.tally.timeouts) for m in report.models
    ]


def test_a_hedge_takes_over_from_a_model_whose_requests_hang(tmp_path: Path) -> None:
    synced = corpus(tmp_path / "synced", real=10, long_kb=[])
    stuck = SimModel(model="stuck", hang_rate=1.0, per_request_tps=5000, aggregate_tps=50_000)
    healthy = SimModel(model="healthy", per_request_tps=5000, aggregate_tps=50_000)
    with fleet(stuck, healthy) as servers:
        report = run_bounded(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(s, timeout_s=120.0, workers=2) for s in servers]),
            # One request per document: the simulator's pages are all flagged, and second
            # opinions sent to the stuck model are given up at the end, not raced.
            dials=Dials(workers_per_model=2, claim_size=1, flush_seconds=5, flagged_pages="keep"),
        )
        stuck_stats = servers[0].snapshot()
    by_name = {m.name: m for m in report.models}
    assert report.count == 10 and not report.failed
    # The stuck model took documents at the start (nothing was known of it); the healthy model
    # raced each of them, its answers won, and the hung requests were cancelled (no timeout).
    assert stuck_stats.hung >= 1
    assert by_name["healthy"].tally.docs == 10 and by_name["stuck"].tally.docs == 0
    assert report.tally.hedged == stuck_stats.hung == by_name["healthy"].tally.hedges_won
    assert by_name["stuck"].tally.timeouts == 0
    with Journal(StateStore(tmp_path / "wiki" / ".wiki_assets")) as journal:
        models = {journal.get(f"c/doc-{i:03}.md").model for i in range(10)}  # type: ignore[union-attr]
    assert models == {"healthy"}, "exactly one result per document, the winner's"


def test_a_long_documents_parts_are_spread_over_every_model(tmp_path: Path) -> None:
    """A long document's parts are jobs of their own in the shared queue: both models take
    notes on them side by side, and the page is written once every part's notes are in."""
    root = tmp_path / "synced"
    collection = root / "c"
    collection.mkdir(parents=True)
    (collection / "a-changelog.md").write_text(changelog(60, 0), encoding="utf-8")
    for i in range(4):
        (collection / f"note-{i}.md").write_text(f"# Note {i}\n\nShort. " * 8, encoding="utf-8")
    fast = SimModel(model="fast", per_request_tps=600, aggregate_tps=4800, max_batch=16)
    slow = SimModel(model="slow", per_request_tps=300, aggregate_tps=1200, max_batch=8)
    with fleet(fast, slow) as servers:
        report = run_bounded(
            corpus=Corpus(root, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(s, context_tokens=2048) for s in servers]),
            dials=Dials(workers_per_model=4, claim_size=1, flush_seconds=1, max_tokens=200),
        )
    assert report.count == 5 and not report.failed and report.unfinished == 0, report
    by_name = {m.name: m for m in report.models}
    parts = by_name["fast"].tally.parts + by_name["slow"].tally.parts
    assert by_name["fast"].tally.parts > 0 and by_name["slow"].tally.parts > 0, (
        "both models took parts"
    )
    assert parts >= 10, "the changelog was taken in many parts"
    # Parts, second opinions and races are requests, not documents: per model, docs counts the
    # pages it wrote, and they add up to the run's.
    assert sum(m.tally.docs for m in report.models) == report.count
    assert report.requests == sum(m.tally.requests for m in report.models) >= parts + 5
    assert report.requests_per_doc == report.requests / 5
    page = (tmp_path / "wiki" / "c" / "a-changelog.md").read_text(encoding="utf-8")
    assert f"\nparts: {parts}\n" in page
