"""Which grams a document posts (its features), chosen when it is indexed.

Grams are ranked by ``tf_weight * ln(1 + S / seen)``, S being the number of documents counted in
``seen``, with two adjustments that matter for linking: a gram no other document contains
(``seen == 1``) can match nothing, so it only fills slots nothing else wants; and a quarter of the
slots go to the best grams in scripts other than the document's main one (Hangul terms in an
English document, Latin ones in a Korean document). Those are usually names of other documents,
products or systems, and are what lets an English and a Korean document on the same subject meet,
since their main-script grams never overlap. While the index has seen fewer than
:data:`HEURISTIC_BELOW` documents a cheap stop-gram heuristic stands in for the idf.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from wiki_assets.engine.text.scripts import script_of

TF_K1 = 1.2
"""BM25's term-frequency saturation."""
MIN_SEEN = 2
"""A gram contained in fewer documents than this (only this one) is a feature of last resort."""
OTHER_SCRIPT_SHARE = 0.25
"""Share of a document's feature slots kept for grams outside its main script."""
HEURISTIC_BELOW = 8
"""With fewer documents seen than this, a stop-gram heuristic replaces the idf in feature choice."""


def tf_weight(tf: int) -> float:
    """BM25's saturating term frequency (no length normalization: vectors are cosine-normalized)."""
    return tf * (TF_K1 + 1.0) / (tf + TF_K1)


def stop_gram_factor(gram: str, tf: int, total: int) -> float:
    """Cheap stand-in for the idf while the index knows too few documents to estimate one.

    Prefers 3-grams to 2-grams, grams inside a word to grams at its edge, letters to digits, and
    damps the grams that make up an unusually large share of the document (function-word grams
    such as ``"the"`` or ``"니다"`` in any language).
    """
    factor = 1.0 if len(gram) == 3 else 0.6
    if gram[0] == " " or gram[-1] == " ":
        factor *= 0.8
    if not any(ch.isalpha() for ch in gram):
        factor *= 0.3
    if total and tf / total > 0.01:
        factor *= 0.5
    return factor


def choose_features(
    counts: Counter[str], seen: dict[str, int], seen_docs: int, size: int
) -> list[tuple[str, float]]:
    """The document's ``size`` most salient grams with their tf weights."""
    weights = {tf: tf_weight(tf) for tf in set(counts.values())}
    if seen_docs < HEURISTIC_BELOW:
        total = sum(counts.values())
        ranked = [
            (weights[tf] * stop_gram_factor(gram, tf, total), gram) for gram, tf in counts.items()
        ]
    else:
        in_docs = [seen.get(gram, 1) for gram in counts]
        idf = {
            n: math.log(1.0 + seen_docs / max(n, 1)) * (1.0 if n >= MIN_SEEN else 1e-3)
            for n in set(in_docs)
        }
        ranked = [
            (weights[tf] * idf[n], gram)
            for (gram, tf), n in zip(counts.items(), in_docs, strict=True)
        ]
    quota = int(size * OTHER_SCRIPT_SHARE)
    scripts = [script_of(gram) for gram in counts]
    chosen: list[tuple[float, str]] = []
    if quota and len(set(scripts) - {""}) > 1:  # most documents are in one script
        totals: Counter[str] = Counter()
        for script, tf in zip(scripts, counts.values(), strict=True):
            totals[script] += tf
        totals.pop("", None)
        main = totals.most_common(1)[0][0]
        other = [r for r, script in zip(ranked, scripts, strict=True) if script not in ("", main)]
        chosen = heapq.nlargest(quota, other)
        taken = {gram for _, gram in chosen}
        ranked = [r for r in ranked if r[1] not in taken]
    chosen += heapq.nlargest(size - len(chosen), ranked)
    return [(gram, weights[counts[gram]]) for _, gram in chosen]


@dataclass(frozen=True, slots=True)
class ChunkFeatures:
    """The features of a chunk's documents, posting by posting: each document's in the order
    :func:`choose_features` returns them, documents in chunk order."""

    doc: np.ndarray  # int64: the document's place in the chunk
    grams: list[str]
    weights: np.ndarray  # float64: tf weights


