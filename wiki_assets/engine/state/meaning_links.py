"""Links by meaning: the documents nearest in meaning to a page's, that its model was not offered.

A page whose request went out before every document of the corpus had its vector was offered the
link candidates of that moment: a partner embedded later, in another language above all, was not
among them. Such a page is *due*: at the end of a run whose vectors are complete, it gets its
nearest documents by meaning that it does not link already
(:mod:`~wiki_assets.engine.ingestion.meaning`), stored here beside the model's own links in the
journal's ``links`` table, as links of kind ``meaning`` (``model``: the links the model chose).
They show on the page marked for what they are, and as backlinks on the pages they point to, like
the model's. A due mark outlives a run stopped before its vectors were complete: the next run
that completes them gives those pages their links.

Whatever replaces a document's links (a new answer, a failure, the document gone) replaces these
too: they are rows of the same table, deleted with the model's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from wiki_assets.engine.state.store import Db

MODEL, MEANING = "model", "meaning"  # the kinds of link (``links.kind``)
KIND_COLUMN = "kind", f"TEXT NOT NULL DEFAULT '{MODEL}'"  # added to the links table
SCHEMA = """
-- Documents whose pages wait for their links by meaning (written before every vector was in).
CREATE TABLE IF NOT EXISTS links_by_meaning_due (path TEXT PRIMARY KEY);
"""
_CHUNK = 500  # paths per ``IN (...)`` list


class MeaningLinks:
    """The journal's links by meaning and its due marks, on the journal's connection."""

    def __init__(self, db: Db) -> None:
        self._db = db

    def mark_due(self, paths: Iterable[str]) -> None:
        """The pages of ``paths`` are due for their links by meaning."""
        rows = [(path,) for path in paths]
        if rows:
            with self._db.transaction():
                self._db.executemany(
                    "INSERT INTO links_by_meaning_due (path) VALUES (?) ON CONFLICT DO NOTHING",
                    rows,
                )

    def due(self) -> list[str]:
        """The documents whose pages are due, by path."""
        rows = self._db.execute("SELECT path FROM links_by_meaning_due ORDER BY path")
        return [row[0] for row in rows]

    def record(self, found: Mapping[str, Sequence[str]], settled: Iterable[str] = ()) -> None:
        """Each document's links by meaning (its targets, best first), replacing those it had; the
        due marks of those documents and of ``settled`` (due, but with no page to link from)
        removed, in one transaction. A target the model links already stays the model's."""
        sources = [(path,) for path in found]
        with self._db.transaction():
            self._db.executemany(
                f"DELETE FROM links WHERE source = ? AND kind = '{MEANING}'", sources
            )
            self._db.executemany(
                "INSERT INTO links (source, target, reason, kind) VALUES (?, ?, '', ?)"
                " ON CONFLICT (source, target) DO NOTHING",
                [(path, target, MEANING) for path, targets in found.items() for target in targets],
            )
            self._db.executemany(
                "DELETE FROM links_by_meaning_due WHERE path = ?",
                [*sources, *((path,) for path in settled)],
            )

    def targets(self, paths: Sequence[str]) -> dict[str, list[str]]:
        """The links by meaning of ``paths``, in their order, keyed by path (absent: none)."""
        found: dict[str, list[str]] = {}
        for start in range(0, len(paths), _CHUNK):
            chunk = list(paths[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            for source, target in self._db.execute(
                f"SELECT source, target FROM links WHERE source IN ({marks})"
                f" AND kind = '{MEANING}' ORDER BY source, {self._order}",
                chunk,
            ):
                found.setdefault(source, []).append(target)
        return found

    @property
    def _order(self) -> str:
        # Links keep their order: SQLite's rowid does that; PostgreSQL needs a sequence.
        return "rowid" if self._db.dialect == "sqlite" else "seq"
