"""The engine's report of a run, handed whole to the caller that executes the run in its own process
(the CLI's :mod:`wiki_assets.cli.runner`): the run's metadata is what the UI shows, and keeps only
part of it (at most :data:`~wiki_assets.defs.metadata.run_figures.MAX_LISTED_FAILURES` failures).

A run asks for its report by id before it starts; a run nobody asked for (the schedule, the UI, a
run launched by the daemon in its own process) publishes into nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from wiki_assets.engine.ingestion.report import IngestReport

_lock = threading.Lock()
_wanted: dict[str, list[IngestReport]] = {}


@contextmanager
def collecting(run_id: str) -> Iterator[list[IngestReport]]:
    """The reports the run ``run_id`` publishes while this is open (one per ``wiki_pages`` step)."""
    reports: list[IngestReport] = []
    with _lock:
        _wanted[run_id] = reports
    try:
        yield reports
    finally:
        with _lock:
            _wanted.pop(run_id, None)


def publish(run_id: str, report: IngestReport) -> None:
    """Hand ``report`` to whoever is collecting the run's reports, if anyone is."""
    with _lock:
        reports = _wanted.get(run_id)
        if reports is not None:
            reports.append(report)
