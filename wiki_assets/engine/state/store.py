"""Where the state that runs share lives, and the locks that keep parallel runs apart.

Two kinds of store, one interface:

* **SQLite** files in the wiki's hidden state folder (the default): one machine, any number of
  processes. Locks are ``flock`` locks, which the kernel drops when their holder dies.
* **PostgreSQL** (``postgresql://…``, e.g. the Dagster instance's own database): several machines.
  Tables live in their own schema; locks are session-level advisory locks, which the server drops
  when the holder's connection closes, however the holder died.

Both commit every recorded result before the page is written, so a run killed at any point keeps
what it had already paid a model for.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import socket
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from wiki_assets.engine.errors import CollectionBusy as CollectionBusy
from wiki_assets.engine.errors import StateUnavailable as StateUnavailable

JOURNAL_FILE = "journal.sqlite"  # in the wiki's state folder, for the SQLite store
DEFAULT_SCHEMA = "wiki_assets"

_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg2")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class Db:
    """One connection with the few differences between SQLite and PostgreSQL papered over: SQL is
    written once, with ``?`` placeholders and ``{now}`` for the database clock in epoch seconds."""

    def __init__(self, connection: Any, dialect: str) -> None:
        self.connection = connection
        self.dialect = dialect  # "sqlite" or "postgres"
        self._now = (
            "((julianday('now') - 2440587.5) * 86400.0)"
            if dialect == "sqlite"
            # The server's clock, not each machine's: leases compare times from many machines.
            else "extract(epoch from clock_timestamp())"
        )

    def sql(self, statement: str) -> str:
        statement = statement.replace("{now}", self._now)
        return statement if self.dialect == "sqlite" else statement.replace("?", "%s")

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        if self.dialect == "sqlite":
            return self.connection.execute(self.sql(statement), params)
        cursor = self.connection.cursor()
        # No parameters means no %-formatting at all (a literal % must survive).
        cursor.execute(self.sql(statement), tuple(params) or None)
        return cursor

    def executemany(self, statement: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        if self.dialect == "sqlite":
            self.connection.executemany(self.sql(statement), rows)
        else:
            from psycopg2.extras import execute_batch

            # One round trip per 100 rows; psycopg2's executemany makes one per row.
            with self.connection.cursor() as cursor:
                execute_batch(cursor, self.sql(statement), rows, page_size=100)

    def script(self, statements: str) -> None:
        for statement in statements.split(";"):
            if statement.strip():
                self.execute(statement)

    def create_tables(self, ddl: str) -> None:
        """Runs ``CREATE TABLE IF NOT EXISTS`` statements; ``{float}`` is a 64-bit float type."""
        with self.transaction():
            if self.dialect == "postgres":
                # Two runs creating tables at once would race in the catalog: one at a time.
                self.execute("SELECT pg_advisory_xact_lock(hashtext('wiki_assets schema'))")
            self.script(
                ddl.replace("{float}", "REAL" if self.dialect == "sqlite" else "DOUBLE PRECISION")
            )

    def has_table(self, name: str) -> bool:
        """Whether table ``name`` exists (in the schema a PostgreSQL connection searches)."""
        if self.dialect == "sqlite":
            query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
            return self.execute(query, (name,)).fetchone() is not None
        return bool(self.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()[0])

    def add_column(self, table: str, column: str, ddl: str) -> None:
        """Add ``column`` (``ddl``: its type and default) to ``table`` unless it has it: a store
        written by an older version gains a field its rows fill with the default."""
        with self.transaction():
            if self.dialect == "postgres":
                self.execute("SELECT pg_advisory_xact_lock(hashtext('wiki_assets schema'))")
                self.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {ddl}")
                return
            names = {row[1] for row in self.execute(f"PRAGMA table_info({table})")}
            if column not in names:
                self.execute(f"ALTER TABLE {table} ADD COLUMN {column} {ddl}")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        # Both connections autocommit; a group of statements is one explicit transaction.
        # IMMEDIATE takes SQLite's write lock up front, so two writers never deadlock on upgrade.
        self.execute("BEGIN IMMEDIATE" if self.dialect == "sqlite" else "BEGIN")
        try:
            yield
            self.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise

    def rollback(self) -> None:
        """End a failed transaction, if one is still open: SQLite ends it itself on some errors
        (a full disk), and a ROLLBACK then would raise ``cannot rollback - no transaction is
        active`` over the error that matters. A rollback that fails is left unsaid for the same
        reason (the connection is of no more use to this run)."""
        if self.dialect == "sqlite" and not self.connection.in_transaction:
            return
        try:
            self.execute("ROLLBACK")
        except Exception:
            pass

    def close(self) -> None:
        self.connection.close()


@dataclass(frozen=True, slots=True)
class StateStore:
    """Where one wiki's shared state lives. ``url`` None means SQLite in ``state_dir``."""

    state_dir: Path
    url: str | None = None
    schema: str = DEFAULT_SCHEMA

    def __post_init__(self) -> None:
        if self.url is not None and urlsplit(self.url).scheme not in _POSTGRES_SCHEMES:
            raise ValueError("state store URL must be postgresql://… (or unset for SQLite)")
        if not _IDENTIFIER.fullmatch(self.schema):
            raise ValueError(f"state schema {self.schema!r} is not a plain lower-case SQL name")

    def describe(self) -> str:
        """For logs: where the state is, never the password."""
        if self.url is None:
            return f"sqlite {self.state_dir / JOURNAL_FILE}"
        parts = urlsplit(self.url)
        return f"postgres {parts.hostname}:{parts.port or 5432}{parts.path} schema {self.schema}"

    def has_state(self) -> bool:
        """Whether anything was ever recorded (reading must not create a SQLite file)."""
        return self.url is not None or (self.state_dir / JOURNAL_FILE).exists()

    def connect(self, *, tables: bool = True) -> Db:
        """A connection to the store. ``tables=False`` (locks only) skips the schema set-up."""
        if self.url is None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.state_dir / JOURNAL_FILE,
                isolation_level=None,
                timeout=60,
                check_same_thread=False,
            )
            connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL keeps every commit across a process crash (only power loss may drop the last).
            connection.execute("PRAGMA synchronous=NORMAL")
            return Db(connection, "sqlite")
        import psycopg2  # installed with dagster-postgres

        # SQLAlchemy's spelling (what Dagster's storage needs) works too: one URL for both.
        url = "postgresql" + self.url[self.url.index(":") :]
        try:
            pg = psycopg2.connect(url, application_name=_holder()[:63])
        except psycopg2.OperationalError as error:
            # libpq's message names host and port, never the password; keep its first line.
            reason = str(error).strip().splitlines()[0] if str(error).strip() else "refused"
            raise StateUnavailable(f"state store {self.describe()} unavailable: {reason}") from None
        pg.autocommit = True
        db = Db(pg, "postgres")
        if not tables:
            return db
        try:
            db.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
        except psycopg2.errors.UniqueViolation:
            pass  # two runs creating the schema at the same moment: the other one won
        db.execute(f"SET search_path TO {self.schema}")
        return db

    @contextmanager
    def collection_locks(self, collections: Iterable[str]) -> Iterator[None]:
        """One ingest at a time per collection: two runs writing the same collection would race on
        its pages and journal rows. A run that finds one locked stops before doing anything."""
        names = sorted(set(collections))  # a fixed order: overlapping runs cannot deadlock
        if self.url is None:
            with ExitStack() as held:
                for name in names:
                    handle = held.enter_context(self._lock_file(f"collection {name}"))
                    _flock(handle, blocking=False, what=f"collection {name!r}")
                yield
            return
        db = self.connect(tables=False)
        try:
            for name in names:
                key = self._lock_key(f"collection {name}")
                if not db.execute("SELECT pg_try_advisory_lock(?, ?)", key).fetchone()[0]:
                    holder = db.execute(
                        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a"
                        " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted"
                        " AND l.classid::int = ? AND l.objid::int = ?",
                        key,
                    ).fetchone()
                    raise _busy(f"collection {name!r}", holder[0] if holder else None)
            yield
        finally:
            db.close()  # closing the session releases its advisory locks

    @contextmanager
    def page_writes(self) -> Iterator[None]:
        """Serializes page writing across runs. A page's text depends on other documents' rows
        (backlinks), so a run re-linking a neighbour must not overwrite a fresher version written
        by the run that owns it; writing pages is short, so waiting here costs little."""
        if self.url is None:
            with self._lock_file("page writes") as handle:
                _flock(handle, blocking=True, what="page writes")
                yield
            return
        db = self.connect(tables=False)
        try:
            db.execute("SELECT pg_advisory_lock(?, ?)", self._lock_key("page writes"))
            yield
        finally:
            db.close()

    @contextmanager
    def _lock_file(self, name: str) -> Iterator[IO[str]]:
        folder = self.state_dir / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256(name.encode()).hexdigest()[:16]
        with (folder / f"{digest}.lock").open("a+", encoding="utf-8") as handle:
            yield handle

    def _lock_key(self, name: str) -> tuple[int, int]:
        """Two signed 32-bit ints: this schema's namespace, and the lock's name within it."""

        def int32(text: str) -> int:
            return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big", signed=True)

        return int32(self.schema), int32(name)


def _holder() -> str:
    return f"wiki_assets pid {os.getpid()} on {socket.gethostname()}"


def _busy(what: str, holder: str | None) -> CollectionBusy:
    return CollectionBusy(
        f"{what} is being ingested by another run ({holder or 'another process'}); "
        "wait for it to finish, then run again"
    )


def _flock(handle: IO[str], *, blocking: bool, what: str) -> None:
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        handle.seek(0)
        raise _busy(what, handle.read().strip() or None) from None
    try:  # who holds it, for the message of a run that finds it held: no need on a full disk
        handle.seek(0)
        handle.truncate()
        handle.write(_holder())
        handle.flush()
    except OSError:
        pass
