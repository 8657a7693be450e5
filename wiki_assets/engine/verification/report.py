"""What a verification pass did, in figures a person can check against the pages: the pages it
found waiting, judged and left, each judge's requests and controls, and the prose's statuses
after it (the supported share is that of every sentence of the pages it looked at, as a reader
counts them)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from wiki_assets.engine.quality.sentences import Support

__all__ = ["JudgeFigures", "VerificationReport"]


@dataclass
class JudgeFigures:
    """One judge of the pass: its requests, answers, the controls it answered and got right,
    whether its verdicts held at the end, and the sentences its verdicts settled."""

    name: str
    requests: int = 0
    answered: int = 0
    errors: int = 0
    controls: int = 0
    controls_right: int = 0
    settled: int = 0
    holding: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "requests": self.requests, "answered": self.answered,
            "errors": self.errors, "controls": self.controls,
            "controls_right": self.controls_right, "settled": self.settled,
            "holding": self.holding,
        }  # fmt: skip


@dataclass
class VerificationReport:
    """The pass over the pages of ``collections``."""

    collections: tuple[str, ...]
    budget: int  # pages the pass may send to a judge
    pages: int = 0  # pages with prose it looked at
    waiting: int = 0  # of those, with a sentence unchecked when it started
    judged: int = 0  # pages whose judge's verdicts held and changed a sentence
    flagged: int = 0  # of those, pages a verdict flagged that were not flagged before
    settled: int = 0  # sentences a judge settled
    skipped: Counter[str] = field(default_factory=Counter)  # pages not judged, by why
    judges: list[JudgeFigures] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)  # every sentence's, after the pass
    seconds: float = 0.0

    @property
    def sentences(self) -> int:
        return sum(self.statuses.values())

    @property
    def supported_share(self) -> float | None:
        """Supported sentences of all the pages' sentences (None: no sentence)."""
        total = self.sentences
        return self.statuses[Support.SUPPORTED.value] / total if total else None

    @property
    def unchecked(self) -> int:
        return self.statuses[Support.UNCHECKED.value]

    def line(self) -> str:
        """The pass in one line, as the log and the asset's description say it."""
        share = self.supported_share
        said = "-" if share is None else f"{share:.2f}"
        return (
            f"verification: {self.pages} pages · {self.waiting} with unchecked sentences · "
            f"{self.judged} judged ({self.flagged} flagged by a verdict) · {self.settled} "
            f"sentences settled · {self.unchecked} left unchecked · supported share {said} · "
            f"pages skipped: {self.skipped_said()}"
        )

    def skipped_said(self) -> str:
        """The pages skipped, by why ("none")."""
        said = [f"{why} {n}" for why, n in sorted(self.skipped.items()) if n]
        return ", ".join(said) or "none"

    def to_json(self) -> dict[str, Any]:
        return {
            "collections": list(self.collections), "budget": self.budget, "pages": self.pages,
            "waiting": self.waiting, "judged": self.judged, "flagged": self.flagged,
            "settled": self.settled,
            "skipped": dict(self.skipped), "statuses": dict(self.statuses),
            "supported_share": self.supported_share, "seconds": round(self.seconds, 2),
            "judges": [judge.to_json() for judge in self.judges],
        }  # fmt: skip
