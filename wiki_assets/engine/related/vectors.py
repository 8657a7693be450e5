"""Candidates by meaning: one embedding per document, stored beside the n-gram index.

Character n-grams match within a script and almost never across one, so a Korean document and
its English counterpart share no grams. A multilingual embedding model places them close, but
not close enough on its own: each language's documents share a direction of their own, and a
document's nearest neighbours are then mostly documents in its own language. Subtracting each
script's mean vector before comparing (centering per language) removes that direction; measured
on the project's labelled set (``python -m benchmarks.related_languages``), it is what brings an
English/Korean pair from about half of the directions to nearly all of them.

* A document's vector embeds its first :data:`EMBED_CHARS` characters (its title and opening,
  what says what it is about), as the endpoint returns it (L2-normalised), stored as float16.
* Its *script* is the Unicode script most of its letters are written in (``HANGUL``,
  ``LATIN``...). Per script the index keeps the sum and count of the vectors, updated as vectors
  come and go, so the means cost nothing to read. A script with fewer than
  :data:`GROUP_MIN` documents is centred on the mean of all documents instead.
* A changed document gets a new id in the index (:mod:`.storage`), so a stored vector always
  belongs to the text it was embedded from; a removed document's vector goes with it.
* One embedding model per index: another model's name, or another dimension, means every
  vector is embedded again (:func:`use_model`).
* Nearest documents are found by reading the vectors in blocks of :data:`BLOCK`, centring and
  scoring a block against every query at once, and keeping the best ``k`` so far: memory holds
  one block, never the corpus.

The tables are described in :mod:`.storage`.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import numpy as np

from wiki_assets.engine.errors import ConfigurationError
from wiki_assets.engine.related.storage import VECTOR_TABLES, add_meta, chunks
from wiki_assets.engine.text.scripts import letter_script

EMBED_CHARS = 200
"""Characters of a document that are embedded: its title and opening, what decides a link. The
model's cost grows with its input: on the labelled set (``python -m benchmarks.related_languages``)
the first 200 characters put the English/Korean partners in the top 5 as often as longer
openings, for much less of the model's time (``docs/benchmarks.md`` has both)."""
GROUP_MIN = 5
"""Documents a script needs before its own mean centres it (fewer: the mean of all)."""
BLOCK = 4096
"""Vectors read and scored together: a few MB of float32 per block."""


Found = list[tuple[int, float]]  # (document id, centred cosine), best first


class DimensionMismatch(ConfigurationError):
    """An embedding model answered vectors of another length than the index stores for it."""


@dataclass(frozen=True, slots=True)
class Model:
    name: str
    dim: int


# A Hangul, Han or kana character writes a syllable or a word, where an alphabet takes about
# three letters: a Korean text that names a few things in English is still a Korean text.
SYLLABIC = {"HANGUL": 3, "CJK": 3, "HIRAGANA": 3, "KATAKANA": 3}


def script(text: str) -> str:
    """The Unicode script most of ``text`` is written in (its letters counted, a syllabic
    script's characters thrice), or ``""`` without letters."""
    counts: Counter[str] = Counter()
    for ch in text[:EMBED_CHARS]:
        if ch.isalpha():
            name = letter_script(ch)
            counts[name] += SYLLABIC.get(name, 1)
    return counts.most_common(1)[0][0] if counts else ""


def stored_model(db: sqlite3.Connection) -> Model | None:
    row = db.execute("SELECT model, dim FROM vector_model").fetchone()
    return Model(row[0], int(row[1])) if row else None


def use_model(db: sqlite3.Connection, name: str) -> str | None:
    """Make ``name`` the index's embedding model (inside a write transaction). Returns why every
    vector must be embedded again, or None when ``name`` already is the model (or none was)."""
    model = stored_model(db)
    if model is not None and model.name == name:
        return None
    clear(db)
    db.execute("INSERT INTO vector_model (model, dim) VALUES (?, 0)", (name,))
    return None if model is None else f"embedding model changed from {model.name} to {name}"


def clear(db: sqlite3.Connection) -> None:
    """Forget every vector and the model (inside a write transaction)."""
    for table in VECTOR_TABLES:
        db.execute(f"DELETE FROM {table}")
    add_meta(db, "generation", 1)  # stored answers expire


def to_embed(db_path: Path, name: str) -> tuple[int, str | None]:
    """What a run with embedding model ``name`` will embed of the index at ``db_path``, read
    without writing: ``(documents, why every one is, if every one is)``. Documents the run
    (re)indexes first are embedded too and not counted here."""
    if not db_path.is_file():
        return 0, None
    db = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        if not {"docs", *VECTOR_TABLES} <= tables:
            return 0, None
        model = stored_model(db)
        if model is not None and model.name != name:
            everyone = db.execute("SELECT count(*) FROM docs").fetchone()[0]
            return int(everyone), f"embedding model changed from {model.name} to {name}"
        return count_missing(db), None
    finally:
        db.close()


