"""What a run did and how fast: the figures the log lines, the CLI's JSON and the metadata use.

The dispatcher counts its own figures into tallies the report holds (:attr:`IngestReport.tally`,
:attr:`ModelStats.tally <.model_stats.ModelStats.tally>`: see
:mod:`~wiki_assets.engine.dispatch.tally`); the rest the run counts here itself. The report's JSON
(:meth:`IngestReport.to_dict`) is declared once, a :class:`Figure` per key: :data:`RUN_FIGURES` and,
for each model, :data:`MODEL_FIGURES`. A new figure is one line there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch.tally import DispatchTally
from wiki_assets.engine.ingestion.model_stats import ModelStats

R = TypeVar("R")


@dataclass
class IngestReport:
    collections: list[str]
    dials: Dials
    models: list[ModelStats]
    count: int = 0  # summarized by a model in this run
    skipped: int = 0  # unchanged since their page was written
    recovered: int = 0  # summarized by an earlier run that died before writing the page
    removed: int = 0  # pages whose document no longer exists
    relinked: int = 0  # pages rewritten without their links to removed pages
    failed: list[dict[str, str]] = field(default_factory=list)
    # Files of the run's collections that hold no text (path and why): not failures.
    no_text: list[dict[str, str]] = field(default_factory=list)
    # The dispatcher's figures (requeued, hedged, second opinions, skips, why it stopped): it
    # counts into this very tally.
    tally: DispatchTally = field(default_factory=DispatchTally)
    unfinished: int = 0  # left for the next run: every model was down, or the run was stopped
    embedding_model: str | None = None  # the model that embeds them, if the run has one
    embedded: int = 0  # documents embedded for link candidates by meaning
    embedding_s: float = 0.0  # the seconds that took (before the first request, or beside)
    to_embed: int = 0  # documents to embed beside the requests (none: all embedded first)
    embedding_wait_s: float = 0.0  # the seconds the run waited for embedding
    links_by_meaning: int = 0  # links by meaning added at the end (state/meaning_links.py)
    stopped_by: str | None = None  # the signal that stopped it (SIGTERM, SIGINT), if one did
    duration_s: float = 0.0

    @property
    def docs_per_sec(self) -> float:
        return self.count / self.duration_s if self.duration_s > 0 else 0.0

    def models_out(self) -> list[str]:
        """A line per model that did not serve the whole run, and why."""
        return [line for m in self.models if (line := m.out()) is not None]

    @property
    def prompt_tokens(self) -> int:
        return sum(m.tally.prompt_tokens for m in self.models)

    @property
    def completion_tokens(self) -> int:
        return sum(m.tally.completion_tokens for m in self.models)

    @property
    def hit_max_tokens(self) -> int:
        return sum(m.tally.hit_max_tokens for m in self.models)

    @property
    def flagged(self) -> int:
        """Pages flagged: every flagged answer, less one per second opinion answered (of the two
        answers for its document one page remains, flagged only when both were)."""
        return sum(m.flagged for m in self.models) - self.second_opinions_answered

    @property
    def second_opinions_answered(self) -> int:
        return sum(m.tally.second_opinions for m in self.models)

    @property
    def second_opinions_kept(self) -> int:
        return sum(m.tally.second_opinions_kept for m in self.models)

    @property
    def verified_share(self) -> float | None:
        points = sum(m.points for m in self.models)
        return sum(m.points_verified for m in self.models) / points if points else None

    @property
    def supported_share(self) -> float | None:
        """Of the sentences of this run's descriptions and summaries that were checked, the
        share their documents support."""
        checked = sum(m.sentences_checked for m in self.models)
        return sum(m.sentences_supported for m in self.models) / checked if checked else None

    @property
    def judgements(self) -> int:
        return sum(m.tally.judgements for m in self.models)

    @property
    def requests(self) -> int:
        return sum(m.tally.requests for m in self.models)

    @property
    def requests_per_doc(self) -> float | None:
        """Requests the fleet sent per document summarized: 1 when every document took one
        request; more for long documents' parts, second opinions, hedges and retries."""
        return self.requests / self.count if self.count else None

    def model_docs_per_sec(self, stats: ModelStats) -> float:
        return stats.tally.docs / self.duration_s if self.duration_s > 0 else 0.0

    def busy_share(self, stats: ModelStats) -> float | None:
        """The model's share of the fleet's busy time (its answered requests' seconds in
        flight: a dead model's is 0)."""
        busy = sum(m.tally.busy_s for m in self.models)
        return stats.tally.busy_s / busy if busy > 0 else None

    def to_dict(self) -> dict[str, Any]:
        """The CLI's JSON: every :data:`RUN_FIGURES`, and under ``models`` each model's
        :data:`MODEL_FIGURES` by its name."""
        figures = {figure.name: figure.read(self) for figure in RUN_FIGURES}
        models = [ModelRun(self, m) for m in self.models]
        figures["models"] = {
            model.stats.name: {figure.name: figure.read(model) for figure in MODEL_FIGURES}
            for model in models
        }
        return figures


