"""A document's row in the journal: its status, what a run reads of it (:class:`Entry`), and how
it is written (:data:`UPSERT`, with :func:`to_row`'s parameters) and read back
(:func:`from_row`).

The ``documents`` table's columns are :class:`Entry`'s fields, in their order, and ``updated``
after them: the definition (:data:`TABLE_COLUMNS`), the column list (:data:`COLUMNS`) and the
upsert are all derived from the class, so a new field is one line there; a field stored as JSON
text says so in its metadata (``stored_as``), and :func:`to_row` and :func:`from_row` convert it.
"""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field, fields
from typing import Any

SUMMARIZED = "summarized"  # the model answered; the page is not on disk yet
WRITTEN = "written"  # the page is on disk
FAILED = "failed"
NO_TEXT = "no_text"  # the file holds no text (the reason says why): looked at again once it changes

# A field's metadata key for how its column stores it: every column is TEXT, and a field marked
# "json" is a value encoded as JSON text (written by to_row, decoded by from_row).
_STORED_AS = "stored_as"


@dataclass(frozen=True, slots=True)
class Entry:
    path: str  # the table's key
    collection: str
    content_hash: str
    fingerprint: str
    status: str
    page: str | None
    model: str | None
    result: dict[str, Any] | None = field(metadata={_STORED_AS: "json"})
    reason: str | None = None


_FIELDS = tuple(f.name for f in fields(Entry))
_JSON = frozenset(f.name for f in fields(Entry) if f.metadata.get(_STORED_AS) == "json")
_KEY = _FIELDS[0]
RESULT_AT = _FIELDS.index("result")  # where a row of :func:`to_row` holds the result's JSON text
_UPDATED = "updated"  # epoch seconds of the row's last write: the table's, not the entry's

COLUMNS = ", ".join(_FIELDS)
"""The columns a query reads an :class:`Entry` from (:func:`from_row`), in its fields' order."""
BARE_COLUMNS = ", ".join("NULL" if name in _JSON else name for name in _FIELDS)
""":data:`COLUMNS` but the fields stored as JSON, read as None: an entry without its result, for
a reader that needs none (no JSON decoded)."""


def _table_columns() -> str:
    lines = []
    for f in fields(Entry):
        if f.name == _KEY:
            lines.append(f"{f.name} TEXT PRIMARY KEY")
        else:  # every field is stored as text; one whose type admits None may be NULL
            lines.append(f"{f.name} TEXT" + ("" if "None" in str(f.type) else " NOT NULL"))
    lines.append(f"{_UPDATED} {{float}} NOT NULL")
    return ",\n    ".join(lines)


TABLE_COLUMNS = _table_columns()
"""The ``documents`` table's column definitions: one per :class:`Entry` field, then ``updated``
(``{float}``: the store's 64-bit float type, filled in by ``Db.create_tables``)."""


_WRITTEN = (*_FIELDS, _UPDATED)
UPSERT = (
    f"INSERT INTO documents ({', '.join(_WRITTEN)}) VALUES ({', '.join('?' * len(_WRITTEN))})"
    f" ON CONFLICT ({_KEY}) DO UPDATE SET "
    + ", ".join(f"{name} = excluded.{name}" for name in _WRITTEN if name != _KEY)
)
"""A document's row, new or replacing the one it had: the parameters of :func:`to_row`."""


_VALUES = operator.attrgetter(*_FIELDS)  # an entry's fields in their order, in one call
# (dataclasses.astuple would deep-copy the result on the way)
_JSON_AT = tuple(at for at, name in enumerate(_FIELDS) if name in _JSON)


def to_row(entry: Entry, updated: float) -> tuple[Any, ...]:
    """The parameters of :data:`UPSERT` (``updated``: epoch seconds)."""
    row = [*_VALUES(entry), updated]
    for at in _JSON_AT:
        if row[at] is not None:
            row[at] = stored_json(row[at])
    return tuple(row)


def stored_json(value: Any) -> str:
    """A field stored as JSON (``stored_as``), as its column holds it: the journal compares a
    result with its row by this text."""
    return json.dumps(value, ensure_ascii=False)


def from_row(row: tuple[Any, ...]) -> Entry:
    """The entry a row of :data:`COLUMNS` holds."""
    if len(row) != len(_FIELDS):
        raise ValueError(f"a row of {len(row)} columns is no entry of {len(_FIELDS)} fields")
    values = list(row)
    for at in _JSON_AT:
        if values[at] is not None:
            values[at] = json.loads(values[at])
    return Entry(*values)