def choose_chunk_features(
    documents: Sequence[Counter[str]], seen: dict[str, int], seen_docs: int, size: int
) -> ChunkFeatures:
    """:func:`choose_features` of every one of ``documents``, exactly, in numpy over all their
    grams at once: each distinct gram's idf and script is worked out once for the chunk, not once
    per document containing it."""
    if seen_docs < HEURISTIC_BELOW:  # the first documents of an index: rare, and per gram
        chosen = [choose_features(counts, seen, seen_docs, size) for counts in documents]
        return ChunkFeatures(
            np.repeat(np.arange(len(chosen)), [len(c) for c in chosen]),
            [gram for c in chosen for gram, _ in c],
            np.array([weight for c in chosen for _, weight in c], np.float64),
        )
    vocabulary = sorted(set().union(*documents))  # sorted: a gram's place ranks it as str does
    place = {gram: at for at, gram in enumerate(vocabulary)}
    lengths = np.array([len(counts) for counts in documents], np.int64)
    doc = np.repeat(np.arange(len(documents)), lengths)
    gram = np.fromiter(map(place.__getitem__, chain.from_iterable(documents)), np.int64, len(doc))
    tf = np.fromiter(chain.from_iterable(c.values() for c in documents), np.float64, len(doc))
    weight = tf * (TF_K1 + 1.0) / (tf + TF_K1)  # tf_weight, the same operations in order
    in_docs = [seen.get(g, 1) for g in vocabulary]
    idf = {
        n: math.log(1.0 + seen_docs / max(n, 1)) * (1.0 if n >= MIN_SEEN else 1e-3)
        for n in set(in_docs)
    }
    score = weight * np.fromiter(map(idf.__getitem__, in_docs), np.float64, len(vocabulary))[gram]
    quota = int(size * OTHER_SCRIPT_SHARE)
    other = _other_script(doc, gram, tf, vocabulary) if quota else None
    # Best first within each document; equal scores: the greater gram first, as tuples compare.
    order = np.lexsort((-gram, -score, doc))
    doc, gram, weight = doc[order], gram[order], weight[order]
    taken = np.zeros(len(doc), bool)
    if other is not None:
        other = other[order]
        taken = other & (_rank_within(doc, other) < quota)
    left = size - np.bincount(doc[taken], minlength=len(documents))
    rest = ~taken & (_rank_within(doc, ~taken) < left[doc])
    # Each document's other-script picks first, then the rest, each best first.
    keep = np.flatnonzero(taken | rest)
    keep = keep[np.lexsort((keep, rest[keep], doc[keep]))]
    return ChunkFeatures(doc[keep], [vocabulary[g] for g in gram[keep].tolist()], weight[keep])


def _rank_within(doc: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """For each row, how many rows of its document before it are in ``mask`` (rows grouped by
    document)."""
    before = np.cumsum(mask) - mask
    starts = np.flatnonzero(np.diff(doc, prepend=-1))
    rank: np.ndarray = before - np.repeat(before[starts], np.diff(np.append(starts, len(doc))))
    return rank


def _other_script(
    doc: np.ndarray, gram: np.ndarray, tf: np.ndarray, vocabulary: list[str]
) -> np.ndarray | None:
    """Which rows (grouped by document, each document's grams in its own order) are grams of a
    script other than their document's main one, in documents with grams of more than one script;
    ``None`` if no document has two. The main script has the most gram occurrences, ties going to
    the one met first (``Counter.most_common``)."""
    names = [script_of(g) for g in vocabulary]
    code = {name: at for at, name in enumerate(sorted(set(names)))}
    scripts = len(code)
    script = np.array([code[name] for name in names], np.int64)[gram]
    lettered = np.flatnonzero(script != code.get("", -1))
    pairs, first, inverse = np.unique(
        doc[lettered] * scripts + script[lettered], return_index=True, return_inverse=True
    )
    pair_doc = pairs // scripts
    multi = np.bincount(pair_doc, minlength=int(doc.max(initial=0)) + 1) > 1
    if not multi.any():
        return None
    totals = np.bincount(inverse, weights=tf[lettered])
    best = np.lexsort((first, -totals, pair_doc))
    heads = best[np.flatnonzero(np.diff(pair_doc[best], prepend=-1))]
    main = np.full(len(multi), -1, np.int64)
    main[pair_doc[heads]] = pairs[heads] % scripts
    other = np.zeros(len(doc), bool)
    other[lettered] = multi[doc[lettered]] & (script[lettered] != main[doc[lettered]])
    return other
