"""The metadata the assets record, one definition per key: its name, its type and how it is built
from what the engine reports. The assets write with these definitions and every reader (``runs``,
the plan's estimate) reads with them, so a key is spelled in one place.

- :data:`RUN`: a run's figures and dials, recorded once per run as an observation of ``wiki_pages``
  (on the step's failure when the run stops early), from the engine's :class:`IngestReport`;
- :data:`MODEL`: each model's figures in the same event, ``model/<name>/<figure>``, from its
  :class:`ModelStats`;
- :data:`PARTITION`: each ``wiki_pages`` partition's own counts, on its materialization;
- :data:`INDEX`: ``wiki_index``'s figures; :data:`SYNCED`: ``synced_documents``' per collection.

Metadata is what the UI shows and plots; it keeps at most :data:`MAX_LISTED_FAILURES` failures.
The CLI's JSON is the engine's report itself, never read back from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Generic, NamedTuple, TypeVar

import dagster as dg

from wiki_assets.engine import CollectionState
from wiki_assets.engine.config import AUTO
from wiki_assets.engine.corpus import collection_of
from wiki_assets.engine.quality import Reason
from wiki_assets.engine.report import IngestReport, ModelStats
from wiki_assets.engine.wiki.index import IndexReport

S = TypeVar("S")

MAX_LISTED_FAILURES = 200
"""Failures listed in ``failed_documents`` at most; the ``failed`` count has them all."""

# A key's type: the Dagster value it is recorded as (Int, Float and Bool are what the UI plots).
_VALUES: dict[type, Callable[[Any], dg.MetadataValue]] = {
    int: lambda value: dg.MetadataValue.int(int(value)),
    float: lambda value: dg.MetadataValue.float(float(value)),
    bool: lambda value: dg.MetadataValue.bool(bool(value)),
    str: lambda value: dg.MetadataValue.text(str(value)),
    list: lambda value: dg.MetadataValue.json(list(value)),
}
# What a value read back may be, per type (an Int read where a Float is expected still counts).
_READ: dict[type, tuple[type, ...]] = {
    int: (int,),
    float: (int, float),
    bool: (bool,),
    str: (str,),
    list: (list,),
}


@dataclass(frozen=True)
class Key(Generic[S]):
    """One metadata key: ``name`` (the UI's label; for a model key the figure after
    ``model/<name>/``), the ``type`` it is recorded as, and ``of``, its value from its source
    (``None``: not recorded for that source)."""

    name: str
    type: type
    of: Callable[[S], Any]

    def __post_init__(self) -> None:
        if self.type not in _VALUES:
            raise TypeError(f"metadata key {self.name!r}: no metadata value for {self.type}")

    def value(self, source: S) -> dg.MetadataValue | None:
        value = self.of(source)
        return None if value is None else _VALUES[self.type](value)

    def read(self, values: Mapping[str, Any]) -> Any:
        """This key's value in recorded metadata (as plain values, ``MetadataValue.value``), or
        ``None`` when it is absent or not of its type."""
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


def plain(metadata: Mapping[str, dg.MetadataValue]) -> dict[str, Any]:
    """Recorded metadata as plain values, as readers take it."""
    return {name: value.value for name, value in metadata.items()}


# --------------------------------------------------------------------------------------------------
# A run's figures and dials (one observation of wiki_pages per run)

COUNT = Key[IngestReport]("count", int, lambda r: r.count)
SKIPPED = Key[IngestReport]("skipped", int, lambda r: r.skipped)
FAILED = Key[IngestReport]("failed", int, lambda r: len(r.failed))
REMOVED = Key[IngestReport]("removed", int, lambda r: r.removed)
RECOVERED = Key[IngestReport]("recovered", int, lambda r: r.recovered)
REQUEUED = Key[IngestReport]("requeued", int, lambda r: r.requeued)
UNFINISHED = Key[IngestReport]("unfinished", int, lambda r: r.unfinished)
HEDGED = Key[IngestReport]("hedged", int, lambda r: r.hedged)
DURATION_S = Key[IngestReport]("duration_s", float, lambda r: round(r.duration_s, 3))
DOCS_PER_SEC = Key[IngestReport]("docs_per_sec", float, lambda r: round(r.docs_per_sec, 3))
PROMPT_TOKENS = Key[IngestReport]("prompt_tokens", int, lambda r: r.prompt_tokens)
COMPLETION_TOKENS = Key[IngestReport]("completion_tokens", int, lambda r: r.completion_tokens)
HIT_MAX_TOKENS = Key[IngestReport]("hit_max_tokens", int, lambda r: r.hit_max_tokens)
PARTITIONS = Key[IngestReport]("partitions", int, lambda r: len(r.collections))
FLAGGED = Key[IngestReport]("flagged", int, lambda r: r.flagged)
SECOND_OPINIONS = Key[IngestReport]("second_opinions", int, lambda r: r.second_opinions)
SECOND_OPINIONS_KEPT = Key[IngestReport](
    "second_opinions_kept", int, lambda r: r.second_opinions_kept
)
VERIFIED_SHARE = Key[IngestReport]("verified_share", float, lambda r: _share(r.verified_share))
# The dials. 'auto' is a flag; where it settled is model/<name>/workers. A fixed count is a number.
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
REDO_MODELS = Key[IngestReport](
    "redo_models", str, lambda r: ", ".join(r.dials.redo_models) or None
)
# After the models' keys: what went wrong.
FAILED_DOCUMENTS = Key[IngestReport](
    "failed_documents", list, lambda r: r.failed[:MAX_LISTED_FAILURES]
)  # path and reason
STOPPED_BY = Key[IngestReport]("stopped_by", str, lambda r: r.stopped_by)  # SIGTERM, SIGINT

FIGURES = (
    COUNT,
    SKIPPED,
    FAILED,
    REMOVED,
    RECOVERED,
    REQUEUED,
    UNFINISHED,
    HEDGED,
    DURATION_S,
    DOCS_PER_SEC,
    PROMPT_TOKENS,
    COMPLETION_TOKENS,
    HIT_MAX_TOKENS,
    FLAGGED,
    VERIFIED_SHARE,
    SECOND_OPINIONS,
    SECOND_OPINIONS_KEPT,
    PARTITIONS,
)
DIALS = (
    WORKERS_AUTO,
    MAX_WORKERS,
    CLAIM_SIZE,
    FLUSH_SECONDS,
    MAX_TOKENS,
    FORCE,
    LANGUAGE,
    WORKERS_PER_MODEL,
    REDO_MODELS,
)
OUTCOME = (FAILED_DOCUMENTS, STOPPED_BY)
RUN = (*FIGURES, *DIALS, *OUTCOME)


# --------------------------------------------------------------------------------------------------
# Each model's figures in the same event: model/<name>/<figure>


class ModelRun(NamedTuple):
    report: IngestReport
    stats: ModelStats


def _stat(figure: str, kind: type = int) -> Key[ModelRun]:
    return Key[ModelRun](figure, kind, lambda m: getattr(m.stats, figure))


MODEL_PREFIX = "model/"
MODEL_ID = _stat("model", str)  # the model id the endpoint serves
MODEL_DOCS = _stat("docs")
MODEL_DOCS_PER_SEC = Key[ModelRun](
    "docs_per_sec", float, lambda m: round(m.report.model_docs_per_sec(m.stats), 3)
)
MODEL_PROMPT_TOKENS = _stat("prompt_tokens")
MODEL_COMPLETION_TOKENS = _stat("completion_tokens")


def _flagged_by(reason: Reason) -> Key[ModelRun]:
    return Key[ModelRun](f"flagged_{reason}", int, lambda m: m.stats.flags.get(reason, 0))


MODEL_VERIFIED_SHARE = Key[ModelRun](
    "verified_share", float, lambda m: _share(m.stats.verified_share)
)
MODEL_FLAGGED = _stat("flagged")
# How often each reason flagged one of the model's pages: flagged_<reason>, every reason (zero
# included) so that runs plot alike.
MODEL_FLAGS = tuple(_flagged_by(reason) for reason in Reason)
MODEL_QUALITY = (
    _stat("points"),
    _stat("points_verified"),
    MODEL_VERIFIED_SHARE,
    MODEL_FLAGGED,
    _stat("second_opinions"),
    _stat("second_opinions_kept"),
    Key[ModelRun]("flagged_share", float, lambda m: _share(m.stats.flagged_share)),
    *MODEL_FLAGS,
)
MODEL = (
    MODEL_ID,
    MODEL_DOCS,
    MODEL_DOCS_PER_SEC,
    _stat("failed"),
    _stat("garbage"),
    _stat("errors"),
    _stat("timeouts"),
    _stat("breaker_trips"),
    _stat("workers"),  # where automatic concurrency settled, or the fixed count
    _stat("peak_workers"),
    MODEL_PROMPT_TOKENS,
    MODEL_COMPLETION_TOKENS,
    _stat("hit_max_tokens"),
    _stat("hedges"),
    _stat("hedges_won"),
    _stat("auto", bool),
    *MODEL_QUALITY,
)


def _share(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def model_prefix(name: str) -> str:
    return f"{MODEL_PREFIX}{name}/"


def run_metadata(report: IngestReport) -> dict[str, dg.MetadataValue]:
    """The run's figures, once per run: Int, Float and Bool values (which the UI plots) for every
    figure and dial, JSON only for the list of failures."""
    metadata = build((*FIGURES, *DIALS), report)
    for stats in report.models:
        metadata.update(build(MODEL, ModelRun(report, stats), model_prefix(stats.name)))
    metadata.update(build(OUTCOME, report))
    return metadata


def models_of(metadata: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per model name, its figures in a run's metadata (``model/<name>/<figure>``), by figure: what
    the :data:`MODEL` keys read."""
    models: dict[str, dict[str, Any]] = {}
    for name, value in metadata.items():
        parts = name.split("/")
        if len(parts) == 3 and f"{parts[0]}/" == MODEL_PREFIX:
            models.setdefault(parts[1], {})[parts[2]] = value
    return models


