"""The plan of a sync, in words: per collection, the documents a run would summarize and why, the
pages it would remove, and an estimate of tokens and time from the fleet's recorded rates.

The daily schedule's ``sync_job`` run logs it before the ingest runs are requested, and
``wiki-assets plan`` prints the same (with what else a dry run finds: :mod:`wiki_assets.cli.plan`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from wiki_assets.defs.metadata import run_figures as md
from wiki_assets.defs.names import WIKI_PAGES
from wiki_assets.defs.resources import SummarizerResource
from wiki_assets.engine import CollectionState
from wiki_assets.engine.documents import ocr

RECENT_RUNS = 50  # how far back recorded rates are looked for
# Each model's figures an estimate reads from a run's metadata.
MODEL_READS = (
    md.MODEL_DOCS,
    md.MODEL_DOCS_PER_SEC,
    md.MODEL_PROMPT_TOKENS,
    md.MODEL_COMPLETION_TOKENS,
)


@dataclass(frozen=True)
class ModelRate:
    name: str
    docs_per_sec: float
    prompt_tokens_per_doc: float
    completion_tokens_per_doc: float
    run_id: str


@dataclass
class Estimate:
    documents: int
    rates: list[ModelRate] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # fleet models with no recorded run

    @property
    def docs_per_sec(self) -> float:
        return sum(rate.docs_per_sec for rate in self.rates)

    @property
    def seconds(self) -> float | None:
        if not self.documents:
            return 0.0
        return self.documents / self.docs_per_sec if self.docs_per_sec > 0 else None

    def tokens(self) -> tuple[int, int] | None:
        """Prompt and completion tokens, weighting each model by its share of the documents."""
        if not self.rates or self.docs_per_sec <= 0:
            return None
        share = [(rate, rate.docs_per_sec / self.docs_per_sec) for rate in self.rates]
        prompt = sum(r.prompt_tokens_per_doc * s for r, s in share) * self.documents
        completion = sum(r.completion_tokens_per_doc * s for r, s in share) * self.documents
        return round(prompt), round(completion)

    def to_dict(self) -> dict[str, Any]:
        tokens = self.tokens()
        return {
            "documents": self.documents,
            "docs_per_sec": round(self.docs_per_sec, 3),
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "prompt_tokens": tokens[0] if tokens else None,
            "completion_tokens": tokens[1] if tokens else None,
            "models": {
                rate.name: {"docs_per_sec": round(rate.docs_per_sec, 3), "run_id": rate.run_id}
                for rate in self.rates
            },
            "unrecorded_models": self.unknown,
        }

    def line(self) -> str:
        tokens = self.tokens()
        text = f"estimate: {self.documents} documents"
        if tokens:
            text += f" · ~{tokens[0] + tokens[1]:,} tokens ({tokens[0]:,} prompt)"
        if self.seconds is not None and self.documents:
            speeds = ", ".join(f"{r.name} {r.docs_per_sec:.2f}/s" for r in self.rates)
            text += f" · ~{self.seconds:.1f} s at {self.docs_per_sec:.2f} docs/s ({speeds})"
        elif self.documents:
            text += " · time unknown"
        if self.unknown:
            text += f" · no recorded run for {', '.join(self.unknown)}"
        return text


def recorded_rates(
    instance: dg.DagsterInstance, summarizer: SummarizerResource, documents: int
) -> Estimate:
    """Each fleet model's figures from the newest run that used it (by name)."""
    wanted = [endpoint.name for endpoint in summarizer.planned_endpoints()]
    found: dict[str, ModelRate] = {}
    records = instance.fetch_observations(
        dg.AssetRecordsFilter(asset_key=WIKI_PAGES), limit=RECENT_RUNS
    ).records
    for record in records:  # newest first
        observation = record.asset_observation
        if observation is None:
            continue
        for name, figures in md.models_of(md.plain(observation.metadata)).items():
            docs = md.MODEL_DOCS.read(figures) or 0
            if name in wanted and name not in found and docs > 0:
                found[name] = ModelRate(
                    name=name,
                    docs_per_sec=float(md.MODEL_DOCS_PER_SEC.read(figures) or 0.0),
                    prompt_tokens_per_doc=(md.MODEL_PROMPT_TOKENS.read(figures) or 0) / docs,
                    completion_tokens_per_doc=(md.MODEL_COMPLETION_TOKENS.read(figures) or 0)
                    / docs,
                    run_id=record.run_id,
                )
    return Estimate(
        documents=documents,
        rates=[found[name] for name in wanted if name in found],
        unknown=[name for name in wanted if name not in found],
    )


RECOVERED = "pages to write from answers already given"


def plan_lines(states: list[CollectionState]) -> list[str]:
    """Per collection with work: documents to summarize and why, pages to write from answers
    an earlier run got but did not write (no model is asked for them), pages to remove."""
    documents = sum(state.documents for state in states)
    recovered = sum(s.recovered for s in states)
    lines = [
        f"plan: {len(states)} collections · {documents} documents · "
        f"{sum(s.to_summarize for s in states)} to summarize · "
        + (f"{recovered} {RECOVERED} · " if recovered else "")
        + f"{sum(s.removed for s in states)} pages to remove"
    ]
    for state in states:
        if not state.pending and not state.recovered:
            continue
        why = ", ".join(f"{count} {reason}" for reason, count in state.reasons.items())
        lines.append(
            f"plan {state.name}: {state.to_summarize} of {state.documents} to summarize"
            + (f" ({why})" if why else "")
            + (f" · {state.recovered} {RECOVERED}" if state.recovered else "")
            + (f" · {state.removed} pages to remove" if state.removed else "")
        )
    no_text: dict[str, int] = {}
    for state in states:
        for reason, count in state.no_text.items():
            no_text[reason] = no_text.get(reason, 0) + count
    if no_text:
        # (Scans and images wait for OCR: said once, with how to install it.)
        shown: dict[str, int] = {}
        for reason, count in no_text.items():
            short = reason.removesuffix(f": {ocr.WOULD_READ}")
            shown[short] = shown.get(short, 0) + count
        lines.append(f"plan: {sum(no_text.values())} files hold no text: " + counted(shown))
        waiting = sum(n for reason, n in no_text.items() if reason.endswith(ocr.WOULD_READ))
        if waiting:
            lines.append(f"plan: OCR would read {waiting} of them (scans, images): {ocr.INSTALL}")
    return lines


def counted(counts: dict[str, int]) -> str:
    """``why count`` for each why, by name."""
    return ", ".join(f"{why} {count}" for why, count in sorted(counts.items()))
