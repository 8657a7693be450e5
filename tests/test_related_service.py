"""The link candidates helper process: a first run with many documents to link asks it for their
candidates beside the requests. Its answers must be exactly the index's own, stored for the next
run, and a helper that fails must cost only time (the run answers for itself)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.documents.reader import Reader
from wiki_assets.engine.ingestion.fingerprints import fingerprints
from wiki_assets.engine.ingestion.plan import RELATED_CANDIDATES, RELATED_FILE, RunPlan
from wiki_assets.engine.prompting.candidate import Candidate
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.service import HELPER_MODULE, SERVICE_MIN, CandidatesService
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.files import STATE_DIR
from wiki_assets.simulator import SimModel, SimServer

SAMPLE = Path(__file__).resolve().parents[1] / "synced"


def write_notes(root: Path, count: int) -> list[str]:
    """``count`` notes cut from the sample corpus at different places: related, not identical."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE.rglob("*.md"))]
    (root / "notes").mkdir(parents=True)
    for i in range(count):
        text = texts[i % len(texts)]
        start = (i * 53) % max(1, len(text) - 400)
        (root / "notes" / f"note-{i:03}.md").write_text(
            f"# Note {i}\n\n{text[start : start + 400]}\n"
        )
    return [f"notes/note-{i:03}.md" for i in range(count)]


def build_index(db: Path, synced: Path, paths: list[str]) -> None:
    with RelatedIndex(db) as index:
        items = []
        for path in paths:
            text = (synced / path).read_text(encoding="utf-8")
            items.append((path, title_of(text, path), text, f"hash-{path}"))
        index.update_many(items)


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, msg: str) -> None:
        self.lines.append(msg)

    warning = error = info


def test_the_helper_answers_as_the_index_does_and_stores_its_answers(tmp_path: Path) -> None:
    paths = write_notes(tmp_path / "synced", 150)
    db = tmp_path / "related.sqlite"
    build_index(db, tmp_path / "synced", paths)
    shutil.copy(db, tmp_path / "reference.sqlite")

    async def ask() -> tuple[list[list[Candidate] | None], str | None, int]:
        service = await CandidatesService.start(db, RELATED_CANDIDATES, paths)
        one_by_one = [await service.candidates(path) for path in paths[:5]]
        together = await asyncio.gather(*(service.candidates(path) for path in paths[5:]))
        return [*one_by_one, *together], await service.close(), service.answered

    found, failure, answered = asyncio.run(ask())
    assert failure is None and answered == len(paths)
    with RelatedIndex(tmp_path / "reference.sqlite") as reference:
        expected = reference.candidates_many(paths, RELATED_CANDIDATES)
    assert sum(map(len, expected.values())) > len(paths)  # notes that have candidates
    assert dict(zip(paths, found, strict=True)) == expected  # scores too, to the last bit
    with RelatedIndex(db) as index:  # stored: a re-run looks them up
        assert index.stored_answers(paths, RELATED_CANDIDATES) == expected


def test_ctrl_c_leaves_the_helper_to_the_run(tmp_path: Path) -> None:
    """Ctrl-C in a terminal reaches the helper too; the run stops itself, then ends the helper."""
    paths = write_notes(tmp_path / "synced", 80)
    db = tmp_path / "related.sqlite"
    build_index(db, tmp_path / "synced", paths)

    async def ask() -> tuple[list[list[Candidate] | None], str | None]:
        service = await CandidatesService.start(db, RELATED_CANDIDATES, paths)
        first = await service.candidates(paths[0])  # the helper is up and serving
        os.kill(service.pid, signal.SIGINT)
        rest = await asyncio.gather(*(service.candidates(path) for path in paths[1:]))
        return [first, *rest], await service.close()

    found, failure = asyncio.run(ask())
    assert failure is None
    assert all(candidates is not None for candidates in found)


