"""How far a judge's verdicts hold: per judge, Laplace's estimate of getting a control right
(:mod:`.request` mixes the controls in), over the controls it answered.

The run's judges (:mod:`wiki_assets.engine.dispatch.judges`) apply a judge's verdicts as it
answers, while the estimate is at least :data:`TRUSTED`; the verification pass (:mod:`.verify`)
waits for every answer and applies them only where the judge is :meth:`Standing.proven`. Both
ask no more of a judge found :meth:`Standing.useless`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["EVIDENCE", "NOT_HOLDING", "TRUSTED", "USELESS", "Holds", "Standing"]

TRUSTED = 0.75  # a judge's estimated share of controls right, from which its verdicts apply
USELESS = 0.6  # below this after EVIDENCE controls, a judge is asked no more
EVIDENCE = 6  # controls answered before a judge can be found useless, or proven
# Why a page got no verdict, in the run's figures and the pass's: every judge that could
# answer was found useless (or, in the pass, not proven).
NOT_HOLDING = "judge_not_holding"

# Told how many controls a judge answered in one answer and got right: whether that answer's
# verdicts apply (the run's judges: :meth:`Standing.trusted`, once counted).
Holds = Callable[[int, int], bool]


@dataclass
class Standing:
    """One judge's controls: how many it answered, and got right."""

    answered: int = 0
    right: int = 0

    def count(self, answered: int, right: int) -> None:
        self.answered += answered
        self.right += right

    def estimate(self) -> float:
        """Laplace's estimate that it gets the next control right."""
        return (self.right + 1) / (self.answered + 2)

    def trusted(self) -> bool:
        """Whether its verdicts apply now, as the run learns: the estimate at least
        :data:`TRUSTED`."""
        return self.estimate() >= TRUSTED

    def proven(self) -> bool:
        """Whether its verdicts hold once every answer is in: trusted, after at least
        :data:`EVIDENCE` controls."""
        return self.answered >= EVIDENCE and self.trusted()

    def useless(self) -> bool:
        """Whether to ask it no more: below :data:`USELESS` after :data:`EVIDENCE` controls."""
        return self.answered >= EVIDENCE and self.estimate() < USELESS
