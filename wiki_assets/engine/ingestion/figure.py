"""How a run's figure is declared (:class:`Figure`): its name, its type and unit, how it is read,
and where it is shown. The declarations themselves are in :mod:`.figures`; the Dagster layer
(``defs/metadata/run_figures.py``) and the CLI derive their metadata keys, JSON fields and
columns from them, so a figure's name is written once.

Where a figure is shown:

- the report's JSON (:func:`~.figures.report_json`): every figure with ``json`` (the default);
- the CLI's JSON after ``ingest``: those marked :attr:`Shown.CLI`;
- ``wiki-assets runs``: those marked :attr:`Shown.RUNS` are a column each (read back from the
  metadata), :attr:`Shown.BRIEF` also one of the brief view's, headed :attr:`Figure.header`;
- Dagster's metadata of the run: at its :class:`Place`, recorded as the JSON has it, or as its
  :class:`Recorded` says where the metadata cannot hold that (a list, counts by why).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum, Flag, auto
from typing import Any, Generic, TypeVar

R = TypeVar("R")


class Shown(Flag):
    """Where the CLI shows a figure, beside the report's JSON."""

    NONE = 0
    CLI = auto()  # a field of the CLI's JSON after ``ingest``
    RUNS = auto()  # a column of ``wiki-assets runs`` (``--wide``, ``--json``)
    BRIEF = auto()  # a column of the brief view ``wiki-assets runs`` prints by default


class Place(Enum):
    """Where a run's metadata shows a figure. A table's value is its metadata key."""

    HEADLINE = "headline"  # first, in words: what the run did
    PLOTTED = "plotted"  # a number of its own, which the UI plots: what runs are compared by
    DETAILS = "details"  # a cell of the run's details table
    DIALS = "dials"  # a cell of the run's dials table
    MODELS = "models"  # a model's: a column of the models table, a screen wide
    MODEL_DETAILS = "model_details"  # a model's: a column of the table of its other figures
    LISTED = "listed"  # last, after the tables: what went wrong, listed


@dataclass(frozen=True)
class Recorded:
    """How the metadata records a figure whose JSON value it does not keep as it is."""

    kind: type  # what it is recorded as
    of: Callable[[Any], Any]  # from the JSON's value (None: not recorded)


def _count(value: list[Any] | Mapping[str, int]) -> int:
    return sum(value.values()) if isinstance(value, Mapping) else len(value)


COUNTED = Recorded(int, _count)
"""A list (failures, files with no text) or counts by why, recorded as how many: the metadata
plots the number and lists the items apart."""
IF_ANY = Recorded(float, lambda value: value or None)
"""A rate, not recorded where it is 0: a run that summarized nothing has no rate, and a 0 beside
real runs would be a false point on the plot tuning runs are compared on."""


@dataclass(frozen=True)
class Figure(Generic[R]):
    """One figure of a run (``R``: the report) or of a model in it (a
    :class:`~.report.ModelRun`): see the module for where it is shown."""

    name: str  # the JSON's field, the metadata's key, the column's name
    kind: type  # its type in the JSON: int, float, bool, str, list or dict
    about: str
    read: Callable[[R], Any]
    unit: str = ""  # "s", "documents/s", "share" (0 to 1), ... ("": a count of what it says)
    place: Place | None = None  # where the run's metadata shows it (None: it does not)
    recorded: Recorded | None = None  # how the metadata records it, where not as the JSON has it
    shown: Shown = Shown.NONE
    header: str = ""  # the CLI's column header where it is not the name
    json: bool = True  # in the report's JSON (False: a figure of the metadata alone)

    @property
    def column(self) -> str:
        """The header of its column in the CLI's tables."""
        return self.header or self.name


def rounded(value: float | None) -> float | None:
    """A share, a rate or seconds as the JSON and the metadata give them: to 3 places."""
    return None if value is None else round(value, 3)


def why(counts: Mapping[str, int]) -> str | None:
    """``budget 3, run_done 2``: what was skipped, by why (None: nothing was)."""
    return ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items())) or None
