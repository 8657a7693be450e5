"""The embedding process: ``python -m wiki_assets.engine.related.embedder DB RUN_PID``.

Started by :class:`~wiki_assets.engine.related.embedding_service.EmbeddingService` beside a run
that has more documents to embed than it embeds before its first request. It embeds their
openings in the order the run sends them (the order its queue takes them), a request of the
endpoint's ``batch_size`` at a time, and stores each request's vectors in the index as soon as
they come: a run stopped meanwhile keeps every vector stored. It is a process of its own, so
that nothing it waits for or computes holds the run's event loop, and so that a stop ends it at
once, whatever request it is in.

Protocol, one JSON value per line. The run writes the endpoint (the fields of
:class:`~wiki_assets.engine.config.EmbeddingsEndpoint`; its key is read from the environment
variable it names, here), then ``[id, opening]`` for each document; the end of its input is the
end of the documents. The process writes ``{"embedded": n}`` after each request's vectors are
stored (``n``: documents embedded so far), and ``{"failed": why}`` when the endpoint fails or
answers vectors the index cannot take, after which it ends: the documents left keep no vector,
for a later run.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.errors import EmbeddingsError
from wiki_assets.engine.lifeline import exit_with_parent
from wiki_assets.engine.llm.embeddings_client import EmbeddingsClient
from wiki_assets.engine.related.index import RelatedIndex
from wiki_assets.engine.related.vectors import DimensionMismatch, script

EMBEDDER_CACHE_MIB = 4
"""SQLite's page cache of the process's connection: it writes vectors and reads nothing back."""


class _Lines:
    """Lines from a file descriptor: the whole ones that came, without waiting unless asked."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = b""
        self.ended = False

    def take(self, wait: bool) -> list[bytes]:
        """The lines that came; with ``wait``, blocks until one does or the input ends."""
        while not self.ended:
            if b"\n" in self.pending:
                *lines, self.pending = self.pending.split(b"\n")
                return [line for line in lines if line]
            if not wait and not select.select([self.fd], [], [], 0)[0]:
                return []
            data = os.read(self.fd, 1 << 16)
            self.ended = not data
            self.pending += data
        return []


def serve(db_path: Path, asks: int = 0, answers: int = 1) -> None:
    """The process (see the module docstring): the documents read from ``asks``, what happened
    written to ``answers``. Ends when ``asks`` does and every document read is embedded, or when
    the endpoint fails."""
    lines = _Lines(asks)
    first = lines.take(wait=True)
    if not first:
        return  # the run ended before it said which endpoint
    endpoint = EmbeddingsEndpoint(**json.loads(first[0]))
    waiting = [json.loads(line) for line in first[1:]]
    embedded = 0
    with (
        RelatedIndex(db_path, cache_mib=EMBEDDER_CACHE_MIB) as index,
        EmbeddingsClient(endpoint) as client,
        os.fdopen(answers, "wb") as out,
    ):

        def say(**news: object) -> None:
            out.write(json.dumps(news).encode() + b"\n")
            out.flush()

        while waiting or not lines.ended:
            # A full request's worth, or what came while the last request was out: a request
            # never waits for documents the run has not sent yet.
            while len(waiting) < endpoint.batch_size and not lines.ended:
                came = lines.take(wait=not waiting)
                if not came:
                    break
                waiting += [json.loads(line) for line in came]
            batch, waiting = waiting[: endpoint.batch_size], waiting[endpoint.batch_size :]
            if not batch:
                continue
            openings = [opening for _, opening in batch]
            try:
                vectors = client.embed(openings)
                docs = [(doc, script(opening)) for doc, opening in batch]
                index.vectors.store(client.model, client.where, docs, vectors)
            except (EmbeddingsError, DimensionMismatch) as error:
                say(failed=str(error))
                return
            embedded += len(batch)
            say(embedded=embedded)


def main(argv: Sequence[str]) -> int:
    # Ctrl-C in a terminal reaches the whole process group: the run stops itself, then this
    # process (SIGTERM, or its input closing).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    db_path, run = argv
    exit_with_parent(int(run))  # a run that dies ends it too, in the middle of a request
    try:
        serve(Path(db_path))
    except BrokenPipeError:  # the run is gone
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
