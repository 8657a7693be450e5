"""One format's extraction rate and memory, for ``benchmarks.formats``: in a process of its own
that imports only the reader, the files of format FORMAT under ROOT extracted one at a time (a
zip's members from their archive). Prints the files, files/s and the process's peak RSS (MB).

    python -m benchmarks.format_rate FORMAT ROOT
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from wiki_assets.engine.documents import archives
from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.documents.extract import extract


def main(name: str, root: Path) -> None:
    seconds = []
    for doc in scan(root):
        if doc.format.extracted and doc.format.name == name:
            started = time.perf_counter()
            extract(archives.source(root / doc.path), name, 2_000_000)
            seconds.append(time.perf_counter() - started)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(len(seconds), len(seconds) / sum(seconds), peak)


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
