"""Text as the related-document index sees it: cut into character 2- and 3-grams.

Similarity has to work for Korean as well as English without a language-specific tokenizer, so
documents are compared by character 2- and 3-grams of their normalized text
(:func:`~wiki_assets.engine.text.normalize.normalize`). Grams are taken inside each
space-separated token padded with one space (``" kr"``, ``"kr "``), so no gram joins two words.
"""

from __future__ import annotations

import operator
from collections import Counter
from itertools import compress, repeat

MAX_CHARS = 20_000
"""Characters of a document that are indexed; the rest is ignored."""
GRAM_SIZES = (2, 3)
"""The gram sizes :func:`grams` takes."""


def grams(text: str) -> Counter[str]:
    """Term frequencies of the character 2- and 3-grams of ``text`` (already normalized), in the
    order they first appear, 2-grams first.

    Grams are taken inside each token padded with one space on each side (``" kr"``, ``"kr "``),
    so a gram never joins the end of one word to the start of the next.
    """
    joined = " ".join(text.split())
    if not joined:
        return Counter()
    # One padded text, tokens one space apart: every 2-gram of it is a 2-gram of a padded token,
    # and so is every 3-gram but those with the space in the middle. Built with map over the
    # characters (no Python loop per gram), in the order a token-by-token pass gives them.
    padded = f" {joined} "
    pairs = list(map(operator.add, padded, padded[1:]))
    counts = Counter(pairs)
    triples = map(operator.add, pairs, padded[2:])
    counts.update(compress(triples, map(operator.ne, padded[1:], repeat(" "))))
    return counts