def test_a_helper_that_fails_leaves_the_answers_to_the_run(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")

    async def ask() -> tuple[list[Candidate] | None, list[Candidate] | None, str | None]:
        service = await CandidatesService.start(not_a_folder / "related.sqlite", 8, ["a.md"])
        first = await service.candidates("a.md")  # asked while the helper is failing
        later = await service.candidates("b.md")  # asked after it is gone
        return first, later, await service.close()

    first, later, failure = asyncio.run(ask())
    assert first is None and later is None  # None: the run computes them itself
    assert failure is not None and failure.startswith("exit status 1: ")
    assert "Error" in failure  # the helper's last line: what went wrong


def test_a_first_run_of_many_documents_links_them_through_the_helper(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    paths = write_notes(synced, SERVICE_MIN + 44)
    lines = Lines()
    with SimServer(SimModel(model="instant", instant=True)) as server:
        endpoint = Endpoint(name="sim", base_url=server.base_url, model="instant")
        report = ingest(
            corpus=Corpus(synced, ["notes"]),
            wiki_root=wiki,
            fleet=Fleet([endpoint]),
            dials=Dials(max_tokens=64, flush_seconds=0.5),
            log=lines,
        )
    assert report.count == len(paths) and not report.failed
    assert any(
        f"candidates of {len(paths)} answered by a helper process" in line for line in lines.lines
    )
    assert not any("helper failed" in line for line in lines.lines)
    # Every document's request had the candidates the index gives it, stored by the helper.
    build_index(tmp_path / "reference.sqlite", synced, paths)
    with RelatedIndex(tmp_path / "reference.sqlite") as reference:
        expected = reference.candidates_many(paths, RELATED_CANDIDATES)
    with RelatedIndex(wiki / STATE_DIR / RELATED_FILE) as index:
        assert index.stored_answers(paths, RELATED_CANDIDATES) == expected
    linked = sum(
        "## Related" in page.read_text(encoding="utf-8") for page in wiki.rglob("note-*.md")
    )
    assert linked > len(paths) // 2


def test_the_helper_starts_without_the_engines_dispatch_and_openai() -> None:
    """The engine's names are imported when first used, so the helper process imports the
    related index alone (not even asyncio, which only the run's side needs); every name the
    engine exports still resolves."""
    code = (
        f"import sys, {HELPER_MODULE}\n"
        "print(sorted(m for m in ('asyncio', 'openai', 'wiki_assets.engine.ingestion.run')"
        " if m in sys.modules))\n"
        "import wiki_assets.engine as engine\n"
        "print(all(getattr(engine, name) is not None for name in engine.__all__))\n"
        "print(sorted(engine.__all__) == sorted(engine._HOME))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert shown == ["[]", "True", "True"]


def plan_run(synced: Path, wiki: Path) -> tuple[RunPlan, list[int]]:
    """The plan of a run over the ``notes`` collection, and how many documents the index held
    each time the plan asked for a helper."""
    asked: list[int] = []
    (wiki / STATE_DIR).mkdir(parents=True, exist_ok=True)
    with (
        Journal(StateStore(wiki / STATE_DIR)) as journal,
        RelatedIndex(wiki / STATE_DIR / RELATED_FILE) as related,
    ):
        endpoint = Endpoint(name="sim", base_url="http://127.0.0.1:9/v1", model="m")
        plan = RunPlan.make(
            Corpus(synced, ["notes"]),
            journal=journal,
            related=related,
            current=fingerprints([endpoint], Dials()),
            force=False,
            reader=Reader(synced, max_bytes=1 << 20),
            helper_wanted=lambda: asked.append(related.stats.indexed),
        )
    return plan, asked


def test_a_first_run_asks_for_its_helper_while_it_still_indexes(tmp_path: Path) -> None:
    """The helper is asked for once, as soon as the plan knows it will answer the candidates (a
    changed index, enough documents): mid-pass, so that it starts while the rest is indexed. A
    small first run, or a re-run of an indexed corpus, never asks."""
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    paths = write_notes(synced, SERVICE_MIN * 2)
    plan, asked = plan_run(synced, wiki)
    # Every document, in the order the run takes them (longest first).
    assert sorted(plan.answers_beside) == paths
    assert plan.answers_beside == [doc.path for doc, _ in plan.todo]
    assert len(asked) == 1 and 0 < asked[0] < len(paths)
    plan, asked = plan_run(synced, wiki)  # indexed and answered: nothing for a helper to do
    assert plan.indexed == 0 and not plan.answers_beside and asked == []
    small = tmp_path / "small"
    write_notes(small, SERVICE_MIN - 1)
    plan, asked = plan_run(small, tmp_path / "small-wiki")
    assert plan.indexed == SERVICE_MIN - 1 and not plan.answers_beside and asked == []


def test_a_helper_started_before_its_plan_answers_once_it_has_it(tmp_path: Path) -> None:
    synced, db = tmp_path / "synced", tmp_path / "related.sqlite"
    paths = write_notes(synced, 40)
    build_index(db, synced, paths)

    async def ask() -> tuple[list[Candidate] | None, str | None]:
        service = await CandidatesService.start(db, RELATED_CANDIDATES)
        await asyncio.sleep(0.3)  # the helper is up, waiting for the plan
        service.send_plan(paths)
        found = await service.candidates(paths[3])
        return found, await service.close()

    found, failure = asyncio.run(ask())
    assert failure is None
    with RelatedIndex(db) as index:
        assert found == index.candidates(paths[3], RELATED_CANDIDATES) and found
