"""A simulated server that records the chat requests it receives, so baselines can replay them.

The engine's request for a document (system prompt, page prompt with the document's language and
its related-document candidates, ``response_format`` with the page schema, ``max_tokens``,
``temperature``) is built from engine internals that keep evolving. Rather than rebuild it,
the benchmark records what the engine really sent during one of its own timed rows and has every
other design replay those exact bodies: the servers then see identical requests whichever design
sends them, and stay identical when the engine's prompts change.

Run ``python -m benchmarks.recording --port N --record FILE [--limit K]`` to serve an instantly
answering recorder in the foreground (the overhead benchmark's child process): it appends each
of the first ``K`` request bodies as one JSON line to ``FILE``.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from aiohttp import web

from wiki_assets.simulator import SimModel, SimServer
from wiki_assets.simulator.app import SimApp
from wiki_assets.simulator.stats import Ledger

Body = dict[str, Any]

_DOCUMENT = re.compile(r"^Document: (.+)$", re.MULTILINE)


class RecordingServer(SimServer):
    """A :class:`SimServer` that keeps (or appends to a file) the JSON body of every chat request
    while ``recording`` is set, up to ``limit`` bodies."""

    def __init__(
        self,
        sim: SimModel | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        sink: IO[str] | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__(sim, host, port)
        self.recording = True
        self.recorded: list[Body] = []
        self._sink = sink
        self._limit = limit
        self._seen = 0

    def _new_app(self) -> SimApp:
        return _RecordingApp(self.sim, self._ledger, self._ids, self)

    async def note(self, request: web.Request) -> None:
        """Keep ``request``'s body if recording (called before the request is answered)."""
        if self.recording and (self._limit is None or self._seen < self._limit):
            try:
                body = await request.json()  # aiohttp caches the body: the handler reads it again
            except ValueError:
                body = None
            if isinstance(body, dict):
                self._seen += 1
                if self._sink is not None:
                    self._sink.write(json.dumps(body, ensure_ascii=False) + "\n")
                    self._sink.flush()
                else:
                    self.recorded.append(body)


class _RecordingApp(SimApp):
    """The simulator's application, showing every chat request to its recorder first."""

    def __init__(
        self, sim: SimModel, ledger: Ledger, ids: Iterator[int], recorder: RecordingServer
    ) -> None:
        super().__init__(sim, ledger, ids)
        self._recorder = recorder

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        await self._recorder.note(request)
        return await super()._chat(request)


def document_of(body: Body) -> str:
    """The document path a recorded request is about ("Document: <path>" in its user message)."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            found = _DOCUMENT.search(str(message.get("content") or ""))
            if found:
                return found.group(1).strip()
    return ""


def in_document_order(bodies: Sequence[Body]) -> list[Body]:
    """Recorded bodies in document path order (the order the engine plans them), stable."""
    return sorted(bodies, key=document_of)


def read_recorded(path: Path) -> list[Body]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recording")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="instant")
    parser.add_argument("--record", type=Path, required=True, help="JSON lines file to append to")
    parser.add_argument("--limit", type=int, help="record the first LIMIT requests only")
    args = parser.parse_args(argv)

    done = threading.Event()

    def _on_signal(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    sim = SimModel(model=args.model, instant=True)
    with (
        args.record.open("a", encoding="utf-8") as sink,
        RecordingServer(sim, args.host, args.port, sink=sink, limit=args.limit),
    ):
        print(f"recording: serving {args.model!r} on port {args.port}", flush=True)
        while not done.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
