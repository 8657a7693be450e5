"""Writing documents into the index, a chunk at a time.

A chunk's new documents are counted into ``seen`` before any of them chooses its features (so the
first documents of an empty index are not indexed blind); the counts of a batch of chunks are held
in :class:`GramCounts`, read from ``df`` once per gram and written back once, before the batch
commits. The documents choose their features together, in numpy
(:func:`~.features.choose_chunk_features`). Their norms are computed before they are written: each
is the one it would have had indexed alone, after the chunk's documents before it (see
:func:`_norms`). Then the chunk's documents (each with its norm and its features, in one row) are
written with one statement; the chunk's postings go back to the caller, for the segment of the
batch (:mod:`~.segments`).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Mapping
from itertools import repeat

import numpy as np

from wiki_assets.engine.related import vectors
from wiki_assets.engine.related.features import ChunkFeatures, choose_chunk_features
from wiki_assets.engine.related.grams import grams
from wiki_assets.engine.related.query import idf
from wiki_assets.engine.related.segments import FEATURE_WEIGHTS, WEIGHTS, Postings, forgotten
from wiki_assets.engine.related.storage import add_meta, chunks, get_meta
from wiki_assets.engine.related.summary import summary_line
from wiki_assets.engine.text.normalize import normalize

Item = tuple[str, str, str, str]  # (path, title, text, content hash)


class GramCounts:
    """The ``df`` table's ``seen`` and ``n`` of the grams a batch of chunks touched, as they
    stand after the chunks indexed so far: each gram is read from ``df`` the first time a chunk
    has it, and every count is written back by :meth:`save` (one statement), which the batch's
    writer calls before it commits. A chunk's grams are a few thousand, mostly the batch's
    earlier chunks' too: one read and one write per gram and batch instead of an upsert per gram
    and chunk."""

    def __init__(self) -> None:
        # Counters: ``update`` with an iterable counts in C, a document's grams at a time.
        self.seen: Counter[str] = Counter()  # grams in df (or counted in this batch)
        self.posted: Counter[str] = Counter()  # their n
        self._read: set[str] = set()  # grams read from df (found or not)

    def read(self, db: sqlite3.Connection, grams: set[str]) -> None:
        """Read from ``df`` the counts of ``grams`` not read yet in this batch."""
        unread = grams - self._read
        self._read |= unread
        for chunk in chunks(list(unread)):
            marks = ",".join("?" * len(chunk))
            for gram, seen, n in db.execute(
                f"SELECT gram, seen, n FROM df WHERE gram IN ({marks})", chunk
            ):
                self.seen[gram], self.posted[gram] = seen, n

    def save(self, db: sqlite3.Connection) -> None:
        """Write every count back to ``df`` (inside the batch's write transaction), and forget
        them: ``df`` is the truth again."""
        seen, posted = self.seen, self.posted
        if seen or posted:
            both = {gram: (count, posted.get(gram, 0)) for gram, count in seen.items()}
            # A changed document may post a gram no document was counted with in ``seen``.
            both.update((gram, (0, n)) for gram, n in posted.items() if gram not in seen)
            db.execute(
                "INSERT INTO df (gram, seen, n) SELECT key, value ->> 0, value ->> 1"
                " FROM json_each(?) WHERE true"
                " ON CONFLICT(gram) DO UPDATE SET seen = excluded.seen, n = excluded.n",
                (_as_json(both),),
            )
        self.seen, self.posted, self._read = Counter(), Counter(), set()


def index_chunk(
    db: sqlite3.Connection,
    items: list[Item],
    counts: GramCounts,
    features_per_doc: int,
    max_chars: int,
) -> tuple[int, Postings]:
    """Index new or changed documents (a path given twice: the last one wins); returns how many,
    and their postings for the caller's segment. ``counts``: the batch's, saved by the caller
    before it commits."""
    prepared: dict[str, tuple[str, str, str, Counter[str]]] = {}
    for path, title, text, content_hash in items:
        text = text[:max_chars]
        document = grams(normalize(f"{title}\n{text}"))
        prepared[path] = (title, summary_line(text, title), content_hash, document)
    old_ids = _ids(db, list(prepared))
    add_meta(db, "generation", 1)  # stored answers expire
    if old_ids:
        counts.save(db)  # forgetting updates df itself: the batch's counts are read again
    for old in old_ids.values():  # first: the df counts read below are then those without them
        forget(db, old)
    documents = [document for _, _, _, document in prepared.values()]
    counts.read(db, set().union(*documents))
    for path, (_, _, _, document) in prepared.items():
        if path not in old_ids:  # a changed document was counted in seen when first indexed
            counts.seen.update(document.keys())
    add_meta(db, "seen_docs", sum(path not in old_ids for path in prepared))
    seen_docs = get_meta(db, "seen_docs")
    chosen = choose_chunk_features(documents, counts.seen, seen_docs, features_per_doc)
    n_docs = get_meta(db, "docs")
    names = sorted(set(chosen.grams))  # a gram's place ranks it as str (and SQLite) does
    place = {name: at for at, name in enumerate(names)}
    gram = np.fromiter(map(place.__getitem__, chosen.grams), np.int64, len(chosen.grams))
    norms = _norms(chosen, names, gram, counts.posted, n_docs)  # before the chunk's own
    (last,) = db.execute(
        "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'docs'"
    ).fetchone()
    ids = range(last + 1, last + 1 + len(prepared))  # what AUTOINCREMENT gives them, in order
    features = _features_by_document(chosen, names, gram, len(prepared))
    db.executemany(
        "INSERT INTO docs (id, path, title, line, content_hash, norm, grams, weights)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (doc, path, title, line, content_hash, norm, *feature_row)
            for doc, (path, (title, line, content_hash, _)), norm, feature_row in zip(
                ids, prepared.items(), norms, features, strict=True
            )
        ],
    )
    add_meta(db, "docs", len(prepared))
    counts.posted.update(chosen.grams)
    # A list keeps ``weight / max(norm, 1e-9)`` as float32, as the lists always have.
    scaled = chosen.weights / np.maximum(np.array(norms, np.float64), 1e-9)[chosen.doc]
    postings = Postings(chosen.doc + last + 1, chosen.grams, scaled.astype(WEIGHTS))
    return len(prepared), postings


def _features_by_document(
    chosen: ChunkFeatures, names: list[str], gram: np.ndarray, count: int
) -> list[tuple[str, bytes]]:
    """Each document's ``docs.grams`` and ``docs.weights``: its features sorted by gram (the
    order a query adds them up in), newline-joined, and their tf weights in that order. ``gram``:
    each posting's gram as its place in the sorted ``names``."""
    order = np.lexsort((gram, chosen.doc))
    doc, gram = chosen.doc[order], gram[order]
    weights = chosen.weights[order].astype(FEATURE_WEIGHTS).tobytes()
    starts = np.searchsorted(doc, np.arange(count + 1))
    width = FEATURE_WEIGHTS.itemsize
    return [
        ("\n".join([names[g] for g in gram[a:b].tolist()]), weights[a * width : b * width])
        for a, b in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True)
    ]


