"""Crash and resume: a run killed with SIGKILL at arbitrary moments leaves no partial page and an
intact journal, and the next run asks no model again for a document whose summary had already
returned (only for those in flight at the kill), then finishes the rest. The same on either state
store: SQLite in the wiki's state folder, or PostgreSQL."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from wiki_assets.engine.state.journal import Entry, Journal
from wiki_assets.engine.state.store import JOURNAL_FILE, StateStore
from wiki_assets.simulator import SimModel, SimServer

DRIVER = """
import sys
from pathlib import Path
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.state.store import StateStore
wiki = Path(sys.argv[2])
url, schema = sys.argv[4], sys.argv[5]
ingest(
    corpus=Corpus(Path(sys.argv[1]), ["c"]), wiki_root=wiki,
    fleet=Fleet([Endpoint(name="sim", base_url=sys.argv[3], model="sim")]),
    dials=Dials(workers_per_model=3, claim_size=4, flush_seconds=0.3, max_tokens=64),
    store=StateStore(wiki / ".wiki_assets", url or None, schema),
)
"""
DOCUMENTS = 60


def done_in_journal(store: StateStore) -> set[str]:
    if store.url is None:
        with sqlite3.connect(store.state_dir / JOURNAL_FILE) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with Journal(store) as journal:
        return {entry.path for entry in journal.pages()}


def assert_pages_whole(wiki: Path) -> None:
    for page in (wiki / "c").glob("*"):
        text = page.read_text(encoding="utf-8")
        assert page.suffix == ".md", page
        assert text.startswith("---\n") and text.count("\n---\n") >= 1, page
        # A page ends with its source line, the link to its original whole.
        last = text.rstrip().rsplit("\n", 1)[-1]
        assert last.startswith("*Source:*") and last.endswith((">)", "`")), f"{page} is cut short"


def test_sigkill_at_random_moments_loses_and_repeats_nothing(
    tmp_path: Path, store_for: Callable[[Path], StateStore]
) -> None:
    synced = tmp_path / "synced" / "c"
    synced.mkdir(parents=True)
    for i in range(DOCUMENTS):
        (synced / f"doc-{i:03}.md").write_text(f"# Doc {i}\n\nBody {i}. " * 30)
    wiki = tmp_path / "wiki"
    store = store_for(wiki)
    rng = random.Random(1234)
    # ~0.1 s a request, 3 in flight: a full run takes about 2 s.
    with SimServer(SimModel(model="sim", latency_s=0.1, per_request_tps=4000)) as server:
        command = [sys.executable, "-c", DRIVER, str(synced.parent), str(wiki), server.base_url]
        command += [store.url or "", store.schema]
        done_before: set[str] = set()
        for _ in range(3):
            asked_before = len(server.request_log())
            process = subprocess.Popen(command)
            # Once the run is asking the model (imports take a while), kill it at a random moment.
            deadline = time.monotonic() + 60
            while len(server.request_log()) == asked_before and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.05, 0.8))
            process.send_signal(signal.SIGKILL)
            process.wait()
            asked = {
                line.removeprefix("Document: ") for line in server.request_log()[asked_before:]
            }
            assert not asked & done_before, "a finished summary was requested again"
            assert_pages_whole(wiki)
            done_now = done_in_journal(store)
            assert done_now >= done_before, "a killed run lost finished summaries"
            done_before = done_now
        assert 0 < len(done_before) < DOCUMENTS, "the kills should land mid-run"

        asked_before = len(server.request_log())
        subprocess.run(command, check=True, timeout=120)
        asked = {line.removeprefix("Document: ") for line in server.request_log()[asked_before:]}
    assert not asked & done_before
    assert len(asked) == DOCUMENTS - len(done_before)
    assert len(list((wiki / "c").glob("*.md"))) == DOCUMENTS
    assert_pages_whole(wiki)
    assert not list((wiki / ".wiki_assets" / "tmp").glob(".tmp-*"))


def test_a_page_overtaken_by_a_newer_answer_stays_unwritten(
    tmp_path: Path, store_for: Callable[[Path], StateStore]
) -> None:
    """A second opinion journaled while the first answer's page was being written: marking that
    page written must not mark the newer answer, or a crash before its own page leaves the wiki
    showing one answer and the journal (index, catalog, digest) another."""
    first = {"title": "T", "summary": "first", "model": "a"}
    second = {"title": "T", "summary": "second", "model": "b"}
    fields = dict(collection="c", content_hash="h", fingerprint="f", page="c/d.md")
    with Journal(store_for(tmp_path / "wiki")) as journal:
        journal.record_summary(path="c/d.md", model="a", result=first, **fields)
        journal.record_summary(path="c/d.md", model="b", result=second, **fields)  # overtakes
        assert journal.mark_written(["c/d.md"], results={"c/d.md": first}) == []
        entry = journal.get("c/d.md")
        assert entry is not None and entry.status != "written" and entry.result == second
        assert journal.mark_written(["c/d.md"], results={"c/d.md": second}) == ["c/d.md"]
        entry = journal.get("c/d.md")
        assert entry is not None and entry.status == "written"
        # The same, compared by the JSON text each result was journaled as (a run's flush).
        one = Entry("c/e.md", status="summarized", model="a", result=first, **fields)
        [first_text] = journal.record_summaries([one])
        [second_text] = journal.record_summaries([replace(one, model="b", result=second)])
        assert first_text != second_text
        marked = journal.mark_written(
            ["c/e.md"], results={"c/e.md": first}, journaled={"c/e.md": first_text}
        )
        entry = journal.get("c/e.md")
        assert marked == [] and entry is not None and entry.status != "written"
        marked = journal.mark_written(
            ["c/e.md"], results={"c/e.md": second}, journaled={"c/e.md": second_text}
        )
        entry = journal.get("c/e.md")
        assert marked == ["c/e.md"] and entry is not None and entry.status == "written"


def test_a_run_sweeps_only_what_no_other_run_is_writing(tmp_path: Path) -> None:
    """A run's start removes the half-written pages a killed run left, never one that a run
    still alive (on this host, or on another host sharing the wiki) is about to rename."""
    import os

    from wiki_assets.engine.wiki import files

    wiki = files.Wiki(tmp_path / "wiki")
    scratch = wiki.state_dir / "tmp"
    scratch.mkdir(parents=True)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    host, old = files._HOST, time.time() - 2 * files.STALE_TEMPORARY_S
    names = {
        f".tmp-{host}-{ended.stdout.strip()}-1.md": False,  # this host, its process is gone
        f".tmp-{host}-{os.getpid()}-2.md": True,  # this host, its process is alive
        ".tmp-elsewhere-12345-3.md": True,  # another host's, just created
        ".tmp-elsewhere-12345-4.md": False,  # another host's, long abandoned
    }
    for name in names:
        (scratch / name).write_text("half a page")
    os.utime(scratch / ".tmp-elsewhere-12345-4.md", (old, old))
    assert wiki.sweep_temporaries() == 2
    assert {path.name for path in scratch.iterdir()} == {n for n, kept in names.items() if kept}
    # The file a page is written to first is named so that a sweep can tell whose it is.
    temporary, fd = files._create_temporary(wiki.scratch)
    os.close(fd)
    assert wiki.sweep_temporaries() == 0 and Path(temporary).exists()