def missing(db: sqlite3.Connection, after: int, limit: int) -> list[tuple[int, str]]:
    """Up to ``limit`` indexed documents without a vector whose id is above ``after``, as
    ``(id, path)``, by id."""
    return db.execute(
        "SELECT id, path FROM docs WHERE id > ? AND id NOT IN (SELECT doc FROM vectors)"
        " ORDER BY id LIMIT ?",
        (after, limit),
    ).fetchall()


def count_missing(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT count(*) FROM docs WHERE id NOT IN (SELECT doc FROM vectors)")
    return int(row.fetchone()[0])


def store(
    db: sqlite3.Connection,
    name: str,
    endpoint: str,
    docs: Sequence[tuple[int, str]],
    vectors: np.ndarray,
) -> None:
    """Store the vectors of ``docs`` (``(id, script)``) embedded by model ``name`` through
    ``endpoint`` (inside a write transaction); documents removed meanwhile are skipped.

    Raises :class:`DimensionMismatch`, naming the endpoint, when the vectors' length is not the
    one the index holds for that model."""
    model = stored_model(db)
    dim = int(vectors.shape[1])
    if model is not None and model.dim and model.dim != dim:
        raise DimensionMismatch(
            f"embeddings endpoint {endpoint}: model {name} answered vectors of {dim} dimensions, "
            f"but the related index holds vectors of {model.dim} for it; if the endpoint now "
            "serves another model, give it another model name"
        )
    db.execute("UPDATE vector_model SET dim = ?", (dim,))
    live = _live(db, [doc for doc, _ in docs])
    sums: dict[str, tuple[int, np.ndarray]] = {}
    rows = []
    for (doc, group), vector in zip(docs, vectors, strict=True):
        if doc not in live:
            continue
        rows.append((doc, group, vector.astype(np.float16).tobytes()))
        n, total = sums.get(group, (0, np.zeros(dim)))
        sums[group] = (n + 1, total + vector)
    db.executemany("INSERT OR REPLACE INTO vectors (doc, script, vec) VALUES (?, ?, ?)", rows)
    for group, (n, total) in sums.items():
        _add_to_group(db, group, n, total)
    if rows:
        add_meta(db, "generation", 1)  # stored answers expire


def forget(db: sqlite3.Connection, doc: int) -> None:
    """Remove a document's vector (inside a write transaction)."""
    row = db.execute("SELECT script, vec FROM vectors WHERE doc = ?", (doc,)).fetchone()
    if row is not None:
        db.execute("DELETE FROM vectors WHERE doc = ?", (doc,))
        vector = np.frombuffer(row[1], dtype=np.float16).astype(np.float64)
        _add_to_group(db, row[0], -1, -vector)


def _add_to_group(db: sqlite3.Connection, group: str, n: int, total: np.ndarray) -> None:
    row = db.execute("SELECT n, total FROM vector_groups WHERE script = ?", (group,)).fetchone()
    if row is not None:
        n += row[0]
        total = total + np.frombuffer(row[1], dtype=np.float64)
    if n <= 0:
        db.execute("DELETE FROM vector_groups WHERE script = ?", (group,))
        return
    db.execute(
        "INSERT OR REPLACE INTO vector_groups (script, n, total) VALUES (?, ?, ?)",
        (group, n, np.asarray(total, dtype=np.float64).tobytes()),
    )


def _live(db: sqlite3.Connection, ids: Sequence[int]) -> set[int]:
    live: set[int] = set()
    for chunk in chunks(list(ids)):
        marks = ",".join("?" * len(chunk))
        rows = db.execute(f"SELECT id FROM docs WHERE id IN ({marks})", chunk)
        live.update(row[0] for row in rows)
    return live


class _Centres:
    """Each script's mean vector (or the mean of all, for a script with few documents), as rows
    of one matrix, so that a block of stored vectors is scored against centred queries without
    centring the block itself: ``(q - m) . (c - m_c)`` expands into ``q . c`` (the one large
    product) less ``q . m_c``, and ``|c - m_c|`` into ``c . c - 2 c . m_c + m_c . m_c``."""

    def __init__(self, db: sqlite3.Connection, dim: int) -> None:
        groups = [
            (group, n, np.frombuffer(total, dtype=np.float64))
            for group, n, total in db.execute("SELECT script, n, total FROM vector_groups")
        ]
        everyone = sum(n for _, n, _ in groups)
        rows = [sum((total for _, _, total in groups), np.zeros(dim)) / max(everyone, 1)]
        self.code: dict[str, int] = {}  # script -> its row; the others take row 0, the mean
        for group, n, total in groups:
            if n >= GROUP_MIN:
                self.code[group] = len(rows)
                rows.append(total / n)
        self.means = np.stack(rows).astype(np.float32)
        self.squares = np.einsum("ij,ij->i", self.means, self.means)

    def codes(self, groups: Sequence[str]) -> np.ndarray:
        return np.fromiter(map(self.code.get, groups, repeat(0)), dtype=np.intp, count=len(groups))

    def queries(self, vectors: np.ndarray, groups: Sequence[str]) -> np.ndarray:
        """``vectors`` (float32, one row per document of ``groups``) centred and normalised."""
        out: np.ndarray = vectors - self.means[self.codes(groups)]
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6)
        return out

    def scores(self, queries: np.ndarray, block: np.ndarray, groups: Sequence[str]) -> np.ndarray:
        """The cosines of centred ``queries`` (from :meth:`queries`) and the centred rows of
        ``block`` (float32, one row per document of ``groups``): one row per query."""
        codes = self.codes(groups)
        by_mean = block @ self.means.T  # each row against each centre
        squares = np.einsum("ij,ij->i", block, block)
        centred = squares - 2 * by_mean[np.arange(len(codes)), codes] + self.squares[codes]
        scores: np.ndarray = queries @ block.T
        scores -= (queries @ self.means.T)[:, codes]
        scores /= np.sqrt(np.maximum(centred, 1e-12))
        return scores