class ModelRun(NamedTuple):
    """One model's figures in its run: some of them are shares of the run's."""

    report: IngestReport
    stats: ModelStats


@dataclass(frozen=True)
class Figure(Generic[R]):
    """One key of the report's JSON: its name there, what it is, and how it is read from ``R``
    (the report, or a :class:`ModelRun`)."""

    name: str
    about: str
    read: Callable[[R], Any]


def _rounded(share: float | None) -> float | None:
    return None if share is None else round(share, 3)


# The run's figures, in the JSON's order (``models`` follows them: a MODEL_FIGURES object each).
# fmt: off
RUN_FIGURES: tuple[Figure[IngestReport], ...] = (
    Figure("collections", "the collections the run covered", lambda r: r.collections),
    Figure("count", "documents summarized by a model in this run", lambda r: r.count),
    Figure("skipped", "documents unchanged since their page was written", lambda r: r.skipped),
    Figure("recovered", "documents an earlier run summarized but died before writing",
           lambda r: r.recovered),
    Figure("removed", "pages whose document no longer exists", lambda r: r.removed),
    Figure("relinked", "pages rewritten without their links to removed pages",
           lambda r: r.relinked),
    Figure("failed", "the documents that failed: path and reason", lambda r: r.failed),
    Figure("no_text", "files that hold no text: path and why (not failures)",
           lambda r: r.no_text),
    Figure("requeued", "documents sent back to the queue after a timeout, garbage or outage",
           lambda r: r.tally.requeued),
    Figure("unfinished", "documents left for the next run", lambda r: r.unfinished),
    Figure("hedged", "documents a second model raced at the end of the run",
           lambda r: r.tally.hedged),
    Figure("second_opinions", "flagged answers sent to another model",
           lambda r: r.tally.second_opinions),
    Figure("second_opinions_kept", "second opinions kept in the first answer's place",
           lambda r: r.second_opinions_kept),
    Figure("second_opinions_skipped", "flagged answers that got no second opinion, by why",
           lambda r: dict(r.tally.second_opinions_skipped)),
    Figure("judgements_skipped", "pages offered for judging that got no verdict, by why",
           lambda r: dict(r.tally.judgements_skipped)),
    Figure("requests", "requests the fleet sent", lambda r: r.requests),
    Figure("requests_per_doc", "requests per document summarized",
           lambda r: _rounded(r.requests_per_doc)),
    Figure("embedding_model", "the model that embeds documents for link candidates by meaning",
           lambda r: r.embedding_model),
    Figure("embedded", "documents embedded for link candidates by meaning",
           lambda r: r.embedded),
    Figure("embedding_s", "the seconds embedding took, before the first request or beside the "
           "requests", lambda r: round(r.embedding_s, 3)),
    Figure("embedding_wait_s", "the seconds the run waited for embedding: before its first "
           "request, and at its end for the last vectors", lambda r: round(r.embedding_wait_s, 3)),
    Figure("links_by_meaning", "links to the nearest documents by meaning added to pages whose "
           "candidates were asked before every vector was in", lambda r: r.links_by_meaning),
    Figure("stopped", "why the run stopped early", lambda r: r.tally.stopped),
    Figure("stopped_by", "the signal that stopped it (SIGTERM, SIGINT)", lambda r: r.stopped_by),
    Figure("duration_s", "the run's seconds", lambda r: round(r.duration_s, 3)),
    Figure("docs_per_sec", "documents summarized per second", lambda r: round(r.docs_per_sec, 3)),
    Figure("prompt_tokens", "the fleet's prompt tokens", lambda r: r.prompt_tokens),
    Figure("completion_tokens", "the fleet's completion tokens", lambda r: r.completion_tokens),
    Figure("hit_max_tokens", "answers cut off at max_tokens", lambda r: r.hit_max_tokens),
    Figure("flagged", "pages the checks flagged", lambda r: r.flagged),
    Figure("verified_share", "the share of key points verified in their documents",
           lambda r: _rounded(r.verified_share)),
    Figure("supported_share", "the share of checked sentences their documents support",
           lambda r: _rounded(r.supported_share)),
    Figure("judgements", "pages whose unchecked sentences a judge judged",
           lambda r: r.judgements),
    Figure("dials", "the run's dials", lambda r: asdict(r.dials)),
)

