"""A full disk fails a run with "no space left on device: <folder>", whatever error it surfaced
as: a task group's ``unhandled errors``, or SQLite's ``cannot rollback - no transaction is active``
raised over it by a ROLLBACK after SQLite had ended the transaction itself. Real errors: a write
to ``/dev/full`` (ENOSPC), and a database at its page limit (SQLITE_FULL, what a full disk
gives). A full tmpfs, and the runs after it, are in test_unfinished_runs.py."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

import pytest

from wiki_assets.engine.errors import NO_SPACE, disk_full, no_space_message
from wiki_assets.engine.related.storage import Transaction
from wiki_assets.engine.state.store import Db


def test_a_full_disk_is_named_whatever_error_it_surfaced_as(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    # A real ENOSPC, from a device that is always full.
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    with pytest.raises(OSError) as full:
        with open("/dev/full", "wb", buffering=0) as device:
            device.write(b"page")
    assert full.value.errno == errno.ENOSPC
    said = no_space_message(full.value, wiki)
    assert said is not None and said.startswith(f"{NO_SPACE}: {wiki} ")
    # Deep in a task group's errors, under the error raised while handling it.
    try:
        try:
            raise ExceptionGroup("unhandled errors in a TaskGroup (1 sub-exception)", [full.value])
        except ExceptionGroup:
            raise sqlite3.OperationalError("cannot rollback - no transaction is active")  # noqa: B904
    except sqlite3.OperationalError as hidden:
        assert disk_full(hidden) is full.value
        assert no_space_message(hidden, wiki) == said
    # A file it names outside the wiki: its own folder is named.
    elsewhere = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "home" / "x.db"))
    assert no_space_message(elsewhere, wiki) == said.replace(str(wiki), str(tmp_path / "home"))
    assert no_space_message(OSError(errno.EACCES, "Permission denied"), wiki) is None


@pytest.mark.parametrize("layer", ["state store", "related index"])
def test_a_full_database_is_not_hidden_by_a_failed_rollback(tmp_path: Path, layer: str) -> None:
    """SQLite ends a transaction itself when the database is full (here: its page limit, the
    same SQLITE_FULL a full disk gives); the error that surfaces is that, not "cannot rollback -
    no transaction is active" from the ROLLBACK after it."""
    connection = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE t (x BLOB)")
    connection.execute("PRAGMA max_page_count = 3")
    with pytest.raises(sqlite3.OperationalError) as raised:
        if layer == "state store":
            db = Db(connection, "sqlite")
            with db.transaction():
                db.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
        else:
            with Transaction(connection):
                connection.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    assert "database or disk is full" in str(raised.value)
    assert disk_full(raised.value) is raised.value
    assert no_space_message(raised.value, tmp_path).startswith(f"{NO_SPACE}: {tmp_path}")  # type: ignore[union-attr]
    assert not connection.in_transaction
    connection.execute("SELECT count(*) FROM t").fetchone()  # the connection still works
