"""The end-of-run rule (:mod:`~wiki_assets.engine.dispatch.run_end`): whether a free model starts
a document or leaves it to a model that would finish it first, compared by each model's
:class:`Prospect` for it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Prospect:
    """One model's outlook for one document."""

    order: int  # the model's place in the fleet: the tie-break
    finish_s: float  # seconds from now until it would have the document done
    docs_per_s: float  # its pace over everything, at its current limit


def first(prospects: Sequence[Prospect]) -> Prospect:
    """The model that would finish the document first; ties go to the earlier model."""
    return min(prospects, key=lambda p: (p.finish_s, p.order))


def should_start(mine: Prospect, others: Sequence[Prospect], unstarted_elsewhere: int) -> bool:
    """Whether a free model should start a document now rather than leave it to ``others``
    (the models that could take it: in service, with a known pace), when ``unstarted_elsewhere``
    other documents are still unstarted.

    It leaves the document only when another model would finish it first *and* the others would
    also do every other unstarted document before this model finished this one. The first model
    always starts: no document is ever left by everyone.
    """
    if not others:
        return True
    best = first(others)
    if (mine.finish_s, mine.order) <= (best.finish_s, best.order):
        return True
    rate = sum(p.docs_per_s for p in others)
    if rate <= 0:
        return True
    return mine.finish_s < unstarted_elsewhere / rate + best.finish_s


def remaining_s(elapsed_s: float, expected_s: float, give_up_s: float | None) -> float:
    """How long a request already running is still expected to take: what its model's pace
    predicts, or forever once it has run past ``give_up_s`` (its model's tail percentile; such a
    request is presumed stuck, and its model does not count as coming free)."""
    if give_up_s is not None and elapsed_s > give_up_s:
        return math.inf
    return max(0.0, expected_s - elapsed_s)
