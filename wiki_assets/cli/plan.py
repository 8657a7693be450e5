"""``wiki-assets plan``: what a run would do, without doing it (no sync command, no model asked,
nothing written): the survey a run would start from, what it would embed for its links, whether
each configured endpoint answers now, the files the ignore rules leave out, and the plan as JSON.
The plan's lines and estimate are the sync's own (:mod:`wiki_assets.defs.sync.plan`), which the
daily ``sync_job`` run logs too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wiki_assets.defs.resources import NGRAMS_ONLY, CorpusResource, SummarizerResource
from wiki_assets.defs.sync.plan import Estimate, counted
from wiki_assets.defs.wiki_pages.config import IngestConfig
from wiki_assets.engine import CollectionState, survey
from wiki_assets.engine.dispatch.retry import shown_url
from wiki_assets.engine.documents.ignore import Ignored
from wiki_assets.engine.ingestion.plan import RELATED_FILE
from wiki_assets.engine.model.probe import Probe, probe
from wiki_assets.engine.related.vectors import to_embed
from wiki_assets.engine.wiki.files import STATE_DIR


def dry_run(
    corpus: CorpusResource,
    summarizer: SummarizerResource,
    dials: IngestConfig,
    ignored: list[Ignored] | None = None,
) -> list[CollectionState]:
    """The survey a run would start from: the same fleet, dials and rule; the files the ignore
    rules leave out go to ``ignored``. Reads, never writes."""
    return survey(
        corpus.synced_path,
        corpus.wiki_path,
        summarizer.planned_endpoints(),
        dials.to_dials(),
        corpus.collection_depth,
        corpus.state_store(),
        ignored=ignored,
    )


@dataclass(frozen=True)
class EmbeddingPlan:
    """What a run would embed for its link candidates by meaning (``model``: None without an
    embeddings model): indexed documents without a vector, or every one, and why."""

    model: str | None
    documents: int = 0
    reason: str | None = None

    def line(self) -> str | None:
        if self.model is None:
            return f"plan: links {NGRAMS_ONLY}"
        if not self.documents:
            return None
        why = f" ({self.reason})" if self.reason else ""
        return f"plan: {self.documents} documents to embed by {self.model}{why}"

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "to_embed": self.documents, "reason": self.reason}


def embedding_plan(corpus: CorpusResource, summarizer: SummarizerResource) -> EmbeddingPlan:
    endpoint = summarizer.planned_embeddings()
    if endpoint is None:
        return EmbeddingPlan(None)
    documents, reason = to_embed(corpus.wiki_path / STATE_DIR / RELATED_FILE, endpoint.model)
    return EmbeddingPlan(endpoint.model, documents, reason)


@dataclass(frozen=True)
class FleetProbe:
    """Whether each configured endpoint answers now (:func:`~wiki_assets.engine.model.probe.
    probe`); ``embedded``: the fleet is the embedded model, which the run starts itself."""

    probes: list[Probe]
    embedded: bool = False

    @property
    def unreachable(self) -> list[Probe]:
        return [found for found in self.probes if not found.reachable]

    def line(self) -> str:
        if self.embedded and not self.probes:
            return "plan: models: the embedded model, started by the run"
        shown = [
            f"{found.name} ok"
            if found.reachable
            else f"{found.name} UNREACHABLE at {shown_url(found.base_url)} ({found.problem})"
            for found in self.probes
        ]
        return "plan: models: " + " · ".join(shown)

    def to_dict(self) -> list[dict[str, Any]]:
        return [
            {
                "name": found.name,
                "base_url": shown_url(found.base_url),
                "reachable": found.reachable,
                "problem": found.problem,
            }
            for found in self.probes
        ]


def fleet_probe(summarizer: SummarizerResource) -> FleetProbe:
    """Ask each configured endpoint (the models and the embeddings endpoint) once, in parallel,
    with a short timeout. The embedded servers are not running between runs: not asked."""
    endpoints: list[Any] = [model.to_endpoint() for model in summarizer.models]
    if summarizer.embeddings is not None:
        endpoints.append(summarizer.embeddings.to_endpoint())
    return FleetProbe(probe(endpoints), embedded=not summarizer.models)


def ignored_line(ignored: list[Ignored]) -> str | None:
    """The files the ignore rules leave out, counted by rule."""
    if not ignored:
        return None
    rules: dict[str, int] = {}
    for found in ignored:
        rules[found.rule] = rules.get(found.rule, 0) + 1
    return f"plan: {len(ignored)} files ignored: " + counted(rules)


def plan_json(states: list[CollectionState], estimate: Estimate) -> dict[str, Any]:
    return {
        "collections": [
            {
                "name": state.name,
                "documents": state.documents,
                "to_summarize": state.to_summarize,
                "reasons": state.reasons,
                "removed": state.removed,
                "skipped": state.skipped,
                "recovered": state.recovered,
                "no_text": state.no_text,
            }
            for state in states
        ],
        "to_summarize": sum(state.to_summarize for state in states),
        "removed": sum(state.removed for state in states),
        "estimate": estimate.to_dict(),
    }
