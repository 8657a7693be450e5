"""The harness the dispatch benchmark's tables share: progress on stderr, a table row, and one
run (:class:`Bench`) that times the engine and the baselines on fresh wikis.

See :mod:`benchmarks.dispatch` for what is compared and why.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import shutil
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from benchmarks.baselines import DesignResult
from benchmarks.documents import title_of
from wiki_assets.engine import Corpus, Fleet, IngestReport, ingest
from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.documents.corpus import read_text, scan
from wiki_assets.engine.ingestion.plan import RELATED_FILE
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.wiki.files import STATE_DIR
from wiki_assets.simulator import SimServer, SimStats

_t0 = time.perf_counter()
# The engine logs progress at INFO; the benchmark shows only its warnings (failed documents).
engine_log = logging.getLogger("benchmarks.engine")
engine_log.setLevel(logging.WARNING)


def progress(message: str) -> None:
    print(f"[{time.perf_counter() - _t0:6.1f}s] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Rows


def cpu_seconds() -> float:
    """This process's CPU time and that of its children that have ended: a run's link candidates
    helper process (:mod:`wiki_assets.engine.related.helper`) and its page writer process
    (:mod:`wiki_assets.engine.wiki.writer`) count as the run's. A simulated
    server in its own process is still running while it is measured, so it is not counted."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@dataclass
class Row:
    design: str
    docs: int | None = None
    seconds: float | None = None  # wall time of the whole call, setup included
    makespan_s: float | None = None  # as the design reports it (engine: its duration_s)
    split: dict[str, int] = field(default_factory=dict)  # model -> answered requests
    peak: dict[str, int] = field(default_factory=dict)  # model -> peak requests in flight
    prompt_tokens: int | None = None  # as counted by the servers
    notes: list[str] = field(default_factory=list)
    unavailable: str | None = None
    trials: list[float] = field(default_factory=list)  # docs/s of each round (overhead table)
    cpu_ms: float | None = None  # this process's CPU time per document, best round
    cpu_trials: list[float] = field(default_factory=list)  # CPU ms/doc of each round

    @property
    def rate(self) -> float | None:
        if self.docs is None or not self.seconds:
            return None
        return self.docs / self.seconds


def fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "—" if value is None else f"{value:.{digits}f}{suffix}"


def _stats(servers: Sequence[SimServer], row: Row) -> None:
    snapshots: list[tuple[str, SimStats]] = [(s.sim.model, s.snapshot()) for s in servers]
    row.split = {model: stats.answered for model, stats in snapshots}
    row.peak = {model: stats.peak_in_flight for model, stats in snapshots}
    row.prompt_tokens = sum(stats.prompt_tokens for _, stats in snapshots)
    trouble = sum(s.errors + s.rate_limited + s.rejected + s.dropped for _, s in snapshots)
    if trouble:
        row.notes.append(f"{trouble} server errors/rejections")


def _reset(servers: Sequence[SimServer]) -> None:
    for server in servers:
        server.reset_stats()


