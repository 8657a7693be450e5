"""Frozen copy of the related-document index as of commit 6a802e8 (before the package split and
the packed posting lists), kept only so that ``python -m benchmarks.related`` can compare the
candidates of today's index with this reference. Not used by the engine; do not edit.
"""
# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

import functools
import heapq
import math
import re
import sqlite3
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

SCHEMA_VERSION = 1
LINE_MAX = 160
"""Longest :attr:`Candidate.line`, in characters."""
LINE_MIN = 30
"""A first sentence shorter than this ("Q.", a greeting) is joined with the next one."""

MAX_CHARS = 20_000
"""Characters of a document that are indexed; the rest is ignored."""

GRAM_SIZES = (2, 3)
TF_K1 = 1.2
"""BM25's term-frequency saturation."""
MIN_SEEN = 2
"""A gram contained in fewer documents than this (only this one) is a feature of last resort."""
OTHER_SCRIPT_SHARE = 0.25
"""Share of a document's feature slots kept for grams outside its main script."""
COMMON_FRACTION = 0.2
"""Grams posted by more than this fraction of the corpus are ignored at query time..."""
COMMON_MIN_DOCS = 50
"""...once the corpus has at least this many documents."""
QUERY_POSTINGS = 10_000
"""Most posting rows one candidates query joins. A query's cost is the sum of its grams' document
counts, which grows with the corpus; past this budget only the rarest grams (the most telling ones)
are matched, so a query costs about the same at a million documents as at ten thousand."""
CHUNK = 64
"""Documents whose grams :meth:`RelatedIndex.update_many` counts together before they choose
their features."""
HEURISTIC_BELOW = 8
"""With fewer documents seen than this, a stop-gram heuristic replaces the idf in feature choice."""
"""Candidates whose norms are recomputed with the current idf at query time (at least ``4 * k``)."""

_SQL_CHUNK = 500  # bound parameters per statement, well under SQLite's limit


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str  # the document's path relative to the synced root (its identity)
    title: str
    line: str  # one line describing it (first meaningful sentence, <= 160 chars)
    score: float  # cosine similarity to the query document, in (0, 1]


@dataclass(slots=True)
class IndexStats:
    """What this :class:`RelatedIndex` instance did since it was opened."""

    indexed: int = 0  # documents (re)indexed
    skipped: int = 0  # updates skipped because the content hash was unchanged
    removed: int = 0  # documents removed (by remove or prune)


# --- text --------------------------------------------------------------------------------------


class _Separators(dict[int, int | None]):
    """``str.translate`` table: characters that are not letters, marks or numbers become spaces.

    Filled lazily, one entry per distinct character ever met, so lookups after the first run in C.
    """

    def __missing__(self, codepoint: int) -> int:
        kept = unicodedata.category(chr(codepoint))[0] in "LMN"
        value = codepoint if kept else 0x20
        self[codepoint] = value
        return value


_SEPARATORS = _Separators()


