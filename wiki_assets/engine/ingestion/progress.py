"""The lines a run logs: its start (fleet, dials, what it will do), its progress after each flush,
and its end. Operators and tests read these lines; keep their wording stable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch import Lane
from wiki_assets.engine.documents import ocr
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.related.embed_missing import Embedded


class Log(Protocol):
    """What the engine needs of a logger: ``logging.Logger`` and Dagster's ``context.log`` fit."""

    def info(self, msg: str) -> Any: ...
    def warning(self, msg: str) -> Any: ...
    def error(self, msg: str) -> Any: ...


def log_related_index(log: Log, indexed: int, pruned: int, beside: int) -> None:
    """``beside``: documents whose link candidates a helper process answers beside the run's
    requests (:mod:`~wiki_assets.engine.related.service`)."""
    if indexed or pruned:
        helper = f" · candidates of {beside} answered by a helper process" if beside else ""
        log.info(f"related index: {indexed} documents indexed · {pruned} removed{helper}")


def log_embedding(log: Log, embedded: Embedded, model: str) -> None:
    """What the plan embedded before the first request (:mod:`~.plan`); embedding beside the
    requests says what it does itself (:mod:`~.meaning`)."""
    if embedded.embedded:
        again = f" · every document again: {embedded.reembed}" if embedded.reembed else ""
        log.info(
            f"link candidates by meaning: {embedded.embedded} documents embedded by {model} · "
            f"{embedded.seconds:.1f} s before the first request{again}"
        )
    if embedded.failure:
        log.warning(f"{embedded.failure}; link candidates by n-grams alone in this run")


def _workers(lanes: Sequence[Lane]) -> str:
    """``4 workers/model · `` when every model really gets the same fixed number, else nothing:
    the models' list says what each gets (the embedded model runs one, automatic workers
    start few), and a dial's value that no model got would mislead."""
    counts = {lane.workers.most for lane in lanes}
    if len(counts) == 1 and not any(lane.workers.auto for lane in lanes):
        return f"{counts.pop()} workers/model · "
    return ""


def log_start(
    log: Log,
    report: IngestReport,
    lanes: Sequence[Lane],
    dials: Dials,
    total: int,
    state: str,
) -> None:
    """``total``: the documents the run expects to summarize; ``state``: where its state lives."""
    models = ", ".join(
        f"{lane.endpoint.name} "
        + (f"auto ≤{lane.workers.most}" if lane.workers.auto else f"×{lane.workers.most}")
        for lane in lanes
    )
    log.info(
        f"ingest start: {len(lanes)} models ({models}) · {_workers(lanes)}claim "
        f"{dials.claim_size} · "
        f"flush {dials.flush_seconds:g}s · max_tokens {dials.max_tokens} · "
        f"{total} to summarize · collections {', '.join(report.collections)}"
    )
    log.info(f"state: {state}")
    for lane in lanes:
        ep = lane.endpoint
        workers = (  # (log text users know: "auto concurrency" is automatic workers)
            f"auto concurrency (start {lane.workers.limit}, ceiling {lane.workers.most})"
            if lane.workers.auto
            else f"{lane.workers.most} workers"
        )
        log.info(
            f"model {ep.name}: {ep.model} · {workers} · "
            + (f"≤{ep.max_in_flight} in flight fleet-wide · " if ep.max_in_flight else "")
            + f"max_tokens {ep.max_tokens or dials.max_tokens} · context {ep.context_tokens} · "
            f"timeout {ep.timeout_s:g}s"
        )


def progress_line(report: IngestReport, lanes: Sequence[Lane], total: int, elapsed: float) -> str:
    """Done of ``total`` after ``elapsed`` seconds, the rate and the time left, per model too."""
    done = report.count
    rate = done / elapsed if elapsed > 0 else 0.0
    left = max(0, total - done - len(report.failed))
    eta = f"{left / rate:.0f} s left" if rate > 0 else "time left unknown"
    models = " ".join(
        f"{lane.endpoint.name} {lane.tally.docs / elapsed:.2f}/s"
        + (f"@{lane.workers.limit}" if lane.workers.auto else "")
        for lane in lanes
    )
    return (
        f"ingest progress: {done}/{total} docs · {elapsed:.1f} s · {rate:.2f} docs/s · "
        f"{eta} · {models} · skipped {report.skipped} · failed {len(report.failed)}"
    )


def log_done(log: Log, report: IngestReport, lanes: Sequence[Lane]) -> None:
    log.info(
        f"ingest done: {report.count} docs · {report.duration_s:.1f} s · "
        f"{report.docs_per_sec:.2f} docs/s · skipped {report.skipped} · "
        f"failed {len(report.failed)} · flagged {report.flagged} pages · removed {report.removed}"
        + (f" ({report.relinked} pages re-linked)" if report.relinked else "")
        + (f" · no text {len(report.no_text)}" if report.no_text else "")
        + (f" · hedged {report.tally.hedged}" if report.tally.hedged else "")
        + (
            f" · {report.requests_per_doc:.2f} requests/doc"
            if report.requests_per_doc is not None
            else ""
        )
        + _second_opinions(report)
    )
    waiting = sum(1 for item in report.no_text if item["reason"].endswith(ocr.WOULD_READ))
    if waiting:
        log.warning(f"OCR would read {waiting} files (scans and images): {ocr.INSTALL}")
    for lane in lanes:
        if lane.workers.auto:
            log.info(  # (log text users know: "concurrency" is the model's workers)
                f"model {lane.endpoint.name}: automatic concurrency settled at "
                f"{lane.workers.limit} (peak {lane.workers.peak})"
            )
    # A model that did not serve to the end is a warning of its own, whatever else the run did:
    # a run that finished on the rest of the fleet is otherwise all green.
    for line in report.models_out():
        log.warning(f"model {line}")
    stopped = report.tally.stopped
    if report.stopped_by:
        log.warning(f"{stopped}: {report.count} done, {report.unfinished} left for the next run")
    elif stopped:
        log.error(
            f"ingest stopped: {stopped} · {report.unfinished} documents left for the next run"
        )


def _second_opinions(report: IngestReport) -> str:
    """`` · second opinions 12 asked, 9 kept, 40 skipped (budget 30, model_not_kept 10)``, or
    nothing when the run asked none and skipped none."""
    asked, skipped = report.tally.second_opinions, report.tally.second_opinions_skipped
    if not asked and not skipped:
        return ""
    why = ", ".join(f"{reason} {count}" for reason, count in sorted(skipped.items()))
    return f" · second opinions {asked} asked, {report.second_opinions_kept} kept" + (
        f", {sum(skipped.values())} skipped ({why})" if skipped else ""
    )
