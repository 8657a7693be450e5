"""How :mod:`wiki_assets.engine.related.indexing` writes a chunk: each document of a chunk chooses
the features it would choose alone (given the chunk's corpus statistics), and its norm is the one
one-at-a-time indexing gives, with the ``df`` counts and document count of the moment it joined.
The corpus is the project's sample (``synced/``, English and Korean, several scripts in one
document) plus generated notes."""

from __future__ import annotations

import hashlib
import math
import random
import sqlite3
from array import array
from collections import Counter
from pathlib import Path

import pytest

from wiki_assets.engine.related import RelatedIndex, grams
from wiki_assets.engine.related.features import (
    HEURISTIC_BELOW,
    choose_chunk_features,
    choose_features,
)
from wiki_assets.engine.text.normalize import normalize
from wiki_assets.engine.text.scripts import script_of

SAMPLE = Path(__file__).resolve().parents[1] / "synced"
WORDS = "alpha beta gamma delta 휴가 신청 서울 오피스 metad blobd 2026 kr sel 장애 등급".split()


def _texts() -> list[str]:
    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLE.rglob("*.md"))]
    rng = random.Random(7)
    texts += [" ".join(rng.choices(WORDS, k=rng.randint(1, 30))) for _ in range(200)]
    texts += ["", "1234 5678", "alpha", "alpha"]  # no grams, digits only, duplicates
    return texts


@pytest.mark.parametrize("size", [1, 3, 8, 64])
@pytest.mark.parametrize("seen_docs", [HEURISTIC_BELOW - 1, 40, 10_000])
def test_a_chunk_chooses_each_documents_own_features(size: int, seen_docs: int) -> None:
    documents = [grams(normalize(text)) for text in _texts()]
    seen = Counter(gram for counts in documents for gram in counts)
    seen.update({gram: 3 for gram in list(seen)[::5]})  # a spread of idfs, and many ties
    together = choose_chunk_features(documents, seen, seen_docs, size)
    got: list[list[tuple[str, float]]] = [[] for _ in documents]
    for doc, gram, weight in zip(
        together.doc.tolist(), together.grams, together.weights.tolist(), strict=True
    ):
        got[doc].append((gram, weight))
    expected = [choose_features(counts, seen, seen_docs, size) for counts in documents]
    if size >= 4:  # the other-script quota takes part
        assert any(len({script_of(g) for g, _ in e} - {""}) > 1 for e in expected)
    assert got == expected


def test_chunk_norms_are_the_one_at_a_time_norms(tmp_path: Path) -> None:
    texts = _texts()
    items = [
        (f"doc{i}.md", f"Doc {i}", text, hashlib.sha256(text.encode()).hexdigest())
        for i, text in enumerate(texts)
    ]
    with RelatedIndex(tmp_path / "related.sqlite") as index:
        index.update_many(items[:150])
        index.update_many(items[150:])
    db = sqlite3.connect(tmp_path / "related.sqlite")
    df: Counter[str] = Counter()
    n_docs = 0
    checked = 0
    for norm, features, weights in db.execute(
        "SELECT norm, grams, weights FROM docs ORDER BY id"
    ).fetchall():
        n_docs += 1
        postings = list(
            zip(features.split("\n") if features else [], array("d", weights), strict=True)
        )
        df.update(gram for gram, _ in postings)
        expected = math.sqrt(
            sum((weight * math.log(1.0 + n_docs / df[gram])) ** 2 for gram, weight in postings)
        )
        # The sum's order is the features' order, which the table does not keep: equal up to it.
        assert norm == pytest.approx(expected, rel=1e-12, abs=0.0)
        checked += 1
    assert checked == len(items)


def _grams_token_by_token(text: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for size in (2, 3):
        for token in text.split():
            padded = f" {token} "
            counts.update(padded[i : i + size] for i in range(len(padded) - size + 1))
    return counts


@pytest.mark.parametrize("extra", ["", " ", "a", "a b", "ab  c\td", " 휴가 ", "x" * 40])
def test_grams_are_those_of_each_padded_token_in_order(extra: str) -> None:
    for text in [*_texts(), extra]:
        text = normalize(text) if text is not extra else text
        expected = _grams_token_by_token(text)
        got = grams(text)
        assert got == expected
        assert list(got) == list(expected)  # first appearance order: ties of main script use it


def test_a_batch_counts_each_gram_once_per_document(tmp_path: Path) -> None:
    """``seen`` counts the documents that ever contained a gram (a changed document once, as it
    was first indexed) and ``n`` the live documents posting it, across chunks and commits of one
    update, and with a document changed in the middle of a batch."""
    texts = _texts()
    items = [(f"doc{i}.md", f"Doc {i}", text, f"h{i}") for i, text in enumerate(texts)]
    changed = ("doc3.md", "Doc 3", "alpha beta 휴가 신청 changed", "h3-changed")
    with RelatedIndex(tmp_path / "related.sqlite") as index:
        # The change comes in the second chunk of the first batch (of two chunks).
        index.update_many([*items[:100], changed, *items[100:]], batch=128)
    db = sqlite3.connect(tmp_path / "related.sqlite")
    expected_seen: Counter[str] = Counter()
    for _, title, text, _ in items:
        expected_seen.update(grams(normalize(f"{title}\n{text}")).keys())
    expected_n: Counter[str] = Counter()
    for (features,) in db.execute("SELECT grams FROM docs"):
        expected_n.update(features.split("\n") if features else [])
    rows = db.execute("SELECT gram, seen, n FROM df").fetchall()
    assert {gram: seen for gram, seen, _ in rows if seen} == dict(expected_seen)
    assert {gram: n for gram, _, n in rows if n} == dict(expected_n)
    hashes = db.execute("SELECT content_hash FROM docs WHERE path = 'doc3.md'").fetchall()
    assert hashes == [("h3-changed",)]
