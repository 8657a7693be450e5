"""Writing documents into the index, a chunk at a time.

A chunk's new documents are counted into ``seen`` with one write per distinct gram before any of
them chooses its features (so the first documents of an empty index are not indexed blind); then
the chunk's documents, postings, ``df`` counts and norms are written with one statement each.
Each document's norm is the one it would have had indexed alone, after the chunk's documents
before it (see :func:`_norms`).
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter

from wiki_assets.engine.related.features import choose_features
from wiki_assets.engine.related.query import idf
from wiki_assets.engine.related.storage import add_meta, chunks, get_meta
from wiki_assets.engine.related.summary import summary_line
from wiki_assets.engine.related.text import grams, normalize

Item = tuple[str, str, str, str]  # (path, title, text, content hash)


def index_chunk(
    db: sqlite3.Connection, items: list[Item], features_per_doc: int, max_chars: int
) -> int:
    """Index new or changed documents (a path given twice: the last one wins); returns how many."""
    prepared: dict[str, tuple[str, str, str, Counter[str]]] = {}
    for path, title, text, content_hash in items:
        text = text[:max_chars]
        counts = grams(normalize(f"{title}\n{text}"))
        prepared[path] = (title, summary_line(text, title), content_hash, counts)
    old_ids = _ids(db, list(prepared))
    fresh: Counter[str] = Counter()  # in how many new documents of the chunk each gram is
    needed: set[str] = set()
    for path, (_, _, _, counts) in prepared.items():
        if path in old_ids:  # changed: counted in seen when first indexed, not again
            needed.update(counts.keys())
        else:
            fresh.update(counts.keys())
    seen = _count_seen(db, fresh)
    needed.difference_update(seen)
    for chunk in chunks(list(needed)):
        marks = ",".join("?" * len(chunk))
        seen.update(db.execute(f"SELECT gram, seen FROM df WHERE gram IN ({marks})", chunk))
    add_meta(db, "generation", 1)  # stored answers expire
    add_meta(db, "seen_docs", sum(path not in old_ids for path in prepared))
    seen_docs = get_meta(db, "seen_docs")
    for old in old_ids.values():
        forget(db, old)
    features: dict[int, list[tuple[str, float]]] = {}
    for path, (title, line, content_hash, counts) in prepared.items():
        (doc,) = db.execute(
            "INSERT INTO docs (path, title, line, content_hash, norm) VALUES (?, ?, ?, ?, 0)"
            " RETURNING id",
            (path, title, line, content_hash),
        ).fetchone()
        features[doc] = choose_features(counts, seen, seen_docs, features_per_doc)
    add_meta(db, "docs", len(prepared))
    db.executemany(
        "INSERT INTO postings (gram, doc, weight) VALUES (?, ?, ?)",
        [(gram, doc, weight) for doc, chosen in features.items() for gram, weight in chosen],
    )
    posted = Counter(gram for chosen in features.values() for gram, _ in chosen)
    df: dict[str, int] = {}
    for chunk in chunks(list(posted.items())):
        rows = ",".join("(?, ?)" for _ in chunk)
        df.update(
            db.execute(
                f"INSERT INTO df (gram, n) VALUES {rows} ON CONFLICT(gram)"
                " DO UPDATE SET n = n + excluded.n RETURNING gram, n",
                [x for pair in chunk for x in pair],
            )
        )
    db.executemany("UPDATE docs SET norm = ? WHERE id = ?", _norms(features, df, posted, db))
    return len(prepared)


def _norms(
    features: dict[int, list[tuple[str, float]]],
    df_after: dict[str, int],
    posted: Counter[str],
    db: sqlite3.Connection,
) -> list[tuple[float, int]]:
    """``(norm, id)`` of the chunk's documents, each with the idf of the moment it joined the
    index, as if they had been added one by one: the ``df`` counts and the number of documents
    up to and including it (what one-at-a-time indexing gave, so a chunk ranks as before)."""
    n_docs = get_meta(db, "docs") - len(features)
    df = {gram: df_after[gram] - times for gram, times in posted.items()}
    norms = []
    for doc, chosen in features.items():
        n_docs += 1
        for gram, _ in chosen:
            df[gram] += 1
        norm_sq = sum((weight * idf(n_docs, df[gram])) ** 2 for gram, weight in chosen)
        norms.append((math.sqrt(norm_sq), doc))
    return norms


def forget(db: sqlite3.Connection, doc: int) -> None:
    """Remove a document, its postings and its stored answer (inside a write transaction)."""
    add_meta(db, "generation", 1)  # stored answers expire
    db.execute("DELETE FROM answers WHERE doc = ?", (doc,))
    db.execute(
        "UPDATE df SET n = n - 1 WHERE gram IN (SELECT gram FROM postings WHERE doc = ?)", (doc,)
    )
    db.execute("DELETE FROM postings WHERE doc = ?", (doc,))
    db.execute("DELETE FROM docs WHERE id = ?", (doc,))
    add_meta(db, "docs", -1)
    if doc <= get_meta(db, "packed_upto"):
        add_meta(db, "packed_dead", 1)


def _ids(db: sqlite3.Connection, paths: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for chunk in chunks(paths):
        marks = ",".join("?" * len(chunk))
        found.update(db.execute(f"SELECT path, id FROM docs WHERE path IN ({marks})", chunk))
    return found


def _count_seen(db: sqlite3.Connection, fresh: Counter[str]) -> dict[str, int]:
    """Add the chunk's new documents to ``seen`` (grams grouped by count: one statement per
    count and 500 grams); returns every such gram's ``seen`` after it."""
    seen: dict[str, int] = {}
    grouped: dict[int, list[str]] = {}
    for gram, times in fresh.items():
        grouped.setdefault(times, []).append(gram)
    for times, group in grouped.items():
        for chunk in chunks(group):
            rows = ",".join("(?, ?)" for _ in chunk)
            params = [x for gram in chunk for x in (gram, times)]
            seen.update(
                db.execute(
                    f"INSERT INTO df (gram, seen) VALUES {rows} ON CONFLICT(gram)"
                    " DO UPDATE SET seen = seen + excluded.seen RETURNING gram, seen",
                    params,
                )
            )
    return seen