def _norms(
    chosen: ChunkFeatures, names: list[str], gram: np.ndarray, df: Mapping[str, int], n_docs: int
) -> list[float]:
    """The norms of the chunk's documents, each with the idf of the moment it joined the index,
    as if they had been added one by one: ``df`` (the counts before the chunk) plus the
    documents of the chunk up to and including it that post the gram, and the ``n_docs``
    documents before the chunk plus those (what one-at-a-time indexing gave, so a chunk ranks as
    before). ``gram``: each posting's gram as its place in the sorted ``names``."""
    # The postings of a gram, in document order: the k-th of them sees k earlier ones.
    order = np.argsort(gram, kind="stable")
    starts = np.flatnonzero(np.diff(gram[order], prepend=-1))
    earlier = np.empty(len(gram), np.int64)
    earlier[order] = np.arange(len(gram)) - np.repeat(starts, np.diff(np.append(starts, len(gram))))
    before = np.array([df.get(name, 0) for name in names], np.int64)
    # The idf itself (:func:`~.query.idf`, libm's log) and the squares with libm's pow, as
    # ``x ** 2`` takes them: numpy's log and square differ from them in the last bit now and
    # then, and these norms must be the ones earlier chunks were given (and the reference's).
    # Both are taken once per distinct value (a chunk's postings share most of them).
    seen_then = n_docs + chosen.doc + 1
    posting_then = before[gram] + earlier + 1
    span = int(posting_then.max(initial=0)) + 1
    pairs, pair_of = np.unique(seen_then * span + posting_then, return_inverse=True)
    pair_seen, pair_posting = np.divmod(pairs, span)
    pair_idf = np.fromiter(
        map(idf, pair_seen.tolist(), pair_posting.tolist()), np.float64, len(pairs)
    )
    terms, term_of = np.unique(chosen.weights * pair_idf[pair_of], return_inverse=True)
    squares = np.fromiter(map(math.pow, terms.tolist(), repeat(2.0)), np.float64, len(terms))
    squares = squares[term_of]
    count = int(chosen.doc.max(initial=-1)) + 1
    norm_sq = np.bincount(chosen.doc, weights=squares, minlength=count)  # in order, as sum()
    norms: list[float] = np.sqrt(norm_sq).tolist()
    return norms


def forget(db: sqlite3.Connection, doc: int) -> None:
    """Remove a document, its ``df`` counts and its stored answer (inside a write transaction);
    its id stays in the lists until they are merged."""
    add_meta(db, "generation", 1)  # stored answers expire
    db.execute("DELETE FROM answers WHERE doc = ?", (doc,))
    row = db.execute("SELECT grams FROM docs WHERE id = ?", (doc,)).fetchone()
    if row is None:
        return
    grams = row[0].split("\n") if row[0] else []
    db.execute(
        "UPDATE df SET n = n - 1 WHERE gram IN (SELECT value FROM json_each(?))",
        (json.dumps(grams, ensure_ascii=False),),
    )
    db.execute("DELETE FROM docs WHERE id = ?", (doc,))
    vectors.forget(db, doc)
    add_meta(db, "docs", -1)
    forgotten(db)


def _ids(db: sqlite3.Connection, paths: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for chunk in chunks(paths):
        marks = ",".join("?" * len(chunk))
        found.update(db.execute(f"SELECT path, id FROM docs WHERE path IN ({marks})", chunk))
    return found


def _as_json(counts: Mapping[str, object]) -> str:
    """``counts`` as one JSON object, which SQLite's ``json_each`` reads back as rows: one
    parameter for thousands of grams (binding two per gram costs more than the upsert)."""
    return json.dumps(counts, ensure_ascii=False, check_circular=False)