# Each model's figures, in the JSON's order.
MODEL_FIGURES: tuple[Figure[ModelRun], ...] = (
    Figure("name", "the endpoint's name", lambda m: m.stats.name),
    Figure("model", "the model id the endpoint serves", lambda m: m.stats.model),
    Figure("workers", "requests in flight: the fixed count, or where automatic concurrency settled",
           lambda m: m.stats.workers),
    Figure("auto", "whether its concurrency was automatic", lambda m: m.stats.auto),
    Figure("peak_workers", "the most requests it had in flight", lambda m: m.stats.peak_workers),
    Figure("failed", "documents that failed on it", lambda m: m.stats.tally.failed),
    Figure("errors", "failed requests of any kind", lambda m: m.stats.tally.errors),
    Figure("timeouts", "requests that timed out", lambda m: m.stats.tally.timeouts),
    Figure("garbage", "answers that could not be read", lambda m: m.stats.tally.garbage),
    Figure("breaker_trips", "times its breaker took it out", lambda m: m.stats.breaker_trips),
    Figure("prompt_tokens", "its prompt tokens", lambda m: m.stats.tally.prompt_tokens),
    Figure("completion_tokens", "its completion tokens",
           lambda m: m.stats.tally.completion_tokens),
    Figure("hit_max_tokens", "its answers cut off at max_tokens",
           lambda m: m.stats.tally.hit_max_tokens),
    Figure("docs", "documents whose page is its answer", lambda m: m.stats.tally.docs),
    Figure("requests", "requests sent to it: pages, parts, second opinions, hedges, judgements",
           lambda m: m.stats.tally.requests),
    Figure("answered", "of those, the ones it answered", lambda m: m.stats.tally.answered),
    Figure("cut", "of those, the ones cancelled unanswered as the run ended or stopped",
           lambda m: m.stats.tally.cut),
    Figure("parts", "notes on parts of long documents it answered", lambda m: m.stats.tally.parts),
    Figure("busy_s", "its answered requests' seconds in flight, added up",
           lambda m: round(m.stats.tally.busy_s, 3)),
    Figure("hedges", "requests it sent to race another model's slow one",
           lambda m: m.stats.tally.hedges),
    Figure("hedges_won", "of those, the ones whose answer came first",
           lambda m: m.stats.tally.hedges_won),
    Figure("checked", "its answers checked", lambda m: m.stats.checked),
    Figure("points", "key points its answers gave", lambda m: m.stats.points),
    Figure("points_verified", "of those, the ones verified in their documents",
           lambda m: m.stats.points_verified),
    Figure("flagged", "its answers the checks flagged", lambda m: m.stats.flagged),
    Figure("flags", "how often each reason flagged one", lambda m: dict(m.stats.flags)),
    Figure("second_opinions", "second opinions it gave on other models' flagged pages",
           lambda m: m.stats.tally.second_opinions),
    Figure("second_opinions_kept", "of those, the ones kept in the page's place",
           lambda m: m.stats.tally.second_opinions_kept),
    Figure("judgements", "pages of other models it judged", lambda m: m.stats.tally.judgements),
    Figure("controls", "controls of its judgements it answered", lambda m: m.stats.tally.controls),
    Figure("controls_right", "of those, the ones it got right",
           lambda m: m.stats.tally.controls_right),
    Figure("sentences_checked", "sentences of its pages checked",
           lambda m: m.stats.sentences_checked),
    Figure("sentences_supported", "of those, the ones their documents support",
           lambda m: m.stats.sentences_supported),
    Figure("superseded", "its pages kept being replaced: it stopped taking new documents",
           lambda m: m.stats.tally.superseded),
    Figure("gone", "why it left the run for good (its server died)", lambda m: m.stats.tally.gone),
    Figure("last_error", "the reason its last failed request gave",
           lambda m: m.stats.tally.last_error),
    Figure("busy_share", "its share of the fleet's busy time",
           lambda m: _rounded(m.report.busy_share(m.stats))),
    Figure("docs_per_sec", "its documents per second of the run",
           lambda m: round(m.report.model_docs_per_sec(m.stats), 3)),
    Figure("verified_share", "the share of its key points verified",
           lambda m: _rounded(m.stats.verified_share)),
    Figure("flagged_share", "the share of its answers flagged",
           lambda m: _rounded(m.stats.flagged_share)),
    Figure("supported_share", "the share of its checked sentences supported",
           lambda m: _rounded(m.stats.supported_share)),
)
# fmt: on
