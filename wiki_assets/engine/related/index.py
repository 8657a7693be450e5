"""The on-disk index: :class:`RelatedIndex`, its connections, updates and candidates answers."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from wiki_assets.engine.prompting.candidate import Candidate
from wiki_assets.engine.related import segments, stored_answers
from wiki_assets.engine.related.grams import MAX_CHARS
from wiki_assets.engine.related.index_vectors import IndexVectors
from wiki_assets.engine.related.indexing import GramCounts, Item, forget, index_chunk
from wiki_assets.engine.related.segments import Postings
from wiki_assets.engine.related.storage import Transaction, chunks, create, get_meta, rollback
from wiki_assets.engine.related.stored_answers import Answer

CHUNK = 64
"""Documents whose grams :meth:`RelatedIndex.update_many` counts together before they choose
their features."""
BATCH = 2048
"""Documents :meth:`RelatedIndex.update_many` indexes in one transaction, written as one segment
of the lists: fewer segments are less to merge. A batch holds the index's write lock for under a
second of short notes, a few seconds of pages of a few hundred words."""


@dataclass(slots=True)
class IndexStats:
    """What this :class:`RelatedIndex` instance did since it was opened."""

    indexed: int = 0  # documents (re)indexed
    skipped: int = 0  # updates skipped because the content hash was unchanged
    removed: int = 0  # documents removed (by remove or prune)


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
        # Candidates queries read through one connection per thread, outside the lock: SQLite and
        # numpy do most of a query without the GIL, so several go at once beside the event loop
        # (WAL lets them read beside a writer). A run asks for candidates at hundreds a second.
        self._readers = threading.local()
        self._reader_connections: list[sqlite3.Connection] = []
        self._reader_cache_kib = max(1024, int(cache_mib) * 1024 // 4)
        # Answers computed by readers, written by save_answers() in one transaction: a reader
        # must not wait for the write lock another run may hold while it indexes.
        self._new_answers: list[Answer] = []
        create(self._db)
        self.vectors = IndexVectors(self._db, self._lock, self._reader)  # candidates by meaning

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
            return get_meta(self._db, "docs")

    def generation(self) -> int:
        """Moves with every change to the indexed documents or their vectors: an answer computed
        at one generation stays the index's answer until it moves."""
        return get_meta(self._reader(), "generation")

    def __contains__(self, path: object) -> bool:
        with self._lock:
            row = self._db.execute("SELECT 1 FROM docs WHERE path = ?", (path,)).fetchone()
            return row is not None

    # -- writes --

    def update(self, path: str, title: str, text: str, content_hash: str) -> None:
        """(Re)index one document; a no-op when ``content_hash`` is what is already indexed."""
        with self._lock, Transaction(self._db):
            if self._unchanged(path, content_hash):
                self.stats.skipped += 1
                return
            counts = GramCounts()
            postings = self._index([(path, title, text, content_hash)], counts)
            counts.save(self._db)
            segments.write(self._db, [postings])
            segments.merge_if_due(self._db)

    def update_many(self, items: Iterable[Item], *, batch: int = BATCH) -> int:
        """Index ``(path, title, text, content_hash)`` items, committing after every ``batch``
        documents (rounded up to whole chunks).

        Returns how many documents were (re)indexed; unchanged ones are skipped. Items are taken
        :data:`CHUNK` at a time: a chunk's grams are counted into the corpus statistics with one
        write per distinct gram, then each document of the chunk chooses its features. This is
        much cheaper than one document at a time, and it means the first chunk of an empty index
        is not indexed blind. At most one chunk of gram counts is held in memory, and the
        postings of one batch, written as a segment of the lists before each commit; the
        segments are merged at the end if enough changed (:mod:`~.segments`).
        """
        batch = max(1, batch)
        indexed_before = self.stats.indexed
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                chunk: list[Item] = []
                counts = GramCounts()  # the batch's
                written: list[Postings] = []  # the postings of the batch, for its segment
                since_commit = 0
                for item in items:
                    if self._unchanged(item[0], item[3]):
                        self.stats.skipped += 1
                        continue
                    chunk.append(item)
                    if len(chunk) >= CHUNK:
                        written.append(self._index(chunk, counts))
                        since_commit += len(chunk)
                        chunk = []
                    if since_commit >= batch:
                        counts.save(self._db)
                        segments.write(self._db, written)
                        self._db.execute("COMMIT")
                        self._db.execute("BEGIN IMMEDIATE")
                        written, since_commit = [], 0
                if chunk:
                    written.append(self._index(chunk, counts))
                counts.save(self._db)
                segments.write(self._db, written)
                segments.merge_if_due(self._db)
                self._db.execute("COMMIT")
            except BaseException:
                rollback(self._db)
                raise
        return self.stats.indexed - indexed_before

    def remove(self, path: str) -> None:
        """Forget ``path``; a no-op if it is not indexed."""
        with self._lock, Transaction(self._db):
            row = self._db.execute("SELECT id FROM docs WHERE path = ?", (path,)).fetchone()
            if row is not None:
                forget(self._db, row[0])
                self.stats.removed += 1
                segments.merge_if_due(self._db)

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
                    break
                last = rows[-1][0]
                doomed = [doc for doc, path in rows if not keep(path)]
                if doomed:
                    with Transaction(self._db):
                        for doc in doomed:
                            forget(self._db, doc)
                    removed += len(doomed)
            self.stats.removed += removed
            if removed:
                with Transaction(self._db):
                    segments.merge_if_due(self._db)
        return removed

    def current_among(self, hashes: Mapping[str, str]) -> set[str]:
        """Which of the paths of ``hashes`` (path -> content hash) are indexed with that content,
        in a few queries: callers skip reading their text."""
        current: set[str] = set()
        with self._lock:
            for chunk in chunks(list(hashes)):
                marks = ",".join("?" * len(chunk))
                current.update(
                    path
                    for path, content_hash in self._db.execute(
                        f"SELECT path, content_hash FROM docs WHERE path IN ({marks})", chunk
                    )
                    if hashes[path] == content_hash
                )
        return current

    def _unchanged(self, path: str, content_hash: str) -> bool:
        row = self._db.execute("SELECT content_hash FROM docs WHERE path = ?", (path,)).fetchone()
        return row is not None and row[0] == content_hash

    def _index(self, items: list[Item], counts: GramCounts) -> Postings:
        done, postings = index_chunk(self._db, items, counts, self.features_per_doc, self.max_chars)
        self.stats.indexed += done
        return postings

    # -- reads --

    def candidates(self, path: str, k: int = 8) -> list[Candidate]:
        """The ``k`` documents most similar to the indexed document ``path``, best first.

        Never returns ``path`` itself; only documents sharing at least one queried gram (score > 0)
        are returned, so the list may be shorter than ``k``. Unknown paths get an empty list.
        """
        return self.candidates_many([path], k)[path]

    def candidates_many(self, paths: Sequence[str], k: int = 8) -> dict[str, list[Candidate]]:
        """:meth:`candidates` of every one of ``paths``, exactly, in a few reads for all of them
        (one snapshot). Answers not stored yet are computed and kept for :meth:`save_answers`."""
        if k < 1 or not paths:
            return {path: [] for path in paths}
        db = self._reader()
        db.execute("BEGIN")  # one snapshot for every read, even beside a writer
        try:
            ids, found, new = stored_answers.find(db, paths, k)
            described = stored_answers.describe(db, found)
        finally:
            db.execute("COMMIT")
        with self._lock:
            self._new_answers.extend(new)
        return {path: described[ids[path]] if path in ids else [] for path in paths}

    def answer(self, paths: Sequence[str], k: int = 8) -> int:
        """Compute and store the answers of those of ``paths`` that have none still valid, so that
        :meth:`stored_answers` finds them; returns how many were computed. A first run's planning
        pass asks this for its documents, a lookahead at a time."""
        if k < 1 or not paths:
            return 0
        db = self._reader()
        db.execute("BEGIN")
        try:
            _, _, new = stored_answers.find(db, paths, k, stored=False)
        finally:
            db.execute("COMMIT")
        with self._lock:
            self._new_answers.extend(new)
            self.save_answers()
        return len(new)

    def stored_answers(self, paths: Sequence[str], k: int = 8) -> dict[str, list[Candidate]]:
        """The still-valid stored answers among ``paths``, in two queries for all of them: a run
        looks ahead at the documents it is about to summarize instead of asking one by one."""
        if k < 1 or not paths:
            return {}
        db = self._reader()
        db.execute("BEGIN")
        try:
            return stored_answers.stored(db, paths, k)
        finally:
            db.execute("COMMIT")

    def save_answers(self) -> int:
        """Write the candidates answers computed since the last call; returns how many."""
        with self._lock:
            new, self._new_answers = self._new_answers, []
            if new:
                with Transaction(self._db):
                    stored_answers.save(self._db, new)
            return len(new)
