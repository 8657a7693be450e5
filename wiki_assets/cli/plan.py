"""``wiki-assets plan``: what a run would do, without doing it (no sync command, no model asked,
nothing written): the survey a run would start from, what it would embed for its links, whether
each configured endpoint answers now, the files the ignore rules leave out, and the plan as JSON.
The plan's lines and estimate are the sync's own (:mod:`wiki_assets.defs.sync.plan`), which the
daily ``sync_job`` run logs too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dagster as dg

from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.names import WIKI_PAGES
from wiki_assets.defs.resources import NGRAMS_ONLY, CorpusResource, SummarizerResource
from wiki_assets.defs.sync.plan import RECENT_RUNS, Estimate, counted
from wiki_assets.defs.wiki_pages.config import IngestConfig
from wiki_assets.engine import CollectionState, survey
from wiki_assets.engine.dispatch.retry import shown_url
from wiki_assets.engine.documents.ignore import Ignored
from wiki_assets.engine.ingestion.plan import RELATED_FILE
from wiki_assets.engine.llm.probe import Probe, probe
from wiki_assets.engine.related.embed_missing import EMBED_FIRST
from wiki_assets.engine.related.vectors import to_embed
from wiki_assets.engine.state.journal import Journal
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
    """What a run would embed for its links by meaning (``model``: None without an embeddings
    model): the documents without a vector (every one, and why, for another model), where and
    when (before the first request when they are few, else beside the requests), about how long
    at the speed the last run that embedded with this model measured, and the pages that wait
    for their links by meaning (:mod:`~wiki_assets.engine.state.meaning_links`)."""

    model: str | None
    documents: int = 0
    reason: str | None = None
    endpoint: str = ""  # which endpoint embeds, in words
    due: int = 0  # pages waiting for their links by meaning
    docs_per_sec: float | None = None  # the last run's speed with this model, if one measured it

    @property
    def beside(self) -> bool:
        return self.documents > EMBED_FIRST

    @property
    def seconds(self) -> float | None:
        return self.documents / self.docs_per_sec if self.docs_per_sec else None

    def line(self) -> str | None:
        if self.model is None:
            return f"plan: links {NGRAMS_ONLY}"
        said = []
        if self.documents:
            why = f" ({self.reason})" if self.reason else ""
            when = "beside the requests" if self.beside else "before the first request"
            cost = (
                f": ~{self.seconds:,.0f} s at {self.docs_per_sec:.2f} docs/s (the last run's)"
                if self.seconds is not None
                else " (no run has measured its speed yet)"
            )
            said.append(
                f"{self.documents} documents to embed by {self.model} ({self.endpoint}){why}, "
                f"{when}{cost}"
            )
        if self.due:
            said.append(f"{self.due} pages wait for their links by meaning")
        return "plan: links by meaning: " + " · ".join(said) if said else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "to_embed": self.documents,
            "reason": self.reason,
            "endpoint": self.endpoint or None,
            "beside_the_requests": self.beside,
            "docs_per_sec": self.docs_per_sec,
            "seconds": None if self.seconds is None else round(self.seconds, 1),
            "pages_due": self.due,
        }


def embedding_plan(
    corpus: CorpusResource,
    summarizer: SummarizerResource,
    states: list[CollectionState],
    instance: dg.DagsterInstance | None,
) -> EmbeddingPlan:
    """The documents without a vector in the related index, and those the survey found new or
    changed (a run indexes them first); the speed from ``instance``'s recorded runs."""
    endpoint = summarizer.planned_embeddings()
    if endpoint is None:
        return EmbeddingPlan(None)
    documents, reason = to_embed(corpus.wiki_path / STATE_DIR / RELATED_FILE, endpoint.model)
    unindexed = ("new",) if reason else ("new", "changed")  # (another model: every one already)
    documents += sum(state.reasons.get(why, 0) for state in states for why in unindexed)
    store = corpus.state_store()
    due = 0
    if store.has_state():
        with Journal(store) as journal:
            due = len(journal.by_meaning.due())
    where = (
        f"{endpoint.name} at {shown_url(endpoint.base_url)}"
        if summarizer.embeddings is not None
        else "the embedded model, on this machine's CPU"
    )
    rate = recorded_embedding_rate(instance, endpoint.model) if instance else None
    return EmbeddingPlan(endpoint.model, documents, reason, where, due, rate)


def recorded_embedding_rate(instance: dg.DagsterInstance, model: str) -> float | None:
    """Documents per second the newest run that embedded with ``model`` measured."""
    records = instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=WIKI_PAGES), limit=RECENT_RUNS
    ).records
    for record in records:  # newest first
        observation = record.asset_observation
        figures = md.plain(observation.metadata) if observation is not None else {}
        embedded, seconds = md.EMBEDDED.read(figures), md.EMBEDDING_S.read(figures)
        if md.EMBEDDING_MODEL.read(figures) == model and embedded and seconds:
            return round(float(embedded) / float(seconds), 2)
    return None


@dataclass(frozen=True)
class FleetProbe:
    """Whether each configured endpoint answers now (:func:`~wiki_assets.engine.llm.probe.
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
