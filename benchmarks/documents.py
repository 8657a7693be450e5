"""Benchmark documents: deterministic, varied copies of the project's sample corpus.

The sample corpus under ``synced/`` has 24 short English and Korean documents (about 300-900
tokens each). A throughput benchmark needs hundreds of documents whose lengths vary the way a real
folder's do, so each benchmark document takes one sample document's heading, a slice of its body
starting at a random paragraph, and, when that is not long enough, continues with whole documents
of the same language, cut at a target length drawn log-uniformly between ``min_tokens`` and
``max_tokens`` (most documents short, a long tail, as in a real corpus). Lengths are measured with
the simulator's own token estimate, which is what the simulated servers charge for.

Everything is derived from ``random.Random(seed)``, so every run and every design sees exactly the
same texts. The documents are written under a synced root, where the engine reads them, and are
also returned (path, title, text, tokens) for reporting.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path

from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.simulator import estimate_tokens, truncate_to_tokens

SAMPLE_ROOT = Path(__file__).resolve().parents[1] / "synced"


@dataclass(frozen=True, slots=True)
class BenchDoc:
    """One benchmark document as the engine will see it."""

    path: str  # POSIX path relative to the synced root (the engine's document identity)
    title: str  # what the engine's title rule derives from the text
    text: str
    tokens: int  # simulator estimate of the text alone (the prompt adds ~100 more)


@dataclass(frozen=True, slots=True)
class _Source:
    stem: str
    suffix: str
    korean: bool
    heading: str  # first non-blank line
    paragraphs: tuple[str, ...]  # the rest, split at blank lines


def load_sources(root: Path = SAMPLE_ROOT) -> list[_Source]:
    sources = []
    # The sample's plain text documents (its PDFs, decks and workbooks are not text to cut up).
    texts = (p for p in root.rglob("*") if p.suffix in (".md", ".txt") and p.is_file())
    for file in sorted(p for p in texts if not p.name.startswith(".")):
        text = file.read_text(encoding="utf-8").strip()
        lines = text.splitlines()
        heading = next(line for line in lines if line.strip())
        rest = text[text.index(heading) + len(heading) :]
        paragraphs = tuple(p.strip() for p in rest.split("\n\n") if p.strip())
        korean = file.stem.endswith("-ko")
        sources.append(_Source(file.stem, file.suffix, korean, heading, paragraphs or (heading,)))
    if not sources:
        raise FileNotFoundError(f"no sample documents under {root}")
    return sources


def _write(root: Path, doc: BenchDoc) -> None:
    target = root / doc.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(doc.text, encoding="utf-8", newline="")


def build_documents(
    root: Path,
    count: int,
    *,
    seed: int = 20261130,
    collection: str = "bench",
    min_tokens: int = 100,
    max_tokens: int = 2000,
    long_share: float = 0.0,
    long_tokens: tuple[int, int] = (12_000, 40_000),
) -> list[BenchDoc]:
    """Write ``count`` documents under ``root/collection`` and return them in path order. A
    ``long_share`` of them are long (``long_tokens``): taken in parts by the engine."""
    rng = random.Random(seed)
    long_rng = random.Random(seed + 1)  # apart, so the other documents stay what they were
    sources = load_sources()
    by_language = {korean: [s for s in sources if s.korean == korean] for korean in (False, True)}
    docs = []
    for index in range(count):
        target = round(math.exp(rng.uniform(math.log(min_tokens), math.log(max_tokens))))
        if long_rng.random() < long_share:
            target = long_rng.randint(*long_tokens)
        primary = rng.choice(sources)
        start = rng.randrange(len(primary.paragraphs))
        parts = list(primary.paragraphs[start:])
        text = primary.heading + "\n\n" + "\n\n".join(parts)
        while estimate_tokens(text) < target:
            more = rng.choice(by_language[primary.korean])
            # A whole further document, its heading demoted to a section heading.
            section = "## " + more.heading.lstrip("#").strip()
            text += "\n\n" + "\n\n".join((section, *more.paragraphs))
        text = truncate_to_tokens(text, target) + "\n"
        path = f"{collection}/{index:04d}-{primary.stem}{primary.suffix}"
        doc = BenchDoc(path, title_of(text, path), text, estimate_tokens(text))
        _write(root, doc)
        docs.append(doc)
    return docs


def build_tiny_documents(
    root: Path, count: int, *, seed: int = 7, collection: str = "tiny"
) -> list[BenchDoc]:
    """``count`` one-line notes (20-60 tokens) for measuring per-request overhead."""
    rng = random.Random(seed)
    sources = load_sources()
    docs = []
    for index in range(count):
        source = rng.choice(sources)
        words = rng.choice(source.paragraphs).split()[:12]
        text = f"# Note {index}\n\n{' '.join(words)}\n"
        path = f"{collection}/{index:05d}.md"
        doc = BenchDoc(path, title_of(text, path), text, estimate_tokens(text))
        _write(root, doc)
        docs.append(doc)
    return docs
