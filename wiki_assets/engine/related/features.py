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

from wiki_assets.engine.related.text import script_of

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
