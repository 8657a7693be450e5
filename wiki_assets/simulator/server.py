"""A simulated model served over HTTP from its own event loop on a daemon thread."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Iterator

from wiki_assets.simulator.app import SimApp
from wiki_assets.simulator.model import SimModel
from wiki_assets.simulator.stats import Ledger, SimStats

__all__ = ["SimServer", "fleet"]


class SimServer:
    """One simulated model served over HTTP from its own event loop on a daemon thread.

    Synchronous code and other event loops can use it alike. It can be stopped and started
    again; its counters, request logs, fault dice and completion ids carry over.
    """

    def __init__(self, sim: SimModel | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sim = sim if sim is not None else SimModel()
        self.host = host
        self.port = port  # the bound port once started (port 0 picks a free one)
        self._ledger = Ledger(self.sim)
        self._ids = itertools.count(1)
        self._lifecycle = threading.Lock()  # serializes start/stop
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._app: SimApp | None = None
        self._started = False

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        if not self._started:
            raise RuntimeError("SimServer is not running; call start() first")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    def start(self) -> SimServer:
        """Serve on a fresh event loop in a daemon thread; returns once the port listens."""
        with self._lifecycle:
            if self._started:
                return self
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name=f"sim-{self.sim.model}", daemon=True
            )
            thread.start()
            app = self._new_app()
            try:
                start = app.start(self.host, self.port)
                self.port = asyncio.run_coroutine_threadsafe(start, loop).result(timeout=30)
            except BaseException:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(timeout=5)
                loop.close()
                raise
            self._loop, self._thread, self._app, self._started = loop, thread, app, True
            return self

    def _new_app(self) -> SimApp:
        """The application :meth:`start` serves (a subclass may serve a subclass of it)."""
        return SimApp(self.sim, self._ledger, self._ids)

    def stop(self) -> None:
        """Stop serving; idempotent. Hanging and queued requests are answered 503 first."""
        with self._lifecycle:
            if not self._started or self._loop is None or self._thread is None:
                return
            loop, thread = self._loop, self._thread
            try:
                assert self._app is not None
                asyncio.run_coroutine_threadsafe(self._app.stop(), loop).result(timeout=30)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join(timeout=10)
                if not thread.is_alive():
                    loop.close()
                self._started = False
                self._loop = self._thread = None
                self._app = None

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- what it has seen -----------------------------------------------------------------

    @property
    def stats(self) -> SimStats:
        """A consistent copy of the counters (safe from any thread)."""
        return self.snapshot()

    def snapshot(self) -> SimStats:
        """A consistent copy of the counters (safe from any thread)."""
        return self._ledger.snapshot()

    def request_log(self) -> list[str]:
        """The first line of every valid chat request's last user message, in arrival order."""
        return self._ledger.request_log()

    def request_texts(self) -> list[str]:
        """The whole last user message of every valid chat request, in arrival order."""
        return self._ledger.request_texts()

    def bearer_tokens(self) -> set[str]:
        """Every distinct bearer token the chat and embeddings requests carried (kept across
        resets)."""
        return self._ledger.bearer_tokens()

    def reset_stats(self) -> None:
        """Zero the counters and rewind the fault dice (a "dead" server comes back alive)."""
        self._ledger.reset()


@contextlib.contextmanager
def fleet(*sims: SimModel) -> Iterator[list[SimServer]]:
    """Start one server per model on free loopback ports; stop them all on exit."""
    servers: list[SimServer] = []
    try:
        for sim in sims:
            servers.append(SimServer(sim).start())
        yield servers
    finally:
        for server in reversed(servers):
            server.stop()