def normalize(text: str) -> str:
    """NFKC, lowercase, every character that is not a letter, mark or number becomes a space, and
    runs of whitespace collapse to one space."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_SEPARATORS)
    return " ".join(text.split())


def grams(text: str) -> Counter[str]:
    """Term frequencies of the character 2- and 3-grams of ``text`` (already normalized).

    Grams are taken inside each token padded with one space on each side (``" kr"``, ``"kr "``),
    so a gram never joins the end of one word to the start of the next.
    """
    # Pad every token by doubling the spaces between them; the only grams that straddle two
    # tokens then contain a double space, and are dropped below.
    padded = f" {text.replace(' ', '  ')} " if text else ""
    counts: Counter[str] = Counter()
    for size in GRAM_SIZES:
        counts.update([padded[i : i + size] for i in range(len(padded) - size + 1)])
    for gram in [gram for gram in counts if "  " in gram or gram == " "]:
        del counts[gram]
    return counts


def _stop_gram_factor(gram: str, tf: int, total: int) -> float:
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


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_LIST = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|>|\|)")
_RULE = re.compile(r"^\s*(?:[-*_=]\s*){3,}$")
_META = re.compile(r"^[\W_]*[^\W\d_][\w .()/'-]{0,28}?[\W_]*[:：]\s")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`]+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+(?=\S)")


def _plain(line: str) -> str:
    line = _LINK.sub(r"\1", line)
    line = _MARKUP.sub("", line)
    line = re.sub(r"^\s*(?:#{1,6}|[-*+]|\d+[.)]|>+)\s+", "", line)
    return " ".join(line.split())


def _is_sentence_like(line: str) -> bool:
    return (
        bool(re.search(r"[.!?。！？]$", line))
        or bool(_SENTENCE_END.search(line))
        or (len(line.split()) >= 8)
    )


def summary_line(text: str, title: str = "") -> str:
    """The first meaningful sentence of ``text``, at most :data:`LINE_MAX` characters.

    Headings, lists, quotes, tables, rules and short ``Key: value`` metadata lines
    (``Owner: ...``, ``담당: ...``) are passed over in favour of the first prose line, whose first
    sentence is returned (joined with the next while shorter than :data:`LINE_MIN`). Falls back
    to the first non-empty line, then to ``title``.
    """
    title_key = normalize(title)
    fallback = ""
    for raw in text[:MAX_CHARS].splitlines():
        if not raw.strip() or _RULE.match(raw):
            continue
        plain = _plain(raw)
        if not plain:
            continue
        if not fallback and normalize(plain) != title_key and not _HEADING.match(raw):
            fallback = plain
        if _HEADING.match(raw) or _LIST.match(raw) or _META.match(_MARKUP.sub("", raw)):
            continue
        if normalize(plain) == title_key or not _is_sentence_like(plain):
            continue
        sentences = _SENTENCE_END.split(plain)
        line = sentences[0]
        for more in sentences[1:]:
            if len(line) >= LINE_MIN:
                break
            line = f"{line} {more}"
        return _clip(line)
    return _clip(fallback or " ".join(title.split()))


def _clip(line: str) -> str:
    if len(line) <= LINE_MAX:
        return line
    cut = line[: LINE_MAX - 1]
    space = cut.rfind(" ")
    if space > LINE_MAX // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"


def _chunks(items: Sequence[Any], size: int = _SQL_CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- the index ---------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    line TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    norm REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS postings (
    gram TEXT NOT NULL,
    doc INTEGER NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (gram, doc)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_by_doc ON postings (doc, weight);
CREATE TABLE IF NOT EXISTS answers (
    doc INTEGER PRIMARY KEY,
    generation INTEGER NOT NULL,
    k INTEGER NOT NULL,
    found TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS df (
    gram TEXT PRIMARY KEY,
    n INTEGER NOT NULL DEFAULT 0,
    seen INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""


def _within_budget(
    query: list[tuple[int, str, float]], budget: int
) -> list[tuple[int, str, float]]:
    """The query's grams, rarest first, as long as their document counts fit in ``budget``
    (always at least one)."""
    if sum(df for df, _, _ in query) <= budget:
        return query
    kept: list[tuple[int, str, float]] = []
    used = 0
    for item in sorted(query):
        if kept and used + item[0] > budget:
            break
        kept.append(item)
        used += item[0]
    return kept


def _decode_answer(found: str) -> list[tuple[int, float]]:
    """``answers.found`` (``id:score,...``) as ``(id, score)`` pairs."""
    pairs = [pair.split(":") for pair in found.split(",")] if found else []
    return [(int(other), float(score)) for other, score in pairs]


def _tf_weight(tf: int) -> float:
    """BM25's saturating term frequency (no length normalization: vectors are cosine-normalized)."""
    return tf * (TF_K1 + 1.0) / (tf + TF_K1)


def _idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + n_docs / df) if df > 0 else 0.0


