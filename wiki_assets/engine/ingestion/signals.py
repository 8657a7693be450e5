"""SIGTERM and SIGINT as a request to stop a run cleanly.

Left to themselves, the signals raise an exception wherever the main thread happens to be
(Dagster turns both into an interrupt error inside the asset), which tears the event loop down
mid-request. While a run is on, they only ask it to stop: the run cancels its requests, journals
what came back, writes the pages and returns, and whoever called it sees the signal in its report.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def exit_code(signal_name: str) -> int:
    """The shell's convention for a process ended by a signal: 128 + its number."""
    return 128 + int(signal.Signals[signal_name])


@contextmanager
def stop_on_signals(request_stop: Callable[[str], None]) -> Iterator[None]:
    """Within the block, SIGTERM and SIGINT call ``request_stop(name)`` instead of their usual
    handlers, which are put back afterwards. Off the main thread signals cannot be caught, and
    the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    def handler(signum: int, frame: object) -> None:
        request_stop(signal.Signals(signum).name)

    for signum in STOP_SIGNALS:
        signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
