"""A ``wiki_pages`` run's metadata keys (:class:`~.recording.Key`), each made from the engine's
declaration of its figure (:mod:`wiki_assets.engine.ingestion.figures`,
:mod:`~wiki_assets.engine.ingestion.model_figures`): its name, its type, where it is recorded and
how. Every reader (``runs``, the plan's estimate, the check ``models_in_service``) reads with them.
The other assets' and the checks' keys are in :mod:`.materializations`.

- :data:`RUN`: a ``wiki_pages`` run's figures, one observation per run (also when it stops early):
  its outcome in words (:data:`HEADLINE`), the figures tuning runs are compared by as numbers the
  UI plots (:data:`PLOTTED`), the rest in one-row tables (:data:`DIALS_TABLE`,
  :data:`DETAILS_TABLE`) and what went wrong, listed (:data:`OUTCOME`);
- :data:`MODELS_TABLE`: a row per model (its :class:`ModelStats`), the rest of each model's
  figures in :data:`MODEL_DETAILS_TABLE`.

Readers take recorded metadata through :func:`plain`, which reads a table's cells as keys of their
own (``claim_size``; ``model/<name>/docs``). :data:`REPORT_FILE` names the file of the run's whole
report (:mod:`~wiki_assets.engine.ingestion.kept_reports`): the CLI's JSON is that report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import dagster as dg

from wiki_assets.defs.metadata.recording import Key, Table, build
from wiki_assets.engine.ingestion import figures as run
from wiki_assets.engine.ingestion import model_figures as model
from wiki_assets.engine.ingestion.figure import Figure, Place
from wiki_assets.engine.ingestion.figures import MAX_LISTED_FAILURES
from wiki_assets.engine.ingestion.report import IngestReport, ModelRun

__all__ = ["MAX_LISTED_FAILURES"]

S = TypeVar("S")


def plain(metadata: Mapping[str, dg.MetadataValue]) -> dict[str, Any]:
    """Recorded metadata as plain values, as readers take it: the cells of a table of
    :data:`TABLES` as keys of their own."""
    values: dict[str, Any] = {}
    for name, value in metadata.items():
        table = TABLES.get(name)
        if table is not None and isinstance(value, dg.TableMetadataValue):
            values.update(table.cells(value))
        else:
            values[name] = value.value
    return values


def key(figure: Figure[S]) -> Key[S]:
    """The metadata key of ``figure``: recorded as the JSON has it, or as its ``recorded`` says."""
    recorded = figure.recorded
    if recorded is None:
        return Key[S](figure.name, figure.kind, figure.read)
    return Key[S](figure.name, recorded.kind, lambda source: recorded.of(figure.read(source)))


_RUN_FIGURES: tuple[Figure[IngestReport], ...] = (*run.RUN_FIGURES, *run.DIAL_FIGURES)
_MODEL_FIGURES: tuple[Figure[Any], ...] = model.MODEL_FIGURES
KEYS: dict[Figure[Any], Key[Any]] = {
    f: key(f) for f in (*_RUN_FIGURES, *_MODEL_FIGURES) if f.place is not None
}


def _placed(place: Place, figures: tuple[Figure[S], ...]) -> tuple[Key[S], ...]:
    return tuple(KEYS[figure] for figure in figures if figure.place is place)


# A run's figures and dials (one observation of wiki_pages per run)
HEADLINE = _placed(Place.HEADLINE, _RUN_FIGURES)  # first, in words (the run's page shows it)
PLOTTED = _placed(Place.PLOTTED, _RUN_FIGURES)  # numbers, so the UI plots each (a chart per key)
DETAILS = _placed(Place.DETAILS, _RUN_FIGURES)  # the rest of the run's figures, in one row
DIALS = _placed(Place.DIALS, _RUN_FIGURES)
OUTCOME = _placed(Place.LISTED, _RUN_FIGURES)  # after the models' table: what went wrong
FIGURES = (*PLOTTED, *DETAILS)
RUN = (*HEADLINE, *FIGURES, *DIALS, *OUTCOME)  # every run key (DETAILS, DIALS: from their tables)
DETAILS_TABLE = Table[IngestReport](Place.DETAILS.value, DETAILS)
DIALS_TABLE = Table[IngestReport](Place.DIALS.value, DIALS)
# The keys readers name.
OUTCOME_TEXT, MODELS_OUT = KEYS[run.OUTCOME], KEYS[run.MODELS_OUT]
COUNT, SKIPPED, FAILED = KEYS[run.COUNT], KEYS[run.SKIPPED], KEYS[run.FAILED]
UNFINISHED, DURATION_S, DOCS_PER_SEC = (
    KEYS[run.UNFINISHED], KEYS[run.DURATION_S], KEYS[run.DOCS_PER_SEC]
)  # fmt: skip
REQUESTS_PER_DOC, VERIFIED_SHARE = KEYS[run.REQUESTS_PER_DOC], KEYS[run.VERIFIED_SHARE]
FLAGGED, STOPPED_BY = KEYS[run.FLAGGED], KEYS[run.STOPPED_BY]
EMBEDDING_MODEL, EMBEDDED = KEYS[run.EMBEDDING_MODEL], KEYS[run.EMBEDDED]
EMBEDDING_S = KEYS[run.EMBEDDING_S]
WORKERS_PER_MODEL, WORKERS_AUTO = KEYS[run.WORKERS_PER_MODEL], KEYS[run.WORKERS_AUTO]
# The run's whole report, every failure listed (OUTCOME lists the first MAX_LISTED_FAILURES): a
# path in the wiki's state folder, recorded last.
REPORT_FILE = "report_file"


# Each model's figures in the same event: one table, a row per model, the columns a screen shows;
# the rest of each model's figures in another. An empty column (a figure the run did not have)
# is left out of the table.
MODEL_PREFIX = "model/"
MODEL_NAME = KEYS[model.NAME]  # the endpoint's name: the row's
MODEL_BRIEF = _placed(Place.MODELS, model.MODEL_FIGURES)
MODEL_DETAILS = (MODEL_NAME, *_placed(Place.MODEL_DETAILS, model.MODEL_FIGURES))
MODEL = (*MODEL_BRIEF, *MODEL_DETAILS[1:])
MODEL_FLAGS = {reason: KEYS[figure] for reason, figure in model.FLAGGED_BY.items()}
MODEL_DOCS, MODEL_WORKERS = KEYS[model.DOCS], KEYS[model.WORKERS]
MODEL_PROMPT_TOKENS = KEYS[model.PROMPT_TOKENS]
MODEL_COMPLETION_TOKENS = KEYS[model.COMPLETION_TOKENS]
MODEL_FLAGGED, MODEL_DOCS_PER_SEC = KEYS[model.FLAGGED], KEYS[model.DOCS_PER_SEC]
MODEL_VERIFIED_SHARE = KEYS[model.VERIFIED_SHARE]
MODEL_SUPPORTED_SHARE, MODEL_SERVICE = KEYS[model.SUPPORTED_SHARE], KEYS[model.SERVICE]
MODELS_TABLE = Table[ModelRun](
    Place.MODELS.value, MODEL_BRIEF, row_name=MODEL_NAME.name, prefix=MODEL_PREFIX
)
MODEL_DETAILS_TABLE = Table[ModelRun](
    Place.MODEL_DETAILS.value, MODEL_DETAILS, row_name=MODEL_NAME.name, prefix=MODEL_PREFIX
)


def model_prefix(name: str) -> str:
    return f"{MODEL_PREFIX}{name}/"


def run_metadata(report: IngestReport) -> dict[str, dg.MetadataValue]:
    """The run's figures, once per run: Int and Float values (which the UI plots) for the figures
    tuning runs are compared by, one table each for the other figures, the dials and the models,
    JSON only for the list of failures."""
    models = [ModelRun(report, m) for m in report.models]
    return {
        **build(HEADLINE, report),
        **build(PLOTTED, report),
        MODELS_TABLE.name: MODELS_TABLE.value(models),
        DETAILS_TABLE.name: DETAILS_TABLE.value([report]),
        DIALS_TABLE.name: DIALS_TABLE.value([report]),
        MODEL_DETAILS_TABLE.name: MODEL_DETAILS_TABLE.value(models),
        **build(OUTCOME, report),
    }


def models_of(metadata: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per model name, its figures in a run's metadata as :func:`plain` reads them
    (``model/<name>/<figure>``), by figure: what the :data:`MODEL` keys read."""
    models: dict[str, dict[str, Any]] = {}
    for name, value in metadata.items():
        parts = name.split("/")
        if len(parts) == 3 and f"{parts[0]}/" == MODEL_PREFIX:
            models.setdefault(parts[1], {})[parts[2]] = value
    return models


TABLES: dict[str, Table[Any]] = {
    table.name: table for table in (DETAILS_TABLE, DIALS_TABLE, MODELS_TABLE, MODEL_DETAILS_TABLE)
}
