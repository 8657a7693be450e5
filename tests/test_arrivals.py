"""A first run over a drive of office documents does not wait for their text: the fleet starts
on what is ready while the rest is extracted beside the requests (engine/ingestion/arrivals.py),
every document still gets its page (or is listed as holding no text), a stop leaves what had not
arrived for the next run, and a re-run extracts nothing again."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import docx

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.documents.texts import TEXTS_DIR
from wiki_assets.engine.ingestion.plan import EXTRACT_FIRST
from wiki_assets.engine.wiki.files import STATE_DIR, page_for
from wiki_assets.simulator import SimModel, SimServer

OFFICE = EXTRACT_FIRST * 2  # more than the plan extracts before the first request
QUICK = {"per_request_tps": 6000.0, "aggregate_tps": 48000.0}  # a fast model: a short test


def drive(synced: Path) -> list[str]:
    """A drive of Word files, a few Markdown notes and a broken PDF: the paths with text."""
    folder = synced / "drive"
    folder.mkdir(parents=True)
    paths = []
    for i in range(OFFICE):
        document = docx.Document()
        document.add_heading(f"Procedure {i}", level=1)
        document.add_paragraph(f"Procedure {i} covers the steps of area {i}. " * 12)
        document.save(folder / f"procedure-{i:03}.docx")
        paths.append(f"drive/procedure-{i:03}.docx")
    for i in range(4):
        (folder / f"note-{i}.md").write_text(f"# Note {i}\n\n" + f"Note {i} words. " * 30)
        paths.append(f"drive/note-{i}.md")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n" + b"\x00" * 64)
    return paths


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)

    warning = error = info


def run(synced: Path, wiki: Path, server: SimServer, log: Log, **dials: object) -> object:
    return ingest(
        corpus=Corpus(synced, ["drive"]),
        wiki_root=wiki,
        fleet=Fleet([Endpoint(name="sim", base_url=server.base_url, model="sim")]),
        dials=Dials(flush_seconds=0.2, workers_per_model=4, claim_size=2, **dials),  # type: ignore[arg-type]
        log=log,  # type: ignore[arg-type]
    )


def test_requests_start_before_the_drive_is_extracted_and_every_document_arrives(
    tmp_path: Path,
) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    paths = drive(synced)
    log = Log()
    with SimServer(SimModel(model="sim", behaviour="faithful", **QUICK)) as server:
        report = run(synced, wiki, server, log)
        first_request = server.snapshot().first_request_at
        assert first_request is not None
        first_request_wall = time.time() - (time.monotonic() - first_request)
    assert not report.failed, report.failed  # type: ignore[attr-defined]
    assert report.count == len(paths)  # type: ignore[attr-defined]
    [no_text] = report.no_text  # type: ignore[attr-defined]
    assert no_text["path"] == "drive/broken.pdf"
    assert no_text["reason"].startswith("unreadable PDF file")
    assert f"extracting {OFFICE + 1} documents beside the requests ({OFFICE + 1} to summarize " \
        "once read)" in log.lines  # fmt: skip
    for path in paths:
        assert (wiki / page_for(path)).is_file(), path
    # Requests went out while the drive was still being extracted: the last text kept by the
    # store came after the first request reached the server.
    kept = [p.stat().st_mtime for p in (wiki / STATE_DIR / TEXTS_DIR).rglob("*.json")]
    assert len(kept) == OFFICE + 1  # the broken PDF's outcome is kept too
    assert max(kept) > first_request_wall

    log = Log()
    with SimServer(SimModel(model="sim", behaviour="faithful", **QUICK)) as server:
        again = run(synced, wiki, server, log)
        assert server.snapshot().requests == 0
    assert again.skipped == len(paths) and not again.failed  # type: ignore[attr-defined]
    assert not any("beside the requests" in line for line in log.lines)


def test_a_stop_leaves_what_had_not_arrived_for_the_next_run(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    paths = drive(synced)
    slow = SimModel(model="sim", behaviour="faithful", latency_s=0.3, **QUICK)
    with SimServer(slow) as server:

        def stop_at_the_first_request() -> None:  # while the drive is being extracted
            while server.snapshot().requests < 1:
                time.sleep(0.005)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=stop_at_the_first_request, daemon=True).start()
        report = run(synced, wiki, server, Log())
    assert report.stopped_by == "SIGTERM"  # type: ignore[attr-defined]
    done = report.count  # type: ignore[attr-defined]
    assert done < len(paths)
    # What had not arrived is counted as left for the next run, with what had.
    files = len(paths) + 1 - len(report.no_text)  # type: ignore[attr-defined]
    assert done + report.unfinished == files  # type: ignore[attr-defined]

    log = Log()
    with SimServer(SimModel(model="sim", behaviour="faithful", **QUICK)) as server:
        rest = run(synced, wiki, server, log)
        assert server.snapshot().requests == len(paths) - done
    assert rest.count == len(paths) - done and not rest.failed  # type: ignore[attr-defined]
    for path in paths:
        assert (wiki / page_for(path)).is_file(), path
