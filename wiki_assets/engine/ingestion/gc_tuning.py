"""Fewer passes of CPython's cyclic garbage collector while a run is in progress.

A run allocates hundreds of thousands of short-lived containers: each request's options, headers
and decoded answer, each answer's checks, each page's record. By default the collector runs a
young pass every 700 net allocations, and every 10th and 100th time a pass over the older
generations, which walks every object the process holds: its modules, Dagster's, the plan. What
those passes cost a run, with and without these settings, is measured in docs/benchmarks.md.

During a run the objects alive before it are frozen out of the collector's passes
(:func:`gc.freeze`), and the young generation is collected every :data:`YOUNG_THRESHOLD`
allocations. Reference counting still frees every object that is not in a cycle the moment it is
dropped; only garbage in cycles waits longer, at most that many allocations. Both settings are
undone when the last run of the process ends (runs may overlap, on threads of one process).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000
"""Net container allocations between two young passes during a run (CPython's default: 700)."""

_lock = threading.Lock()
_runs = 0  # runs of this process in progress
_saved: tuple[int, int, int] = (0, 0, 0)  # the thresholds before the first of them


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cyclic garbage less often while the block runs (see the module's doc)."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = gc.get_threshold()
            young, middle, old = _saved
            gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
            gc.freeze()
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0:
                gc.unfreeze()  # back into the oldest generation, collected as usual
                gc.set_threshold(*_saved)
