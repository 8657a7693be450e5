"""An ingest plans in one pass over the synced tree: each file is read (and hashed) once to decide
what is current, to bring the related-document index up to date and to stream the jobs; only the
worker that summarizes a document reads it again. Counted through the interpreter's audit hook for
``open`` (builtins.open, Path.open and os.open all raise it): every read of a file shows."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.simulator import SimModel, SimServer


class FileOpens:
    """Counts the opens of the files under ``root``, per path relative to it, while entered."""

    watching: ClassVar[list[FileOpens]] = []
    hooked: ClassVar[bool] = False  # an audit hook stays for the process: installed once

    def __init__(self, root: Path) -> None:
        self.root = f"{root.resolve()}{os.sep}"
        self.counts: Counter[str] = Counter()

    def __enter__(self) -> FileOpens:
        if not FileOpens.hooked:
            sys.addaudithook(_count_open)
            FileOpens.hooked = True
        FileOpens.watching.append(self)
        return self

    def __exit__(self, *_: object) -> None:
        FileOpens.watching.remove(self)


def _count_open(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not FileOpens.watching or isinstance(args[0], int | None):
        return
    name = os.fsdecode(os.fspath(args[0]))
    for counter in FileOpens.watching:
        if name.startswith(counter.root):
            counter.counts[name.removeprefix(counter.root)] += 1


def write_corpus(root: Path, per_collection: int) -> list[str]:
    for collection in ("a", "b"):
        (root / collection).mkdir(parents=True)
        for i in range(per_collection):
            (root / collection / f"doc-{i:02}.md").write_text(f"# {collection} {i}\n\nText {i}.\n")
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


def test_planning_reads_each_file_once(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    documents = write_corpus(synced, 6)
    in_a = {path for path in documents if path.startswith("a/")}

    def run(opens: FileOpens) -> int:
        with SimServer(SimModel(model="instant", instant=True)) as server, opens:
            report = ingest(
                corpus=Corpus(synced, ["a"]),
                wiki_root=tmp_path / "wiki",
                # b is read too: the related index covers the whole corpus
                fleet=Fleet([Endpoint(name="sim", base_url=server.base_url, model="instant")]),
                dials=Dials(max_tokens=64, flush_seconds=0.2),
            )
        assert not report.failed
        return report.count

    first = FileOpens(synced)
    assert run(first) == len(in_a)
    # Planning (currency, related index, jobs) reads every file once; the worker that summarizes
    # a document reads it once more. The old planning read a document of the run's collections
    # three times (hashed and read for the related index, hashed again for the jobs), others twice.
    # (The ignore rules look for a .wikiignore once a pass: it is not a document.)
    assert first.counts == {path: 1 + (path in in_a) for path in documents} | {".wikiignore": 1}

    # A re-run with one document of each collection edited: one read each to plan, one more for
    # the only document summarized again; the edited document of b is indexed from its one read.
    for edited in ("a/doc-03.md", "b/doc-04.md"):
        (synced / edited).write_text("# Edited\n\nNew text.\n")
    again = FileOpens(synced)
    assert run(again) == 1
    read = {path: 1 + (path == "a/doc-03.md") for path in documents}
    assert again.counts == read | {".wikiignore": 1}
