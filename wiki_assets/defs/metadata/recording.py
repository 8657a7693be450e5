"""The machinery that turns what the engine reports into Dagster metadata and back: how one key is
declared (:class:`Key`: its name, its type and how it is built from what the engine reports),
recorded (:func:`build`; :class:`Table`: a key holding a table of keys) and read back
(:meth:`Key.read`, :meth:`Table.cells`). It declares no key: they are in :mod:`.run_figures` (a
``wiki_pages`` run's) and :mod:`.materializations` (the other assets' and the checks')."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Generic, TypeVar

import dagster as dg

S = TypeVar("S")


class Markdown(str):
    """A key type: text the UI renders as markdown."""


# A key's type: the Dagster value it is recorded as (Int, Float and Bool are what the UI plots).
_VALUES: dict[type, Callable[[Any], dg.MetadataValue]] = {
    int: lambda value: dg.MetadataValue.int(int(value)),
    float: lambda value: dg.MetadataValue.float(float(value)),
    bool: lambda value: dg.MetadataValue.bool(bool(value)),
    str: lambda value: dg.MetadataValue.text(str(value)),
    list: lambda value: dg.MetadataValue.json(list(value)),
    Markdown: lambda value: dg.MetadataValue.md(str(value)),
    PurePath: lambda value: dg.MetadataValue.path(str(value)),
}
# What a value read back may be, per type (an Int read where a Float is expected still counts).
_READ: dict[type, tuple[type, ...]] = {
    int: (int,),
    float: (int, float),
    bool: (bool,),
    str: (str,),
    list: (list,),
    Markdown: (str,),
    PurePath: (str,),
}
# A table column's type, per key type (a table holds only these).
_COLUMNS: dict[type, str] = {int: "int", float: "float", bool: "bool", str: "string"}


@dataclass(frozen=True)
class Key(Generic[S]):
    """One metadata key: ``name`` (the UI's label, or a table's column), the ``type`` it is
    recorded as, and ``of``, its value from its source (``None``: not recorded for that
    source)."""

    name: str
    type: type
    of: Callable[[S], Any]

    def __post_init__(self) -> None:
        if self.type not in _VALUES:
            raise TypeError(f"metadata key {self.name!r}: no metadata value for {self.type}")

    def value(self, source: S) -> dg.MetadataValue | None:
        value = self.of(source)
        return None if value is None else _VALUES[self.type](value)

    def cell(self, source: S) -> str | int | float | bool | None:
        """This key's value as a table cell."""
        value = self.of(source)
        return None if value is None else self.type(value)

    def read(self, values: Mapping[str, Any]) -> Any:
        """This key's value in recorded metadata (as plain values,
        :func:`.run_figures.plain`), or ``None`` when it is absent or not of its type."""
        value = values.get(self.name)
        if isinstance(value, bool) and self.type is not bool:
            return None
        return value if isinstance(value, _READ[self.type]) else None


def build(keys: Iterable[Key[S]], source: S, prefix: str = "") -> dict[str, dg.MetadataValue]:
    """The recorded values of ``keys`` for ``source``, in order, each name after ``prefix``."""
    values = {}
    for key in keys:
        value = key.value(source)
        if value is not None:
            values[prefix + key.name] = value
    return values


@dataclass(frozen=True)
class Table(Generic[S]):
    """One metadata key holding a table: a row per source, a column per key of ``columns``.

    Read back (:func:`.run_figures.plain`), a one-row table's cells are keys of their own
    (``claim_size``), and a table whose rows are named by their ``row_name`` column gives each
    other cell as ``<prefix><row name>/<column>`` (``model/sim/docs``). A column that is empty in
    every row is left out, so a figure the engine does not report (yet) costs nothing."""

    name: str
    columns: tuple[Key[S], ...]
    row_name: str | None = None  # the column that names a row; None: a table of one row
    prefix: str = ""

    def __post_init__(self) -> None:
        for column in self.columns:
            if column.type not in _COLUMNS:
                raise TypeError(f"table {self.name!r}: no column type for {column.name!r}")

    def value(self, sources: Sequence[S]) -> dg.TableMetadataValue:
        rows = [{column.name: column.cell(source) for column in self.columns} for source in sources]
        used = [c for c in self.columns if any(row[c.name] is not None for row in rows)]
        schema = dg.TableSchema(columns=[dg.TableColumn(c.name, _COLUMNS[c.type]) for c in used])
        return dg.MetadataValue.table(
            [dg.TableRecord({c.name: row[c.name] for c in used}) for row in rows], schema
        )

    def cells(self, table: dg.TableMetadataValue) -> dict[str, Any]:
        """The table's cells as plain keys (see the class)."""
        values: dict[str, Any] = {}
        for record in table.records:
            data = {name: cell for name, cell in record.data.items() if cell is not None}
            if self.row_name is None:
                values.update(data)
                continue
            row = data.pop(self.row_name, None)
            if row is not None:
                values.update({f"{self.prefix}{row}/{name}": cell for name, cell in data.items()})
        return values
