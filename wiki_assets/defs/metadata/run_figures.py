"""A ``wiki_pages`` run's figures, one definition per key (:class:`~.recording.Key`): its name, its
type and how it is built from the engine's report; every reader (``runs``, the plan's estimate, the
check ``models_in_service``) reads with them. The other assets' and the checks' keys are in
:mod:`.materializations`.

- :data:`RUN`: a ``wiki_pages`` run's figures, one observation per run (also when it stops early):
  its outcome in words (:data:`HEADLINE`), the figures tuning runs are compared by as numbers the
  UI plots (:data:`PLOTTED`), the rest in one-row tables (:data:`DIALS_TABLE`,
  :data:`DETAILS_TABLE`);
- :data:`MODELS_TABLE`: a row per model (its :class:`ModelStats`), the rest of each model's
  figures in :data:`MODEL_DETAILS_TABLE`.

Readers take recorded metadata through :func:`plain`, which reads a table's cells as keys of their
own (``claim_size``; ``model/<name>/docs``). At most :data:`MAX_LISTED_FAILURES` failures are kept;
the CLI's JSON is the engine's report itself, never read back from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg

from wiki_assets.defs.metadata.recording import Key, Table, build
from wiki_assets.engine.config import AUTO
from wiki_assets.engine.ingestion.report import MODEL_FIGURES, RUN_FIGURES, IngestReport, ModelRun
from wiki_assets.engine.quality import Reason

MAX_LISTED_FAILURES = 200
"""Failures listed in ``failed_documents`` at most; the ``failed`` count has them all."""


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


# A run's figures and dials (one observation of wiki_pages per run)

_FIGURES = {figure.name: figure for figure in RUN_FIGURES}


def _figure(name: str, kind: type) -> Key[IngestReport]:
    """The key of the report's figure ``name``, named and valued as the JSON's (RUN_FIGURES)."""
    return Key[IngestReport](name, kind, _FIGURES[name].read)


COUNT = _figure("count", int)
SKIPPED = _figure("skipped", int)
FAILED = Key[IngestReport]("failed", int, lambda r: len(r.failed))
# Files that hold no text (images, archives, scans, locked or broken files): not failures.
NO_TEXT = Key[IngestReport]("no_text", int, lambda r: len(r.no_text))
REMOVED = _figure("removed", int)
RECOVERED = _figure("recovered", int)
REQUEUED = _figure("requeued", int)
UNFINISHED = _figure("unfinished", int)
HEDGED = _figure("hedged", int)
DURATION_S = _figure("duration_s", float)
# No rate for a run that summarized nothing: a 0 beside real runs would be a false point on the
# plot that tuning runs are compared on (its ``outcome`` says "up to date").
DOCS_PER_SEC = Key[IngestReport](
    "docs_per_sec", float, lambda r: round(r.docs_per_sec, 3) if r.count else None
)
# Requests per summarized document (parts of long documents, retries, hedges, second opinions).
REQUESTS_PER_DOC = _figure("requests_per_doc", float)
REQUESTS = _figure("requests", int)
# Links by meaning: model, documents embedded, seconds that took and waited, links added at the end.
MEANING = tuple(_figure(name, kind) for name, kind in (("embedding_model", str), ("embedded", int),
    ("embedding_s", float), ("embedding_wait_s", float), ("links_by_meaning", int)))  # fmt: skip
EMBEDDING_MODEL, EMBEDDED, EMBEDDING_S = MEANING[:3]
PROMPT_TOKENS = _figure("prompt_tokens", int)
COMPLETION_TOKENS = _figure("completion_tokens", int)
HIT_MAX_TOKENS = _figure("hit_max_tokens", int)
PARTITIONS = Key[IngestReport]("partitions", int, lambda r: len(r.collections))
FLAGGED = _figure("flagged", int)
SECOND_OPINIONS = _figure("second_opinions", int)
SECOND_OPINIONS_KEPT = _figure("second_opinions_kept", int)
# Flagged pages that got no second opinion, and why (opinions.py's reasons: budget, ...).
SECOND_OPINIONS_SKIPPED = Key[IngestReport](
    "second_opinions_skipped", int, lambda r: sum(r.tally.second_opinions_skipped.values())
)
SECOND_OPINIONS_SKIPPED_WHY = Key[IngestReport](
    "second_opinions_skipped_why", str, lambda r: _why(r.tally.second_opinions_skipped)
)
VERIFIED_SHARE = _figure("verified_share", float)
# Of the checked sentences of the run's descriptions and summaries, those their documents back.
SUPPORTED_SHARE = _figure("supported_share", float)
JUDGEMENTS = _figure("judgements", int)
# Pages offered to a judge that got no verdict, and why (judges.py's reasons: budget, ...).
JUDGEMENTS_SKIPPED_WHY = Key[IngestReport](
    "judgements_skipped_why", str, lambda r: _why(r.tally.judgements_skipped)
)
# The dials. 'auto' is a flag; where it settled is each model's workers. A fixed count is a number.
WORKERS_AUTO = Key[IngestReport]("workers_auto", bool, lambda r: r.dials.workers_per_model == AUTO)
MAX_WORKERS = Key[IngestReport]("max_workers", int, lambda r: r.dials.max_workers)
CLAIM_SIZE = Key[IngestReport]("claim_size", int, lambda r: r.dials.claim_size)
FLUSH_SECONDS = Key[IngestReport]("flush_seconds", float, lambda r: r.dials.flush_seconds)
MAX_TOKENS = Key[IngestReport]("max_tokens", int, lambda r: r.dials.max_tokens)
FORCE = Key[IngestReport]("force", bool, lambda r: r.dials.force)
LANGUAGE = Key[IngestReport]("language", str, lambda r: r.dials.language)
WORKERS_PER_MODEL = Key[IngestReport](
    "workers_per_model",
    int,
    lambda r: None if r.dials.workers_per_model == AUTO else r.dials.workers_per_model,
)
FLAGGED_PAGES = Key[IngestReport]("flagged_pages", str, lambda r: r.dials.flagged_pages)
SECOND_OPINION_SHARE = Key[IngestReport](
    "second_opinion_share", float, lambda r: r.dials.second_opinion_share
)
JUDGE_SHARE = Key[IngestReport]("judge_share", float, lambda r: r.dials.judge_share)
JUDGE = Key[IngestReport]("judge", str, lambda r: r.dials.judge or None)
REDO_MODELS = Key[IngestReport](
    "redo_models", str, lambda r: ", ".join(r.dials.redo_models) or None
)
# After the models' table: what went wrong.
FAILED_DOCUMENTS = Key[IngestReport](
    "failed_documents", list, lambda r: r.failed[:MAX_LISTED_FAILURES]
)  # path and reason
NO_TEXT_FILES = Key[IngestReport](
    "no_text_files", list, lambda r: r.no_text[:MAX_LISTED_FAILURES] or None
)  # path and why
STOPPED_BY = Key[IngestReport]("stopped_by", str, lambda r: r.stopped_by)  # SIGTERM, SIGINT


def _outcome(r: IngestReport) -> str:
    """The run in words: what it summarized, or that everything was up to date; what failed,
    and what it left for the next run."""
    if r.count == 0 and not r.failed and not r.tally.stopped:
        done = "up to date: nothing to summarize"
    else:
        done = f"{r.count} summarized"
    parts = [done]
    if r.failed:
        parts.append(f"{len(r.failed)} failed")
    if r.no_text:
        parts.append(f"{len(r.no_text)} hold no text")
    if r.tally.stopped:
        parts.append(f"stopped, {r.unfinished} left for the next run")
    return " · ".join(parts)


# First in the run's metadata, in words: what it did, and any model that left it (shown on the
# run's page, where a log line would scroll away).
OUTCOME_TEXT = Key[IngestReport]("outcome", str, _outcome)
MODELS_OUT = Key[IngestReport]("models_out", str, lambda r: "; ".join(r.models_out()) or None)
HEADLINE = (OUTCOME_TEXT, MODELS_OUT)

# What tuning runs are compared by: numbers, so the UI plots each (one chart per key).
PLOTTED = (
    COUNT,
    FAILED,
    DURATION_S,
    DOCS_PER_SEC,
    REQUESTS_PER_DOC,
    PROMPT_TOKENS,
    COMPLETION_TOKENS,
    HIT_MAX_TOKENS,
    FLAGGED,
    VERIFIED_SHARE,
    SUPPORTED_SHARE,
)
# The rest of the run's figures, in one row (shown, not plotted).
DETAILS = (
    SKIPPED,
    NO_TEXT,
    REMOVED,
    RECOVERED,
    REQUEUED,
    UNFINISHED,
    HEDGED,
    REQUESTS,
    SECOND_OPINIONS,
    SECOND_OPINIONS_KEPT,
    SECOND_OPINIONS_SKIPPED,
    SECOND_OPINIONS_SKIPPED_WHY,
    JUDGEMENTS,
    JUDGEMENTS_SKIPPED_WHY,
    *MEANING,
    PARTITIONS,
)
DIALS = (
    WORKERS_AUTO, MAX_WORKERS, CLAIM_SIZE, FLUSH_SECONDS, MAX_TOKENS, FORCE, LANGUAGE,
    WORKERS_PER_MODEL, FLAGGED_PAGES, SECOND_OPINION_SHARE, JUDGE_SHARE, JUDGE, REDO_MODELS,
)  # fmt: skip
FIGURES = (*PLOTTED, *DETAILS)
OUTCOME = (FAILED_DOCUMENTS, NO_TEXT_FILES, STOPPED_BY)
RUN = (*HEADLINE, *FIGURES, *DIALS, *OUTCOME)  # every run key (DETAILS, DIALS: from their tables)
DETAILS_TABLE = Table[IngestReport]("details", DETAILS)
DIALS_TABLE = Table[IngestReport]("dials", DIALS)


# Each model's figures in the same event: one table, a row per model


# A model's figures as the report's JSON reads them (MODEL_FIGURES): one column each. An empty
# column (a figure the run did not have) is left out of the table.
# fmt: off
MODEL_FIELDS: tuple[tuple[str, type], ...] = (
    ("model", str),  # the model id the endpoint serves
    ("docs", int), ("failed", int), ("garbage", int), ("errors", int), ("timeouts", int),
    ("breaker_trips", int), ("requests", int), ("answered", int), ("cut", int), ("parts", int),
    ("workers", int),  # where automatic concurrency settled, or the fixed count
    ("auto", bool), ("peak_workers", int), ("prompt_tokens", int), ("completion_tokens", int),
    ("hit_max_tokens", int), ("hedges", int), ("hedges_won", int),
    # The quality of its pages (wiki_assets.engine.quality).
    ("points", int), ("points_verified", int), ("flagged", int), ("second_opinions", int),
    ("second_opinions_kept", int),
    ("superseded", bool),  # its pages kept being replaced: it stopped taking new documents
    # Its pages' prose (quality/claims.py): sentences checked, and supported by their documents;
    # as a judge: pages of others judged, and its controls answered and right (judges.py).
    ("sentences_checked", int), ("sentences_supported", int), ("judgements", int),
    ("controls", int), ("controls_right", int),
)
# fmt: on


def _stat(field: str, kind: type) -> Key[ModelRun]:
    figure = next(figure for figure in MODEL_FIGURES if figure.name == field)

    def of(m: ModelRun) -> Any:
        value = figure.read(m)
        return _share(value) if kind is float else value

    return Key[ModelRun](field, kind, of)


def _flagged_by(reason: Reason) -> Key[ModelRun]:
    def of(m: ModelRun) -> int | None:  # (None: no model's page, so no column)
        flagged = any(reason in model.flags for model in m.report.models)
        return m.stats.flags.get(reason, 0) if flagged else None

    return Key[ModelRun](f"flagged_{reason}", int, of)


MODEL_PREFIX = "model/"
MODEL_NAME = Key[ModelRun]("name", str, lambda m: m.stats.name)  # the endpoint's name: the row's
MODEL_STATS = {key.name: key for key in (_stat(field, kind) for field, kind in MODEL_FIELDS)}
MODEL_ID = MODEL_STATS["model"]
MODEL_DOCS = MODEL_STATS["docs"]
MODEL_PROMPT_TOKENS = MODEL_STATS["prompt_tokens"]
MODEL_COMPLETION_TOKENS = MODEL_STATS["completion_tokens"]
MODEL_FLAGGED = MODEL_STATS["flagged"]
MODEL_DOCS_PER_SEC = Key[ModelRun](
    "docs_per_sec", float, lambda m: round(m.report.model_docs_per_sec(m.stats), 3)
)
MODEL_VERIFIED_SHARE = Key[ModelRun](
    "verified_share", float, lambda m: _share(m.stats.verified_share)
)
MODEL_FLAGGED_SHARE = Key[ModelRun]("flagged_share", float, lambda m: _share(m.stats.flagged_share))
# How often its prose is backed by its documents: the model that invents shows here.
MODEL_SUPPORTED_SHARE = Key[ModelRun](
    "supported_share", float, lambda m: _share(m.stats.supported_share)
)
# Its share of the fleet's busy time (requests' seconds in flight): what it did, parts and
# second opinions included, where docs counts only the pages it wrote.
MODEL_BUSY_SHARE = Key[ModelRun](
    "busy_share", float, lambda m: _share(m.report.busy_share(m.stats))
)
# How often each reason flagged one of the model's answers: flagged_<reason>, each reason that
# flagged an answer of the run (zero for the models it did not), so the table stays narrow.
MODEL_FLAGS = tuple(_flagged_by(reason) for reason in Reason)
# In service to the end, or why not (in words; the run's models_out says more).
MODEL_SERVICE = Key[ModelRun]("service", str, lambda m: m.stats.service)
# What a screen shows of each model: a few columns, its name first (the table scrolls no further
# than a screen); the rest in MODEL_DETAILS_TABLE.
# Its flagged share, not its count of flagged answers: those include its second opinions on
# other models' pages, and may outnumber its docs (the pages it wrote).
MODEL_BRIEF = (
    MODEL_NAME,
    MODEL_ID,
    MODEL_DOCS,
    MODEL_DOCS_PER_SEC,
    MODEL_STATS["workers"],
    MODEL_BUSY_SHARE,
    MODEL_STATS["failed"],
    MODEL_FLAGGED_SHARE,
    MODEL_VERIFIED_SHARE,
    MODEL_SERVICE,
)
MODEL_DETAILS = (
    MODEL_NAME,
    *(key for key in (*MODEL_STATS.values(), MODEL_SUPPORTED_SHARE) if key not in MODEL_BRIEF),
    *MODEL_FLAGS,
)
MODEL = (*MODEL_BRIEF, *MODEL_DETAILS[1:])
MODELS_TABLE = Table[ModelRun]("models", MODEL_BRIEF, row_name=MODEL_NAME.name, prefix=MODEL_PREFIX)
MODEL_DETAILS_TABLE = Table[ModelRun](
    "model_details", MODEL_DETAILS, row_name=MODEL_NAME.name, prefix=MODEL_PREFIX
)


def _share(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _why(counts: Mapping[str, int]) -> str | None:
    """``budget 3, run_done 2``: what was skipped, by why."""
    return ", ".join(f"{why} {n}" for why, n in sorted(counts.items())) or None


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