class Bench:
    """One benchmark run: the temporary directory, the documents, the event loop for baselines."""

    def __init__(self, tmp: Path, runner: asyncio.Runner) -> None:
        self.tmp = tmp
        self.runner = runner
        self._wikis = 0
        self.link_index: Path | None = None  # a current link index to start engine rows from
        self.indexing_s = 0.0

    def fresh_wiki(self) -> Path:
        self._wikis += 1
        wiki = self.tmp / f"wiki-{self._wikis}"
        if self.link_index is not None:
            state = wiki / STATE_DIR
            state.mkdir(parents=True)
            shutil.copyfile(self.link_index, state / RELATED_FILE)
        return wiki

    def build_link_index(self, synced: Path) -> float:
        """Index the synced documents for link candidates once, as the engine would, and start
        every later engine row's fresh wiki from a copy: the baselines replay recorded requests
        and never index, so a row that indexed would be charged a cost the others do not pay.
        Only the index is shared; every row still queries each document's candidates itself.
        Returns the seconds indexing took."""
        started = time.perf_counter()
        self.link_index = self.tmp / "link-index" / RELATED_FILE
        with RelatedIndex(self.link_index) as index:
            texts = ((doc, read_text(synced, doc)) for doc in scan(synced))
            index.update_many(
                (doc.path, title_of(text, doc.path), text, doc.content_hash) for doc, text in texts
            )
        return time.perf_counter() - started

    def engine_row(
        self,
        design: str,
        synced: Path,
        collection: str,
        docs: int,
        servers: Sequence[SimServer],
        endpoints: Sequence[Endpoint],
        dials: Dials,
        timeout_s: float | None = None,
    ) -> Row:
        row = Row(design)
        _reset(servers)
        progress(f"{design}: running the engine on {docs} documents")

        def call() -> IngestReport:
            return ingest(
                corpus=Corpus(synced, [collection]),
                wiki_root=self.fresh_wiki(),
                fleet=Fleet(endpoints),
                dials=dials,
                log=engine_log,
            )

        started = time.perf_counter()
        try:
            report = call() if timeout_s is None else _with_timeout(call, timeout_s)
        except Exception as error:  # a broken design is a row, not a crash
            row.unavailable = f"run failed ({type(error).__name__}: {error})"[:160]
            progress(f"{design}: {row.unavailable}")
            return row
        row.seconds = time.perf_counter() - started
        row.docs = report.count
        row.makespan_s = report.duration_s
        _stats(servers, row)
        if report.failed:
            row.notes.append(f"{len(report.failed)} failed")
        row.notes.append(
            "workers "
            + " / ".join(
                # With automatic concurrency, ``workers`` is where it settled.
                f"{m.model} {m.workers}{' (auto)' if getattr(m, 'auto', False) else ''}"
                for m in report.models
            )
        )
        if report.requests_per_doc is not None:
            row.notes.append(f"{report.requests_per_doc:.2f} requests/doc")
        if report.dials.flagged_pages == "retry":
            skipped = sum(report.tally.second_opinions_skipped.values())
            row.notes.append(
                f"second opinions {report.tally.second_opinions} asked, "
                f"{report.second_opinions_kept} kept, {skipped} skipped"
            )
        if report.dials.judge_share and len(report.models) > 1:
            row.notes.append(f"pages judged {report.judgements}")
        progress(f"{design}: {row.docs} docs in {row.seconds:.1f} s = {row.rate:.2f} docs/s")
        return row

    def baseline_row(
        self,
        design: str,
        servers: Sequence[SimServer],
        make: Callable[[], Coroutine[Any, Any, DesignResult]],
    ) -> Row:
        row = Row(design)
        _reset(servers)
        progress(f"{design}: running")
        started = time.perf_counter()
        try:
            result = self.runner.run(make())
        except Exception as error:
            row.unavailable = f"run failed ({type(error).__name__}: {error})"[:160]
            progress(f"{design}: {row.unavailable}")
            return row
        row.seconds = time.perf_counter() - started
        row.docs = result.ok
        row.makespan_s = result.makespan_s
        _stats(servers, row)
        if result.failed:
            row.notes.append(f"{result.failed} failed: {'; '.join(result.errors)}")
        if len(result.finished_s) > 1:
            row.notes.append(
                "last answer "
                + " / ".join(f"{m} {s:.1f}s" for m, s in sorted(result.finished_s.items()))
            )
        progress(f"{design}: {row.docs} docs in {row.seconds:.1f} s = {row.rate:.2f} docs/s")
        return row


def _with_timeout(call: Callable[[], IngestReport], timeout_s: float) -> IngestReport:
    """Run ``call`` on a daemon thread; give up waiting (it keeps running) after ``timeout_s``."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["report"] = call()
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name="bench-engine", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise TimeoutError(f"no result after {timeout_s:.0f} s (left running)")
    if "error" in outcome:
        raise outcome["error"]
    return cast(IngestReport, outcome["report"])
