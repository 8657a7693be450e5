"""The run's fleet as the dispatcher sees it: a :class:`~wiki_assets.engine.dispatch.Lane` per
endpoint, with its client, its workers and, for a model a child process of the run serves,
the check that says the process died; and each model's figures in the report, the last of them
taken as the run winds down."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from wiki_assets.engine.config import Dials, EmbeddingsEndpoint, Endpoint
from wiki_assets.engine.dispatch import Lane, workers_for
from wiki_assets.engine.ingestion.model_stats import ModelStats
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.llm.probe import probe


@dataclass(frozen=True, slots=True)
class Fleet:
    """The models a run asks: its chat ``endpoints`` (in order: the end-of-run rule's tie-break),
    the ``embeddings`` endpoint that finds links by meaning, if any, and for each endpoint that a
    child process of the run serves (by name), what says the process died
    (``ChildServer.exit_notice``): its model then leaves the run at once, named."""

    endpoints: Sequence[Endpoint]
    embeddings: EmbeddingsEndpoint | None = None
    servers: Mapping[str, Callable[[], str | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "endpoints", tuple(self.endpoints))  # (frozen: a copy)
        object.__setattr__(self, "servers", dict(self.servers))


def fleet_lanes(fleet: Fleet, dials: Dials) -> list[Lane]:
    """A lane per endpoint, in the fleet's order (the end-of-run rule's tie-break)."""
    lanes = []
    servers = fleet.servers
    for order, endpoint in enumerate(fleet.endpoints):
        workers = workers_for(endpoint, dials)
        client = ModelClient(endpoint, dials.max_tokens, on_overload=workers.on_overload)
        lanes.append(Lane(order, endpoint, client, workers, gone=servers.get(endpoint.name)))
    return lanes


def model_stats(lanes: Sequence[Lane]) -> list[ModelStats]:
    """Each model's figures as the run starts: its name, model id, workers and its lane's
    tally, which the dispatcher counts into."""
    return [
        ModelStats(
            lane.endpoint.name,
            lane.endpoint.model,
            lane.workers.limit,
            lane.workers.auto,
            lane.tally,
        )
        for lane in lanes
    ]


async def wound_down(lanes: Sequence[Lane], stats: Sequence[ModelStats]) -> None:
    """Each model's last figures as the run ends, its client closed: where its workers
    settled, its peak, its breaker's trips. A model that answered none of its requests though
    none failed (other models' answers came first) may be a slow model in a short run, or an
    endpoint that refuses every connection while the client's retries back off: one probe of
    its endpoint (``GET /models``, a few seconds at most) tells them apart (``unreachable``)."""
    for lane, model in zip(lanes, stats, strict=True):
        await lane.client.close()
        model.workers = lane.workers.limit
        model.peak_workers = lane.workers.peak
        model.breaker_trips = lane.breaker.trips
    silent = [(lane, model) for lane, model in zip(lanes, stats, strict=True) if model.silent]
    if silent:
        answers = await asyncio.to_thread(probe, [lane.endpoint for lane, _ in silent])
        for (_, model), answer in zip(silent, answers, strict=True):
            model.unreachable = answer.problem
