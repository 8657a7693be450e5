"""The run's fleet as the dispatcher sees it: a :class:`~wiki_assets.engine.dispatch.Lane` per
endpoint, with its client, its concurrency and, for a model a child process of the run serves,
the check that says the process died; and each model's figures in the report."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.dispatch import Lane, concurrency_for
from wiki_assets.engine.ingestion.model_stats import ModelStats
from wiki_assets.engine.model.client import ModelClient


def fleet_lanes(
    endpoints: Sequence[Endpoint],
    dials: Dials,
    servers: Mapping[str, Callable[[], str | None]],
) -> list[Lane]:
    """A lane per endpoint, in the fleet's order (the end-of-run rule's tie-break)."""
    lanes = []
    for order, endpoint in enumerate(endpoints):
        concurrency = concurrency_for(endpoint, dials)
        client = ModelClient(endpoint, dials.max_tokens, on_overload=concurrency.on_overload)
        lanes.append(Lane(order, endpoint, client, concurrency, gone=servers.get(endpoint.name)))
    return lanes


def model_stats(lanes: Sequence[Lane]) -> list[ModelStats]:
    """Each model's figures as the run starts: its name, model id, concurrency and its lane's
    tally, which the dispatcher counts into."""
    return [
        ModelStats(
            lane.endpoint.name,
            lane.endpoint.model,
            lane.concurrency.limit,
            lane.concurrency.auto,
            lane.tally,
        )
        for lane in lanes
    ]
