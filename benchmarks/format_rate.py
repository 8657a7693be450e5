"""One format's extraction rate and memory, for ``benchmarks.formats``: in a process of its own
that imports only the reader, the files of format FORMAT under ROOT extracted one at a time (a
zip's members from their archive). Prints the files, files/s and the process's peak RSS (MB).

    python -m benchmarks.format_rate FORMAT ROOT
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from wiki_assets.engine.documents import archives
from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.documents.extract import extract
from wiki_assets.engine.errors import DocumentError, NoText


def main(name: str, root: Path) -> None:
    seconds = []
    for doc in scan(root):
        if doc.format.extracted and doc.format.name == name:
            started = time.perf_counter()
            try:
                extract(archives.source(root / doc.path), name, 2_000_000)
            except (NoText, DocumentError):
                pass  # (a file that holds no text took its time too)
            seconds.append(time.perf_counter() - started)
    print(len(seconds), len(seconds) / sum(seconds), _peak_mb())


def _peak_mb() -> float:
    """This process's peak RSS (VmHWM: unlike getrusage's ru_maxrss, not inherited from the
    process that started it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
