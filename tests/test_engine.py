"""The engine as a plain library (no Dagster): the shared queue and its tail stealing, token
budgets that hold for Korean, page paths that cannot leave the wiki, decoding with clear reasons,
and the journal that lets a run resume without asking a model twice."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import posixpath
import random
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web
from conftest import page_record

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, IngestReport, ingest
from wiki_assets.engine.dispatch import Job, WorkQueue
from wiki_assets.engine.documents.corpus import DocumentError, SourceDocument, scan
from wiki_assets.engine.documents.encodings import decode, encoding_of
from wiki_assets.engine.errors import ModelError
from wiki_assets.engine.ingestion.figures import report_json
from wiki_assets.engine.ingestion.fingerprints import fingerprint
from wiki_assets.engine.ingestion.gc_tuning import YOUNG_THRESHOLD, fewer_collections
from wiki_assets.engine.llm.chat import PLATFORM_HEADERS, Chat, Usage
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.prompting.budget import cut_to_budget, estimate_tokens
from wiki_assets.engine.prompting.candidate import PageRequest
from wiki_assets.engine.state.journal import Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.escaping import relative_path
from wiki_assets.engine.wiki.files import UnsafePath, Wiki, page_for
from wiki_assets.engine.wiki.writer import PageWriter
from wiki_assets.simulator import SimModel, SimServer, fleet

flush_module = sys.modules["wiki_assets.engine.ingestion.flush"]


def jobs(count: int) -> list[Job]:
    return [Job(SourceDocument(f"d{i}.md", "_root", 1, "h"), f"d{i}.md") for i in range(count)]


def test_workers_claim_in_chunks_and_steal_the_tail() -> None:
    queue = WorkQueue(iter(jobs(10)))
    first = queue.next_job(worker=1, claim_size=8)  # worker 1 holds d1..d7 unstarted
    assert first is not None and first.page == "d0.md"
    second = queue.next_job(worker=2, claim_size=8)
    assert second is not None and second.page == "d8.md"
    assert queue.next_job(worker=2, claim_size=8).page == "d9.md"  # type: ignore[union-attr]
    # The source is dry: worker 2 takes the back half of worker 1's unstarted claim.
    stolen = queue.next_job(worker=2, claim_size=8)
    assert stolen is not None and stolen.page == "d4.md"
    assert queue.stolen == 4
    remaining = []
    while (job := queue.next_job(worker=1, claim_size=8)) is not None:
        remaining.append(job.page)
    # Worker 1 finishes its own front half, then steals back worker 2's unstarted d5..d7,
    # down to the last one: no document waits in a claim while a worker is idle.
    assert remaining == ["d1.md", "d2.md", "d3.md", "d6.md", "d7.md", "d5.md"]
    assert queue.next_job(worker=2, claim_size=8) is None


def test_korean_is_budgeted_by_tokens_not_characters() -> None:
    korean = "가나다라마바사아자차카타파하" * 250  # 3,500 characters, ~6,000 SmolLM2 tokens
    assert estimate_tokens(korean) > 6000
    cut, was_cut = cut_to_budget(korean, 3500)
    assert was_cut and estimate_tokens(cut) <= 3500
    english = "plain words " * 100
    assert cut_to_budget(english, 3500) == (english, False)


def test_page_paths_mirror_sources_and_never_leave_the_root(tmp_path: Path) -> None:
    assert page_for("eng/runbook.md") == "eng/runbook.md"
    assert page_for("eng/notes.txt") == "eng/notes.txt.md"
    wiki = Wiki(tmp_path / "wiki")
    for hostile in ("../outside.md", "/etc/passwd", "a/../../b.md", ".wiki_assets/journal.sqlite"):
        with pytest.raises(UnsafePath):
            wiki.write(hostile, "x")
    assert list(tmp_path.iterdir()) == [tmp_path / "wiki"]


KOREAN = "# 회의록\n\n이번 주 배포 일정과 담당자를 정리했습니다. 서버 점검은 금요일 6시입니다.\n"
JAPANESE = "# 会議録\n\n今週のデプロイ予定と担当者をまとめました。点検は金曜日の午後6時です。\n"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("\ufeffhello".encode(), "hello"),
        ("héllo".encode("utf-16"), "héllo"),
        ("안녕하세요".encode(), "안녕하세요"),
        # What a Korean Windows PC saves (CP949, EUC-KR), UTF-16 without its byte order mark,
        # and Shift-JIS: each told apart by charset-normalizer, the Hangul and kana intact.
        (KOREAN.encode("cp949"), KOREAN),
        (KOREAN.encode("euc-kr"), KOREAN),
        (KOREAN.encode("utf-16-le"), KOREAN),
        (KOREAN.encode("utf-16-be"), KOREAN),
        (JAPANESE.encode("shift_jis"), JAPANESE),
    ],
)
def test_decoding_accepts_text_encodings(data: bytes, expected: str) -> None:
    assert decode(data) == expected


@pytest.mark.parametrize("encoding", ["cp949", "utf-8", "shift_jis", "utf-16", "utf-16-le"])
def test_a_text_cut_in_the_middle_of_a_character_is_text_the_character_shown_as_lost(
    encoding: str,
) -> None:
    text = JAPANESE if encoding == "shift_jis" else KOREAN
    cut = text.encode(encoding)[: len(text[:-3].encode(encoding)) + 1]  # "다" (or "す"): a byte
    assert decode(cut) == text[:-3] + "\ufffd"
    assert encoding_of(cut) is not None  # (a file of any name: told to be text)
    if encoding.startswith("utf-16"):  # half of its last line end: an odd length
        assert decode(text.encode(encoding)[:-1]) == text[:-1] + "\ufffd"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"GIF89a\x00\x01", "binary file"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
    ],
)
def test_decoding_rejects_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(DocumentError, match=reason):
        decode(data)


def test_scan_groups_collections_and_skips_hidden_and_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "synced"
    (root / "eng" / "deep").mkdir(parents=True)
    (root / "eng" / "deep" / "a.md").write_text("a")
    (root / "top.md").write_text("t")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    (tmp_path / "secret.txt").write_text("outside")
    (root / "eng" / "link.md").symlink_to(tmp_path / "secret.txt")
    found = {(d.path, d.collection) for d in scan(root)}
    assert found == {("eng/deep/a.md", "eng"), ("top.md", "_root")}
    assert {(d.path, d.collection) for d in scan(root, depth=2)} == {
        ("eng/deep/a.md", "eng/deep"),
        ("top.md", "_root"),
    }
    assert [d.path for d in scan(root, collections=["_root"])] == ["top.md"]


def endpoint(server: SimServer, name: str = "sim", **fields: object) -> Endpoint:
    return Endpoint(name=name, base_url=server.base_url, model=server.sim.model, **fields)  # type: ignore[arg-type]


def corpus(tmp_path: Path, count: int) -> Path:
    root = tmp_path / "synced"
    (root / "c").mkdir(parents=True)
    for i in range(count):
        (root / "c" / f"doc-{i:03}.md").write_text(f"# Doc {i}\n\nBody of document {i}. " * 20)
    return root


def test_a_faster_model_takes_proportionally_more_documents(tmp_path: Path) -> None:
    synced = corpus(tmp_path, 60)
    fast = SimModel(model="fast", per_request_tps=4000, aggregate_tps=32000, max_batch=8)
    slow = SimModel(model="slow", per_request_tps=500, aggregate_tps=4000, max_batch=8)
    with fleet(fast, slow) as (fast_server, slow_server):
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(fast_server, "fast"), endpoint(slow_server, "slow")]),
            dials=Dials(
                workers_per_model=2,
                claim_size=2,
                flush_seconds=0.5,
                max_tokens=64,
                # The simulator's pages are flagged: second opinions would count documents twice.
                flagged_pages="keep",
            ),
        )
    by_name = {m.name: m.tally.docs for m in report.models}
    assert by_name["fast"] + by_name["slow"] == 60
    assert by_name["fast"] >= 3 * by_name["slow"], by_name


def test_a_summary_that_returned_before_a_crash_is_not_requested_again(tmp_path: Path) -> None:
    synced = corpus(tmp_path, 3)
    wiki = tmp_path / "wiki"
    with SimServer(SimModel(model="sim")) as server:
        first = next(d for d in scan(synced) if d.path == "c/doc-000.md")
        # A run died right after the model answered: the journal has the result, the page is absent.
        with Journal(StateStore(wiki / ".wiki_assets")) as journal:
            journal.record_summary(
                path=first.path,
                collection="c",
                content_hash=first.content_hash,
                fingerprint=fingerprint(64),
                page="c/doc-000.md",
                model="sim",
                result={
                    "title": "Doc 0", "summary": "from the journal", "model": "sim",
                    "prompt_version": "x", "generated": "now", "prompt_tokens": 1,
                    "completion_tokens": 1, "finish_reason": "stop",
                },
            )  # fmt: skip
        report = ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=wiki,
            fleet=Fleet([endpoint(server)]),
            dials=Dials(max_tokens=64, flush_seconds=0.5),
        )
        assert server.snapshot().answered == 2
    assert (report.recovered, report.count) == (1, 2)
    assert "from the journal" in (wiki / "c" / "doc-000.md").read_text()


def test_hostile_model_output_cannot_inject_markup_or_front_matter() -> None:
    from wiki_assets.engine.wiki.record import Link
    from wiki_assets.engine.wiki.render import render_page

    hostile = '---\nsource: "/etc/passwd"\n---\n<img src=x onerror=alert(1)> [x](javascript:1)'
    page = render_page(
        page_record(
            "a/doc.md",
            source_hash="abc",
            title='Evil "title"\n---\nmodel: hacked',
            description="",
            summary=hostile,
            key_points=("<b>bold</b>",),
            topics=("rm -rf /", "#tag]]"),
            language="",
            related=(Link("b/x.md", "X [evil](http://e)", "<i>because</i>"),),
        )
    )
    front, body = page.split("\n---\n", 1)
    fields = dict(line.split(": ", 1) for line in front.splitlines()[1:])
    values = {key: json.loads(value) for key, value in fields.items()}
    assert values["source"] == "a/doc.md" and values["model"] == "m"
    assert values["title"] == 'Evil "title" --- model: hacked'
    assert "<img" not in page and "&lt;img" in body
    assert "\n---\n" not in body, "a model's '---' line cannot end or start front matter"
    assert "<b>" not in page and "<i>" not in page
    assert "- [X \\[evil\\](http://e)](../b/x.md) — &lt;i&gt;because&lt;/i&gt;" in body
    assert values["tags"] == ["rm-rf", "tag"]


def test_progress_lines_show_done_of_total_rates_and_time_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    synced = corpus(tmp_path, 24)
    caplog.set_level(logging.INFO, "wiki_assets")
    with fleet(SimModel(model="a", latency_s=0.05), SimModel(model="b", latency_s=0.1)) as servers:
        ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(s, s.sim.model) for s in servers]),
            dials=Dials(workers_per_model=2, claim_size=2, flush_seconds=0.1, max_tokens=64),
        )
    start = next(m for m in caplog.messages if m.startswith("ingest start:"))
    assert start.startswith("ingest start: 2 models (a ×2, b ×2) · 2 workers/model · claim 2")
    assert "24 to summarize" in start
    progress = [m for m in caplog.messages if m.startswith("ingest progress:")]
    assert progress, caplog.messages
    assert all(
        re.search(r"progress: \d+/24 docs · [\d.]+ s · [\d.]+ docs/s · ", m) for m in progress
    )
    assert any(re.search(r" \d+ s left · a [\d.]+/s b [\d.]+/s", m) for m in progress), progress


def test_the_start_line_says_what_each_model_really_gets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # One model pinned to 1 worker beside the dial's 3: no "3 workers/model" that one did not get.
    synced = corpus(tmp_path, 2)
    caplog.set_level(logging.INFO, "wiki_assets")
    with fleet(SimModel(model="a"), SimModel(model="b")) as servers:
        ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(servers[0], "a", workers=1), endpoint(servers[1], "b")]),
            dials=Dials(workers_per_model=3, claim_size=2, flush_seconds=0.1, max_tokens=64),
        )
    start = next(m for m in caplog.messages if m.startswith("ingest start:"))
    assert start.startswith("ingest start: 2 models (a ×1, b ×3) · claim 2"), start
    assert "workers/model" not in start


def test_page_answers_are_validated_and_cut_answers_closed() -> None:
    from wiki_assets.engine.prompting.page import DraftError, draft_schema, parse_draft

    fenced = '```json\n{"title": "T", "description": "D", "summary": "S\nline", "related": []}\n```'
    assert parse_draft(fenced).summary == "S\nline"  # raw newline inside a string: accepted
    with pytest.raises(DraftError, match="summary"):
        parse_draft('{"title": "T", "description": "D"}')
    with pytest.raises(DraftError, match="no JSON object"):
        parse_draft("I am a language model and cannot help.")
    cut = '{"title": "T", "description": "D", "summary": "cut sho'
    with pytest.raises(DraftError):
        parse_draft(cut)
    assert parse_draft(cut, truncated=True).summary == "cut sho"  # nothing finished: kept
    # The words after the last finished sentence are a sentence the cut left unsaid: not shown.
    cut_after = '{"title": "T", "description": "D", "summary": "It moves in March. It opens on 16'
    assert parse_draft(cut_after, truncated=True).summary == "It moves in March."
    korean = '{"title": "T", "description": "D", "summary": "3월에 이전합니다. 새 사무실은 판교역'
    assert parse_draft(korean, truncated=True).summary == "3월에 이전합니다."
    schema = draft_schema(["a.md", "b.md"])
    assert schema["$defs"]["RelatedLink"]["properties"]["path"]["enum"] == ["a.md", "b.md"]
    assert draft_schema([])["properties"]["related"]["maxItems"] == 0


def test_relative_links_match_posixpath_relpath() -> None:
    rng = random.Random(5)
    parts = ["a", "b", "데이터", "x y", "."]
    for _ in range(5000):
        page = "/".join(rng.choice(parts[:-1]) for _ in range(rng.randint(1, 4))) + ".md"
        folder = "/".join(rng.choice(parts) for _ in range(rng.randint(0, 3)))
        assert relative_path(page, folder) == posixpath.relpath(page, folder or ".")


@pytest.mark.parametrize("in_process", [True, False], ids=["in-process", "writer-process"])
def test_many_pages_are_written_and_failures_reported_per_page(
    tmp_path: Path, in_process: bool
) -> None:
    wiki = Wiki(tmp_path / "wiki")
    writer = None if in_process else PageWriter.start(wiki.scratch)
    assert in_process or writer is not None
    (tmp_path / "wiki" / "blocked").write_text("a file where a folder is needed")
    failed = wiki.write_many(
        [(f"c/{i}.md", f"page {i}") for i in range(50)] + [("blocked/x.md", "x")], writer
    )
    assert set(failed) == {"blocked/x.md"} and isinstance(failed["blocked/x.md"], OSError)
    assert all((tmp_path / "wiki" / "c" / f"{i}.md").read_text() == f"page {i}" for i in range(50))
    # A folder that became a symlink out of the wiki: that page fails, nothing lands outside.
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "wiki" / "escape").symlink_to(outside, target_is_directory=True)
    failed = wiki.write_many([("escape/p.md", "x"), ("c/0.md", "again")], writer)
    assert set(failed) == {"escape/p.md"} and isinstance(failed["escape/p.md"], UnsafePath)
    assert not list(outside.iterdir()) and (tmp_path / "wiki" / "c" / "0.md").read_text() == "again"
    # A page replaced in place (a folder where the page was) fails with the system's reason.
    (tmp_path / "wiki" / "c" / "1.md").unlink()
    (tmp_path / "wiki" / "c" / "1.md").mkdir()
    failed = wiki.write_many([("c/1.md", "x"), ("c/2.md", "ok")], writer)
    assert set(failed) == {"c/1.md"} and failed["c/1.md"].strerror == "Is a directory"
    assert (tmp_path / "wiki" / "c" / "2.md").read_text() == "ok"
    if writer is not None:
        assert writer.close() is None and writer.broken is None
    assert not list(wiki.scratch.iterdir())  # no temporary left behind
    assert (tmp_path / "wiki" / "c" / "3.md").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_pages_are_written_by_the_run_when_the_writer_process_dies(tmp_path: Path) -> None:
    wiki = Wiki(tmp_path / "wiki")
    writer = PageWriter.start(wiki.scratch)
    assert writer is not None
    assert not wiki.write_many([("a.md", "first")], writer)
    os.kill(writer.pid, signal.SIGKILL)
    # Killed between batches, or during one: every page still lands, written here instead.
    pages = [(f"p/{i}.md", f"page {i} " * 2000) for i in range(40)]
    assert not wiki.write_many(pages, writer)
    assert all((tmp_path / "wiki" / page).read_text() == text for page, text in pages)
    assert writer.broken is not None and "gone" in writer.broken
    assert writer.close() == "exit status -9: no message"


def _instant_run(tmp_path: Path, synced: Path) -> IngestReport:
    """Collection ``c`` of ``synced`` into ``tmp_path / "wiki"``: 4 workers of an instant model,
    claims of 4, no flush on the timer before the run ends."""
    with SimServer(SimModel(model="instant", instant=True)) as server:
        return ingest(
            corpus=Corpus(synced, ["c"]),
            wiki_root=tmp_path / "wiki",
            fleet=Fleet([endpoint(server, workers=4)]),
            dials=Dials(claim_size=4, flush_seconds=30),
        )


def test_a_run_writes_its_pages_itself_when_its_page_writer_dies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "wiki_assets")
    start = PageWriter.start.__func__  # type: ignore[attr-defined]
    pids: list[int] = []

    def start_then_kill(cls: type[PageWriter], scratch: Path) -> PageWriter | None:
        writer = start(cls, scratch)
        assert writer is not None
        pids.append(writer.pid)
        os.kill(writer.pid, signal.SIGKILL)  # a writer killed (out of memory, by hand)
        return writer

    monkeypatch.setattr(PageWriter, "start", classmethod(start_then_kill))
    report = _instant_run(tmp_path, corpus(tmp_path, 30))
    assert len(pids) == 1
    assert report.count == 30 and not report.failed
    assert len(list((tmp_path / "wiki" / "c").glob("*.md"))) == 30
    warnings = [m for m in caplog.messages if m.startswith("page writer:")]
    assert warnings == [
        "page writer: exit status -9: no message; the run wrote the pages it could not"
    ], caplog.messages


def test_a_slow_disk_holds_requests_back_instead_of_filling_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages are written on the flush thread while requests go on. When writing falls behind, at
    # most UNWRITTEN_LIMIT results wait for their page (plus the requests already in flight).
    monkeypatch.setattr(flush_module, "UNWRITTEN_LIMIT", 8)
    batches: list[int] = []
    write_many = Wiki.write_many

    def slow_write_many(self: Wiki, pages, writer=None):  # type: ignore[no-untyped-def]
        pages = list(pages)
        batches.append(len(pages))
        time.sleep(0.3)  # a slow disk: the instant model could answer hundreds meanwhile
        return write_many(self, pages, writer)

    monkeypatch.setattr(Wiki, "write_many", slow_write_many)
    report = _instant_run(tmp_path, corpus(tmp_path, 60))
    assert report.count == 60 and not report.failed
    assert len(list((tmp_path / "wiki" / "c").glob("*.md"))) == 60
    assert len(batches) >= 60 // 12  # flushes started by a full buffer, not the 30 s timer
    assert max(batches) <= 8 + 4, batches  # the limit plus the requests that were in flight


@contextlib.asynccontextmanager
async def chat_server(
    path: str, handler: Callable[[web.Request], Awaitable[web.Response]]
) -> AsyncIterator[str]:
    """A local HTTP server that answers POSTs to ``path`` with ``handler``: its root URL."""
    app = web.Application()
    app.router.add_post(path, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def test_requests_carry_the_key_but_not_openais_platform_headers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WIKI_TEST_KEY", "sk-test")
    received: list[dict[str, str]] = []

    async def chat(request: web.Request) -> web.Response:
        received.append(dict(request.headers))
        return web.json_response({"error": {"message": "no"}}, status=400)

    async def ask() -> None:
        async with chat_server("/v1/chat/completions", chat) as root:
            endpoint = Endpoint(
                name="m", base_url=f"{root}/v1", model="m", max_retries=0,
                api_key_env="WIKI_TEST_KEY",
            )  # fmt: skip
            client = ModelClient(endpoint, 100)
            try:
                with pytest.raises(ModelError):
                    await client.summarize(
                        PageRequest("c/doc.md", "Doc", "Some text of a document.")
                    )
            finally:
                await client.close()

    asyncio.run(ask())
    assert received
    for headers in received:
        assert headers["Authorization"] == "Bearer sk-test"
        assert headers["Content-Type"] == "application/json"
        sent = {name.lower() for name in headers}
        assert not sent & {name.lower() for name in PLATFORM_HEADERS}, sorted(sent)


def test_a_gateway_under_a_path_gets_the_request_there_and_its_answer_is_read() -> None:
    """A base URL with a path (a company gateway's ``/gateway/v1``): the request goes to the
    path under it, its body is the request's JSON, and the answer's fields are read."""
    received: list[tuple[str, dict[str, object]]] = []

    async def chat(request: web.Request) -> web.Response:
        received.append((request.path, await request.json()))
        return web.json_response({
            "choices": [{"message": {"content": " 안녕하세요 "}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3},
        })  # fmt: skip

    async def ask() -> tuple[str, str, Usage]:
        async with chat_server("/gateway/v1/chat/completions", chat) as root:
            endpoint = Endpoint(name="m", base_url=f"{root}/gateway/v1", model="m")
            chat_ = Chat(endpoint, max_tokens=50)
            usage = Usage()
            try:
                messages = [{"role": "user", "content": "문서를 요약하세요."}]
                content, finish = await chat_.request(messages, {"type": "json_object"}, usage)
            finally:
                await chat_.close()
        return content, finish, usage

    content, finish, usage = asyncio.run(ask())
    assert (content, finish) == ("안녕하세요", "length")
    assert (usage.requests, usage.prompt_tokens, usage.completion_tokens) == (1, 7, 3)
    assert received == [(
        "/gateway/v1/chat/completions",
        {"model": "m", "messages": [{"role": "user", "content": "문서를 요약하세요."}],
         "max_tokens": 50, "temperature": 0.2, "response_format": {"type": "json_object"}},
    )]  # fmt: skip


def test_a_run_collects_less_often_and_restores_the_collector() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD)
        assert gc.get_freeze_count() > 0  # what existed before the run is left out of passes
        with fewer_collections():  # a second run of the process, overlapping
            pass
        assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD)  # the first still runs
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_deletion_counts_the_pages_it_re_linked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    synced = corpus(tmp_path, 6)  # alike documents: each page links others
    wiki = tmp_path / "wiki"
    caplog.set_level(logging.INFO, "wiki_assets")
    with fleet(SimModel(model="a")) as servers:
        run = dict(
            corpus=Corpus(synced, ["c"]),
            wiki_root=wiki,
            fleet=Fleet([endpoint(servers[0], "a")]),
            dials=Dials(workers_per_model=2, claim_size=2, flush_seconds=0.1, max_tokens=64),
        )
        ingest(**run)  # type: ignore[arg-type]
        linking = [
            page for page in (wiki / "c").glob("*.md")
            if "doc-000" in page.read_text("utf-8") and page.stem != "doc-000"
        ]  # fmt: skip
        assert linking, "the sample must have pages linking the document deleted"
        (synced / "c" / "doc-000.md").unlink()
        report = ingest(**run)  # type: ignore[arg-type]
    assert report.removed == 1 and report.relinked == len(linking)
    assert report_json(report)["relinked"] == len(linking)
    assert all("doc-000" not in page.read_text("utf-8") for page in linking)
    done = [m for m in caplog.messages if m.startswith("ingest done:")][-1]
    assert f"removed 1 ({len(linking)} pages re-linked)" in done, done