@functools.lru_cache(maxsize=1 << 16)
def _script(gram: str) -> str:
    """The Unicode script of a gram's first letter (``LATIN``, ``HANGUL``, ``CJK``...), or ``""``
    for a gram without letters (digits)."""
    for ch in gram:
        if ch.isalpha():
            return unicodedata.name(ch, "? ?").split(" ", 1)[0]
    return ""


class RelatedIndex:
    """An on-disk index answering "which other documents are most like this one?".

    All state is in the SQLite file at ``db_path`` (created if missing); an instance holds only a
    connection and a few counters, so memory does not grow with the corpus. Methods are safe to
    call from several threads (they are serialized); for several processes, open one index each
    (SQLite's WAL mode lets readers run beside the writer).
    """

    def __init__(
        self,
        db_path: Path,
        *,
        features_per_doc: int = 64,
        max_chars: int = MAX_CHARS,
        cache_mib: int = 16,
    ) -> None:
        if features_per_doc < 1:
            raise ValueError("features_per_doc must be at least 1")
        self.db_path = Path(db_path)
        self.features_per_doc = features_per_doc
        self.max_chars = max_chars
        self.stats = IndexStats()
        self._lock = threading.RLock()
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        # Parallel runs share the file; one may wait while another indexes a batch of documents.
        self._db = sqlite3.connect(
            self.db_path, isolation_level=None, check_same_thread=False, timeout=120
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA cache_size=-{int(cache_mib) * 1024}")
        self._db.execute("PRAGMA temp_store=FILE")
        # Candidates queries read through one connection per thread, outside the lock: SQLite
        # runs a query without the GIL, so several go at once beside the event loop (WAL lets
        # them read beside a writer). A run asks for candidates at hundreds a second.
        self._readers = threading.local()
        self._reader_connections: list[sqlite3.Connection] = []
        self._reader_cache_kib = max(1024, int(cache_mib) * 1024 // 4)
        # Answers computed by readers, written by save_answers() in one transaction: a reader
        # must not wait for the write lock another run may hold while it indexes.
        self._new_answers: list[tuple[int, int, int, str]] = []
        with self._transaction():
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            version = self._meta("schema")
            if version == 0:
                self._set_meta("schema", SCHEMA_VERSION)
            elif version != SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.db_path} has related-index schema {version}, expected {SCHEMA_VERSION}"
                )

    # -- lifecycle --

    def close(self) -> None:
        with self._lock:
            if self._new_answers:
                self.save_answers()
            for reader in self._reader_connections:
                reader.close()
            self._reader_connections.clear()
            self._readers = threading.local()
            self._db.close()

    def _reader(self) -> sqlite3.Connection:
        """This thread's read-only connection."""
        reader: sqlite3.Connection | None = getattr(self._readers, "db", None)
        if reader is None:
            reader = sqlite3.connect(
                self.db_path, isolation_level=None, check_same_thread=False, timeout=120
            )
            reader.execute("PRAGMA query_only=ON")
            reader.execute(f"PRAGMA cache_size=-{self._reader_cache_kib}")
            reader.execute("PRAGMA temp_store=MEMORY")
            with self._lock:
                self._reader_connections.append(reader)
            self._readers.db = reader
        return reader

    def __enter__(self) -> RelatedIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __len__(self) -> int:
        with self._lock:
            return self._meta("docs")

    def __contains__(self, path: object) -> bool:
        with self._lock:
            row = self._db.execute("SELECT 1 FROM docs WHERE path = ?", (path,)).fetchone()
            return row is not None

    # -- writes --

    def update(self, path: str, title: str, text: str, content_hash: str) -> None:
        """(Re)index one document; a no-op when ``content_hash`` is what is already indexed."""
        with self._lock, self._transaction():
            if self._unchanged(path, content_hash):
                self.stats.skipped += 1
                return
            self._index_chunk([(path, title, text, content_hash)])

    def update_many(self, items: Iterable[tuple[str, str, str, str]], *, batch: int = 500) -> int:
        """Index ``(path, title, text, content_hash)`` items, committing after every ``batch``
        documents (rounded up to whole chunks).

        Returns how many documents were (re)indexed; unchanged ones are skipped. Items are taken
        :data:`CHUNK` at a time: a chunk's grams are counted into the corpus statistics with one
        write per distinct gram, then each document of the chunk chooses its features. This is
        much cheaper than one document at a time, and it means the first chunk of an empty index
        is not indexed blind. At most one chunk of gram counts is held in memory.
        """
        batch = max(1, batch)
        done = 0
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                chunk: list[tuple[str, str, str, str]] = []
                since_commit = 0
                for item in items:
                    if self._unchanged(item[0], item[3]):
                        self.stats.skipped += 1
                        continue
                    chunk.append(item)
                    if len(chunk) >= CHUNK:
                        done += self._index_chunk(chunk)
                        since_commit += len(chunk)
                        chunk = []
                    if since_commit >= batch:
                        self._db.execute("COMMIT")
                        self._db.execute("BEGIN IMMEDIATE")
                        since_commit = 0
                if chunk:
                    done += self._index_chunk(chunk)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return done

    def remove(self, path: str) -> None:
        """Forget ``path``; a no-op if it is not indexed."""
        with self._lock, self._transaction():
            row = self._db.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
            if row is not None:
                self._delete(row[0])

    def prune(self, keep: Callable[[str], bool]) -> int:
        """Remove every document whose path fails ``keep``; returns how many were removed.

        Paths are read in chunks by id, so memory stays bounded however large the corpus is.
        """
        removed = 0
        last = -1
        with self._lock:
            while True:
                rows = self._db.execute(
                    "SELECT id, path FROM docs WHERE id > ? ORDER BY id LIMIT 1000", (last,)
                ).fetchall()
                if not rows:
                    return removed
                last = rows[-1][0]
                doomed = [doc for doc, path in rows if not keep(path)]
                if doomed:
                    with self._transaction():
                        for doc in doomed:
                            self._delete(doc)
                    removed += len(doomed)

    def reweight(self) -> None:
        """Recompute every stored norm with the current idf (optional maintenance)."""
        with self._lock, self._transaction():
            n_docs = self._meta("docs")
            self._set_meta("generation", self._meta("generation") + 1)  # stored answers expire
            self._db.create_function("ri_idf", 1, lambda n: _idf(n_docs, n), deterministic=True)
            self._db.create_function("ri_sqrt", 1, math.sqrt, deterministic=True)
            self._db.execute(
                """
                UPDATE docs SET norm = coalesce((
                    SELECT ri_sqrt(sum(p.weight * p.weight * ri_idf(d.n) * ri_idf(d.n)))
                    FROM postings p JOIN df d ON d.gram = p.gram WHERE p.doc = docs.id
                ), 0.0)
                """
            )

    # -- reads --

    def candidates(self, path: str, k: int = 8) -> list[Candidate]:
        """The ``k`` documents most similar to the indexed document ``path``, best first.

        Never returns ``path`` itself; only documents sharing at least one queried gram (score > 0)
        are returned, so the list may be shorter than ``k``. Unknown paths get an empty list.
        """
        if k < 1:
            return []
        db = self._reader()
        db.execute("BEGIN")  # one snapshot for every read, even beside a writer
        try:
            row = db.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
            if row is None:
                return []
            doc = row[0]
            meta = dict(
                db.execute("SELECT key, value FROM meta WHERE key IN ('docs', 'generation')")
            )
            generation = int(meta.get("generation", 0))
            found = self._answered(db, doc, generation, k)
            if found is None:
                found = self._candidates(db, doc, int(meta.get("docs", 0)), k)
                answer = ",".join(f"{other}:{score!r}" for other, score in found)
                with self._lock:
                    self._new_answers.append((doc, generation, k, answer))
            return self._describe(db, found)
        finally:
            db.execute("COMMIT")

    def stored_answers(self, paths: Sequence[str], k: int = 8) -> dict[str, list[Candidate]]:
        """The still-valid stored answers among ``paths``, in two queries for all of them: a run
        looks ahead at the documents it is about to summarize instead of asking one by one."""
        if k < 1 or not paths:
            return {}
        db = self._reader()
        db.execute("BEGIN")
        try:
            meta = db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
            generation = int(meta[0]) if meta else 0
            found: dict[str, list[tuple[int, float]]] = {}
            for chunk in _chunks(list(paths)):
                marks = ",".join("?" * len(chunk))
                for path, answer in db.execute(
                    "SELECT d.path, a.found FROM docs d JOIN answers a ON a.doc = d.id"
                    f" WHERE d.path IN ({marks}) AND a.generation = ? AND a.k >= ?",
                    [*chunk, generation, k],
                ):
                    found[path] = _decode_answer(answer)[:k]
            others = sorted({other for pairs in found.values() for other, _ in pairs})
            described: dict[int, tuple[str, str, str]] = {}
            for chunk in _chunks(others):
                marks = ",".join("?" * len(chunk))
                for other, *row in db.execute(
                    f"SELECT id, path, title, line FROM docs WHERE id IN ({marks})", chunk
                ):
                    described[other] = (row[0], row[1], row[2])
            return {
                path: [Candidate(*described[o], score) for o, score in pairs if o in described]
                for path, pairs in found.items()
            }
        finally:
            db.execute("COMMIT")

    def save_answers(self) -> int:
        """Write the candidates answers computed since the last call; returns how many."""
        with self._lock:
            answers, self._new_answers = self._new_answers, []
            if answers:
                with self._transaction():
                    self._db.executemany(
                        "INSERT INTO answers (doc, generation, k, found) VALUES (?, ?, ?, ?)"
                        " ON CONFLICT(doc) DO UPDATE SET generation = excluded.generation,"
                        " k = excluded.k, found = excluded.found",
                        answers,
                    )
            return len(answers)

    @staticmethod
    def _answered(
        db: sqlite3.Connection, doc: int, generation: int, k: int
    ) -> list[tuple[int, float]] | None:
        """A stored answer still valid for this index and at least ``k`` long, or None."""
        row = db.execute(
            "SELECT found FROM answers WHERE doc = ? AND generation = ? AND k >= ?",
            (doc, generation, k),
        ).fetchone()
        return None if row is None else _decode_answer(row[0])[:k]

    @staticmethod
    def _describe(db: sqlite3.Connection, found: list[tuple[int, float]]) -> list[Candidate]:
        if not found:
            return []
        marks = ",".join("?" * len(found))
        rows: dict[int, tuple[str, str, str]] = {
            row[0]: (row[1], row[2], row[3])
            for row in db.execute(
                f"SELECT id, path, title, line FROM docs WHERE id IN ({marks})",
                [other for other, _ in found],
            )
        }
        return [Candidate(*rows[other], score) for other, score in found if other in rows]

    def _candidates(
        self, db: sqlite3.Connection, doc: int, n_docs: int, k: int
    ) -> list[tuple[int, float]]:
        """``(document id, cosine)`` of the ``k`` documents most like ``doc``, best first."""
        max_df = n_docs * COMMON_FRACTION if n_docs >= COMMON_MIN_DOCS else n_docs
        query: list[tuple[int, str, float]] = []  # (df, gram, query weight)
        norm_sq = 0.0
        for gram, weight, df in db.execute(
            "SELECT p.gram, p.weight, d.n FROM postings p JOIN df d ON d.gram = p.gram"
            " WHERE p.doc = ?",
            (doc,),
        ):
            if df > max_df:
                continue
            idf = _idf(n_docs, df)
            norm_sq += (weight * idf) ** 2
            if df > 1:  # a gram only this document posts matches nothing
                query.append((df, gram, weight * idf * idf))
        if not query or norm_sq <= 0.0:
            return []
        query = _within_budget(query, QUERY_POSTINGS)
        values = ",".join("(?, ?)" for _ in query)
        params: list[object] = [x for _, gram, qw in query for x in (gram, qw)]
        shortlist = db.execute(
            f"""
            WITH q(gram, qw) AS (VALUES {values}),
            hits AS (
                SELECT o.doc AS doc, sum(q.qw * o.weight) AS dot
                FROM q JOIN postings o ON o.gram = q.gram
                WHERE o.doc <> ?
                GROUP BY o.doc
            )
            SELECT d.id, hits.dot / max(d.norm, 1e-9) AS score
            FROM hits JOIN docs d ON d.id = hits.doc
            WHERE hits.dot > 0
            ORDER BY score DESC, d.path
            LIMIT ?
            """,
            [*params, doc, k],
        ).fetchall()
        # Norms are the ones stored at indexing time (idf then): an approximation that keeps
        # a query to one SQL statement, which matters at hundreds of documents a second.
        query_norm = math.sqrt(norm_sq)
        return [(other, min(1.0, score / query_norm)) for other, score in shortlist]

    # -- internals --

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    def _meta(self, key: str) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    def _set_meta(self, key: str, value: int) -> None:
        self._db.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _doc_id(self, path: str) -> int | None:
        row = self._db.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
        return None if row is None else int(row[0])

    def is_current(self, path: str, content_hash: str) -> bool:
        """Whether ``path`` is indexed with this content: callers skip reading its text."""
        with self._lock:
            return self._unchanged(path, content_hash)

    def _unchanged(self, path: str, content_hash: str) -> bool:
        row = self._db.execute("SELECT content_hash FROM docs WHERE path = ?", (path,)).fetchone()
        return row is not None and row[0] == content_hash

    def _index_chunk(self, items: list[tuple[str, str, str, str]]) -> int:
        """Index new or changed documents: count the new ones' grams into ``seen`` (one write per
        distinct gram of the chunk), then choose and post each document's features."""
        prepared: dict[str, tuple[str, str, str, Counter[str]]] = {}
        for path, title, text, content_hash in items:  # a path given twice: the last one wins
            text = text[: self.max_chars]
            counts = grams(normalize(f"{title}\n{text}"))
            prepared[path] = (title, summary_line(text, title), content_hash, counts)
        fresh: Counter[str] = Counter()  # in how many new documents of the chunk each gram is
        needed: set[str] = set()
        new_docs = 0
        for path, (_, _, _, counts) in prepared.items():
            if self._doc_id(path) is None:
                fresh.update(counts.keys())
                new_docs += 1
            else:  # changed: counted when first indexed, not again
                needed.update(counts.keys())
        seen: dict[str, int] = {}
        grouped: dict[int, list[str]] = {}
        for gram, times in fresh.items():
            grouped.setdefault(times, []).append(gram)
        for times, group in grouped.items():
            for chunk in _chunks(group):
                rows = ",".join("(?, ?)" for _ in chunk)
                params = [x for gram in chunk for x in (gram, times)]
                seen.update(
                    self._db.execute(
                        f"INSERT INTO df (gram, seen) VALUES {rows} ON CONFLICT(gram)"
                        " DO UPDATE SET seen = seen + excluded.seen RETURNING gram, seen",
                        params,
                    )
                )
        needed.difference_update(seen)
        for chunk in _chunks(list(needed)):
            marks = ",".join("?" * len(chunk))
            seen.update(
                self._db.execute(f"SELECT gram, seen FROM df WHERE gram IN ({marks})", chunk)
            )
        self._set_meta("generation", self._meta("generation") + 1)  # stored answers expire
        seen_docs = self._meta("seen_docs") + new_docs
        self._set_meta("seen_docs", seen_docs)
        for path, (title, line, content_hash, counts) in prepared.items():
            features = self._features(counts, seen, seen_docs)
            self._store(path, title, line, content_hash, features)
        return len(prepared)

    def _features(
        self, counts: Counter[str], seen: dict[str, int], seen_docs: int
    ) -> list[tuple[str, float]]:
        """The document's ``features_per_doc`` most salient grams with their tf weights."""
        tf_weight = {tf: _tf_weight(tf) for tf in set(counts.values())}
        if seen_docs < HEURISTIC_BELOW:
            total = sum(counts.values())
            ranked = [
                (tf_weight[tf] * _stop_gram_factor(gram, tf, total), gram)
                for gram, tf in counts.items()
            ]
        else:
            in_docs = [seen.get(gram, 1) for gram in counts]
            idf = {
                n: math.log(1.0 + seen_docs / max(n, 1)) * (1.0 if n >= MIN_SEEN else 1e-3)
                for n in set(in_docs)
            }
            ranked = [
                (tf_weight[tf] * idf[n], gram)
                for (gram, tf), n in zip(counts.items(), in_docs, strict=True)
            ]
        size = self.features_per_doc
        quota = int(size * OTHER_SCRIPT_SHARE)
        scripts = [_script(gram) for gram in counts]
        totals: Counter[str] = Counter()
        for script, tf in zip(scripts, counts.values(), strict=True):
            totals[script] += tf
        totals.pop("", None)
        chosen: list[tuple[float, str]] = []
        if quota and len(totals) > 1:
            main = totals.most_common(1)[0][0]
            other = [
                r for r, script in zip(ranked, scripts, strict=True) if script not in ("", main)
            ]
            chosen = heapq.nlargest(quota, other)
            taken = {gram for _, gram in chosen}
            ranked = [r for r in ranked if r[1] not in taken]
        chosen += heapq.nlargest(size - len(chosen), ranked)
        return [(gram, tf_weight[counts[gram]]) for _, gram in chosen]

    def _store(
        self, path: str, title: str, line: str, content_hash: str, features: list[tuple[str, float]]
    ) -> None:
        row = self._db.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
        if row is None:
            doc = self._db.execute(
                "INSERT INTO docs (path, title, line, content_hash, norm) VALUES (?, ?, ?, ?, 0)",
                (path, title, line, content_hash),
            ).lastrowid
            self._set_meta("docs", self._meta("docs") + 1)
        else:
            doc = row[0]
            self._drop_postings(doc)
            self._db.execute(
                "UPDATE docs SET title = ?, line = ?, content_hash = ? WHERE id = ?",
                (title, line, content_hash, doc),
            )
        self._db.executemany(
            "INSERT INTO postings (gram, doc, weight) VALUES (?, ?, ?)",
            ((gram, doc, weight) for gram, weight in features),
        )
        self._db.executemany(
            "INSERT INTO df (gram, n) VALUES (?, 1) ON CONFLICT(gram) DO UPDATE SET n = n + 1",
            ((gram,) for gram, _ in features),
        )
        n_docs = self._meta("docs")
        norm_sq = 0.0
        for weight, df in self._db.execute(
            "SELECT p.weight, d.n FROM postings p JOIN df d ON d.gram = p.gram WHERE p.doc = ?",
            (doc,),
        ):
            norm_sq += (weight * _idf(n_docs, df)) ** 2
        self._db.execute("UPDATE docs SET norm = ? WHERE id = ?", (math.sqrt(norm_sq), doc))
        self.stats.indexed += 1

    def _drop_postings(self, doc: int) -> None:
        self._db.execute(
            "UPDATE df SET n = n - 1 WHERE gram IN (SELECT gram FROM postings WHERE doc = ?)",
            (doc,),
        )
        self._db.execute("DELETE FROM postings WHERE doc = ?", (doc,))

    def _delete(self, doc: int) -> None:
        self._set_meta("generation", self._meta("generation") + 1)  # stored answers expire
        self._db.execute("DELETE FROM answers WHERE doc = ?", (doc,))
        self._drop_postings(doc)
        self._db.execute("DELETE FROM docs WHERE id = ?", (doc,))
        self._set_meta("docs", self._meta("docs") - 1)
        self.stats.removed += 1


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (or ``ROLLBACK`` on error); joins an open transaction."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._owner = False

    def __enter__(self) -> None:
        if not self._db.in_transaction:
            self._db.execute("BEGIN IMMEDIATE")
            self._owner = True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not self._owner:
            return
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
