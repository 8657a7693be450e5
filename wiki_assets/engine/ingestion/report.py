"""What a run did and how fast: the figures the log lines, the CLI's JSON and the metadata use.

The dispatcher counts its own figures into tallies the report holds (:attr:`IngestReport.tally`,
:attr:`ModelStats.tally <.model_stats.ModelStats.tally>`: see
:mod:`~wiki_assets.engine.dispatch.tally`); the rest the run counts here itself. Each figure shown
of it (in the report's JSON, the CLI's, Dagster's metadata) is declared once in :mod:`.figures`
and, for each model, :mod:`.model_figures`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from wiki_assets.engine.config import Dials
from wiki_assets.engine.dispatch.tally import DispatchTally
from wiki_assets.engine.ingestion.model_stats import ModelStats


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


class ModelRun(NamedTuple):
    """One model's figures in its run: some of them are shares of the run's."""

    report: IngestReport
    stats: ModelStats