def nearest_many(db: sqlite3.Connection, docs: Sequence[int], k: int) -> dict[int, Found]:
    """The ``k`` documents whose centred vectors are closest to each of ``docs`` (those with a
    vector; the others are left out), best first, in one pass over the stored vectors."""
    model = stored_model(db)
    if model is None or not model.dim or k < 1:
        return {}
    queries = _read(db, docs)
    if not queries:
        return {}
    centres = _Centres(db, model.dim)
    ids = np.array([doc for doc, _, _ in queries], dtype=np.int64)
    row_of = {doc: row for row, doc in enumerate(ids.tolist())}
    q = centres.queries(np.stack([vec for _, _, vec in queries]), [g for _, g, _ in queries])
    best_scores = np.full((len(ids), k), -np.inf, dtype=np.float32)
    best_ids = np.full((len(ids), k), -1, dtype=np.int64)
    for block_ids, groups, block in _blocks(db):
        scores = centres.scores(q, block, groups)
        for column in np.flatnonzero(np.isin(block_ids, ids)).tolist():
            scores[row_of[int(block_ids[column])], column] = -np.inf  # never the document itself
        scores = np.concatenate([best_scores, scores], axis=1)
        others = np.broadcast_to(block_ids, (len(ids), len(block_ids)))
        candidates = np.concatenate([best_ids, others], axis=1)
        take = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        best_scores = np.take_along_axis(scores, take, axis=1)
        best_ids = np.take_along_axis(candidates, take, axis=1)
    found: dict[int, Found] = {}
    for row, doc in enumerate(ids.tolist()):
        order = np.argsort(-best_scores[row], kind="stable")
        found[doc] = [
            (int(best_ids[row, at]), float(best_scores[row, at]))
            for at in order
            if best_ids[row, at] >= 0 and np.isfinite(best_scores[row, at])
        ]
    return found


def _read(db: sqlite3.Connection, docs: Sequence[int]) -> list[tuple[int, str, np.ndarray]]:
    rows: list[tuple[int, str, np.ndarray]] = []
    for chunk in chunks(list(docs)):
        marks = ",".join("?" * len(chunk))
        rows.extend(
            (doc, group, np.frombuffer(vec, dtype=np.float16).astype(np.float32))
            for doc, group, vec in db.execute(
                f"SELECT doc, script, vec FROM vectors WHERE doc IN ({marks})", chunk
            )
        )
    return rows


def _blocks(db: sqlite3.Connection) -> Iterator[tuple[np.ndarray, list[str], np.ndarray]]:
    """Every stored vector, :data:`BLOCK` at a time: ``(ids, scripts, float32 rows)``."""
    cursor = db.execute("SELECT doc, script, vec FROM vectors")
    while rows := cursor.fetchmany(BLOCK):
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        block = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float16)
        yield ids, [row[1] for row in rows], block.reshape(len(rows), -1).astype(np.float32)
