"""``python -m wiki_assets.simulator``: serve one simulated model in the foreground."""

from __future__ import annotations

import argparse
import dataclasses
import signal
import threading
from collections.abc import Sequence

from wiki_assets.simulator.judge import JUDGES
from wiki_assets.simulator.model import BEHAVIOURS, EMBEDDING_FAULTS, PRESETS
from wiki_assets.simulator.server import SimServer

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Serve one simulated model in the foreground until SIGINT or SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python -m wiki_assets.simulator",
        description="Serve a simulated OpenAI-compatible chat completions and embeddings endpoint.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="fast")
    parser.add_argument("--model", help="model id to serve")
    parser.add_argument("--per-request-tps", type=float)
    parser.add_argument("--aggregate-tps", type=float)
    parser.add_argument("--max-batch", type=int)
    parser.add_argument("--latency-s", type=float)
    parser.add_argument("--context-tokens", type=int)
    parser.add_argument("--behaviour", choices=BEHAVIOURS, help="what its pages say")
    parser.add_argument("--judge", choices=JUDGES, help="how it judges sentences")
    parser.add_argument("--embedding-dim", type=int, help="dimension of /v1/embeddings vectors")
    parser.add_argument("--embedding-delay-s", type=float, help="time per embeddings request")
    parser.add_argument(
        "--embedding-fault", choices=EMBEDDING_FAULTS, help="how /v1/embeddings misbehaves"
    )
    args = parser.parse_args(argv)

    overrides = {
        name: value
        for name, value in (
            ("model", args.model),
            ("per_request_tps", args.per_request_tps),
            ("aggregate_tps", args.aggregate_tps),
            ("max_batch", args.max_batch),
            ("latency_s", args.latency_s),
            ("context_tokens", args.context_tokens),
            ("behaviour", args.behaviour),
            ("judge", args.judge),
            ("embedding_dim", args.embedding_dim),
            ("embedding_delay_s", args.embedding_delay_s),
            ("embedding_fault", args.embedding_fault),
        )
        if value is not None
    }
    sim = dataclasses.replace(PRESETS[args.preset], **overrides)

    done = threading.Event()

    def _on_signal(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    with SimServer(sim, args.host, args.port) as server:
        print(f"simulator: serving {sim.model!r} at {server.base_url} ({sim})", flush=True)
        # Wake up now and then: signal handlers only run in the main thread between waits.
        while not done.wait(0.5):
            pass
    print("simulator: stopped", flush=True)
    return 0
