"""The summarizer engine: a plain typed library with no Dagster imports.

One shared work queue feeds every model's workers; each worker claims a few documents at a time and
comes back for more when it is done, so no model ever waits for another. Results are journaled the
moment they return and written to the wiki on a timer; the state that runs share (journal, locks,
fleet-wide model slots) lives in a :class:`StateStore`, SQLite by default or PostgreSQL when several
machines run at once. The Dagster layer (``wiki_assets.defs``) is a thin adapter over
:func:`ingest`.

The public names are listed once, in ``__init__.pyi`` beside this file: type checkers read them
there, and each is imported from the module it names when first used (PEP 562), so a process that
needs one part of the engine, such as the helper process that answers link candidates ahead of a run
(:mod:`~wiki_assets.engine.related.helper`), does not import ``openai`` and the dispatch with it.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any


def _public_names() -> dict[str, str]:
    """Each public name and the module it comes from, as ``__init__.pyi`` imports them."""
    stub = ast.parse(Path(__file__).with_suffix(".pyi").read_text(encoding="utf-8"))
    return {
        alias.asname or alias.name: statement.module
        for statement in stub.body
        if isinstance(statement, ast.ImportFrom) and statement.module
        for alias in statement.names
    }


_HOME = _public_names()
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
