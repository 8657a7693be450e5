"""Link candidates: the related-document index's cost per document, and on request its agreement
with an earlier design.

``python -m benchmarks.related`` builds the engine's index (:mod:`wiki_assets.engine.related`) of
each corpus, asks it for every document's candidates and prints, per corpus, the CPU milliseconds
per document of indexing and of querying, and the CPU time of asking 64 documents at a time
(``candidates_many``, as a run asks) with whether that gave exactly the one-by-one answers.

``--reference [COMMIT]`` also builds the index of an earlier commit over the same documents and
compares. The default, :data:`REFERENCE_COMMIT`, is the last single-module index (a row per
posting, its postings queried in SQL). Its source is read with ``git show COMMIT:PATH`` from the
repository this file is in and imported as a temporary module, so the old design lives in git,
not in this package. The table then also gives the reference's CPU times, the mean share of its
top-``k`` that the engine also returns (overlap@k), and how often both put the same document first.
To read the old design itself: ``git show 6a802e8:wiki_assets/engine/related.py``.

Corpora: the sample corpus (``synced/``, 24 English and Korean documents), N generated documents
(:func:`benchmarks.documents.build_documents`, 2,000 by default) and N tiny notes (the overhead
benchmark's, :func:`benchmarks.documents.build_tiny_documents`).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.documents import SAMPLE_ROOT, BenchDoc, build_documents, build_tiny_documents
from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.related import RelatedIndex

Item = tuple[str, str, str, str]
BATCH = 64  # documents per candidates_many call, as a run asks

REFERENCE_COMMIT = "6a802e8957af485bbf1153a51f2e8e30b4a4b3e5"
"""The last commit whose index is one module with a row per posting, queried in SQL."""
REFERENCE_PATH = "wiki_assets/engine/related.py"
"""Where the index lived at that commit (it imports only the standard library)."""


@dataclass(frozen=True, slots=True)
class Measured:
    index_ms: float  # CPU ms per document to index the corpus
    query_ms: float  # CPU ms per document to ask for its candidates
    found: dict[str, list[str]]  # each document's candidate paths, best first
    batched_ms: float | None = None  # CPU ms per document asking BATCH documents at a time
    batched_same: bool | None = None  # whether the batches gave exactly the one-by-one answers


def load_reference(commit: str, into: Path) -> ModuleType:
    """The index module of ``commit`` (``git show commit:REFERENCE_PATH``), imported."""
    repo = Path(__file__).resolve().parent.parent
    shown = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{REFERENCE_PATH}"],
        capture_output=True,
        text=True,
    )
    if shown.returncode != 0:
        raise SystemExit(
            f"related: cannot read {REFERENCE_PATH} at {commit} with git "
            f"(a git checkout with that commit is needed): {shown.stderr.strip()}"
        )
    source = into / "related_reference.py"
    source.write_text(shown.stdout, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("benchmarks_related_reference", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def sample_items() -> list[Item]:
    items = []
    for file in sorted(p for p in SAMPLE_ROOT.rglob("*") if p.is_file()):
        if file.name.startswith("."):
            continue
        path = file.relative_to(SAMPLE_ROOT).as_posix()
        text = file.read_text(encoding="utf-8")
        items.append((path, title_of(text, path), text, hashlib.sha256(text.encode()).hexdigest()))
    return items


def bench_items(docs: Sequence[BenchDoc]) -> list[Item]:
    return [(d.path, d.title, d.text, hashlib.sha256(d.text.encode()).hexdigest()) for d in docs]


def measure(open_index: Callable[[Path], Any], db: Path, items: list[Item], k: int) -> Measured:
    with open_index(db) as index:
        started = time.process_time()
        index.update_many(items)
        indexed = time.process_time() - started
        started = time.process_time()
        alone = {path: index.candidates(path, k) for path, *_ in items}
        queried = time.process_time() - started
        found = {path: [c.path for c in candidates] for path, candidates in alone.items()}
        batched_ms, same = None, None
        if hasattr(index, "candidates_many"):  # the engine's index: the batches a run asks
            # The answers computed above are not saved: the batches compute them again.
            paths = list(alone)
            started = time.process_time()
            together = {}
            for at in range(0, len(paths), BATCH):
                together.update(index.candidates_many(paths[at : at + BATCH], k))
            batched_ms = (time.process_time() - started) * 1000 / max(1, len(paths))
            same = together == alone
    n = max(1, len(items))
    return Measured(indexed * 1000 / n, queried * 1000 / n, found, batched_ms, same)


def agreement(new: dict[str, list[str]], reference: dict[str, list[str]]) -> tuple[float, float]:
    """(mean overlap@k with the reference's candidates, share with the same first candidate)."""
    overlaps, firsts = [], []
    for path, expected in reference.items():
        got = new.get(path, [])
        overlaps.append(len(set(got) & set(expected)) / len(expected) if expected else 1.0)
        firsts.append((got[:1] == expected[:1]) if expected else not got)
    n = max(1, len(overlaps))
    return sum(overlaps) / n, sum(firsts) / n


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.related",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--docs", type=int, default=2000, help="generated documents (2000)")
    parser.add_argument("--k", type=int, default=8, help="candidates per document (8)")
    parser.add_argument(
        "--reference",
        nargs="?",
        const=REFERENCE_COMMIT,
        default=None,
        metavar="COMMIT",
        help=f"also compare with the index of COMMIT, read with git show "
        f"(default COMMIT: {REFERENCE_COMMIT[:7]}, the row-per-posting index)",
    )
    args = parser.parse_args(argv)
    if min(args.docs, args.k) < 1:
        parser.error("--docs and --k must be positive")
    with tempfile.TemporaryDirectory(prefix="bench-related-") as tmp:
        root = Path(tmp)
        reference = load_reference(args.reference, root) if args.reference else None
        if reference is None:
            rows = [
                "| corpus | docs | index CPU ms/doc | query CPU ms/doc "
                "| 64 per call (same answers) |",
                "|---|---:|---:|---:|---:|",
            ]
        else:
            rows = [
                "| corpus | docs | index CPU ms/doc (engine / reference) "
                "| query CPU ms/doc (engine / reference) | engine, 64 per call (same answers) "
                "| overlap@k | same first |",
                "|---|---:|---:|---:|---:|---:|---:|",
            ]
        corpora = [
            ("sample (synced/)", sample_items()),
            ("generated", bench_items(build_documents(root / "generated", args.docs))),
            ("tiny notes", bench_items(build_tiny_documents(root / "tiny", args.docs))),
        ]
        for name, items in corpora:
            print(f"related: {name}: {len(items)} documents", file=sys.stderr, flush=True)
            slug = name.split()[0]
            new = measure(RelatedIndex, root / f"{slug}-new.db", items, args.k)
            batched = f"{new.batched_ms or 0:.2f} ({'yes' if new.batched_same else 'NO'})"
            if reference is None:
                rows.append(
                    f"| {name} | {len(items)} | {new.index_ms:.2f} | {new.query_ms:.2f} "
                    f"| {batched} |"
                )
                continue
            ref = measure(reference.RelatedIndex, root / f"{slug}-ref.db", items, args.k)
            overlap, first = agreement(new.found, ref.found)
            rows.append(
                f"| {name} | {len(items)} | {new.index_ms:.2f} / {ref.index_ms:.2f} "
                f"| {new.query_ms:.2f} / {ref.query_ms:.2f} | {batched} "
                f"| {overlap:.3f} | {first:.3f} |"
            )
    against = f" against the index of {args.reference[:7]}" if args.reference else ""
    print(f"## Link candidates: the engine's index{against} (k = {args.k})\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