# --------------------------------------------------------------------------------------------------
# Each wiki_pages partition's own counts (its materialization)


class PartitionRun(NamedTuple):
    state: CollectionState  # the collection before the run (the same rule the run applies)
    failed: int  # its documents that failed in the run

    @property
    def summarized(self) -> int:
        state = self.state
        return state.documents - state.skipped - state.recovered - self.failed


PARTITION = (
    Key[PartitionRun]("documents", int, lambda p: p.state.documents),
    Key[PartitionRun]("summarized", int, lambda p: p.summarized),
    Key[PartitionRun]("skipped", int, lambda p: p.state.skipped),
    Key[PartitionRun]("recovered", int, lambda p: p.state.recovered),
    Key[PartitionRun]("failed", int, lambda p: p.failed),
    Key[PartitionRun]("removed", int, lambda p: p.state.removed),
)


def partition_metadata(
    report: IngestReport, before: Sequence[CollectionState], depth: int
) -> dict[str, dict[str, dg.MetadataValue]]:
    """Each collection's own counts. Every document of a collection is skipped, recovered (its
    page written from an answer already journaled), failed or summarized: the survey before the
    run tells the first two apart with the rule the run applies, the report names the failures."""
    failed: dict[str, int] = {}
    for failure in report.failed:
        name = collection_of(PurePosixPath(failure["path"]), depth)
        failed[name] = failed.get(name, 0) + 1
    states = {state.name: state for state in before}
    return {
        name: build(
            PARTITION,
            PartitionRun(
                states.get(name, CollectionState(name, "", documents=0, pending=0)),
                failed.get(name, 0) if name in states else 0,
            ),
        )
        for name in report.collections
    }


# --------------------------------------------------------------------------------------------------
# wiki_index and synced_documents


class IndexRun(NamedTuple):
    report: IndexReport
    dangling_links: int


INDEX = (
    Key[IndexRun]("pages", int, lambda i: i.report.pages),
    Key[IndexRun]("collections", int, lambda i: i.report.collections),
    Key[IndexRun]("topics", int, lambda i: i.report.topics),
    Key[IndexRun]("rewritten", int, lambda i: i.report.rewritten),
    Key[IndexRun]("dangling_links", int, lambda i: i.dangling_links),
)

# Each collection's documents, on every observation (and materialization) of synced_documents.
SYNCED = (Key[CollectionState]("documents", int, lambda state: state.documents),)
