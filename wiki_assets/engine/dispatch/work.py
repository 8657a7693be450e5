"""What the dispatcher asks of the run around it (:class:`Work`), and what the run made of an
answer it recorded (:class:`Recorded`). The workers (:mod:`~.worker`) and each request
(:mod:`~.request`) hold a :class:`Work`; the run (:mod:`~wiki_assets.engine.ingestion.run`, or the
simulation's) is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from wiki_assets.engine.dispatch.judges import PageToJudge
from wiki_assets.engine.dispatch.lane import Lane
from wiki_assets.engine.dispatch.queue import Job, Prepared
from wiki_assets.engine.prompting.results import Summary
from wiki_assets.engine.verification.prompt import Judgement
from wiki_assets.engine.verification.standing import Holds


@dataclass(frozen=True, slots=True)
class Recorded:
    """What the run made of an answer it recorded. A first answer's ``flags``: why the checks
    flagged it, when the run would have another model look at it (``flagged_pages: retry``). A
    second opinion: whether it was ``kept`` (ranked above the first answer, whose page it
    replaces) and the first answer's reasons it ``fixed`` (the kept answer no longer has them)."""

    flags: tuple[str, ...] = ()
    kept: bool = False
    fixed: tuple[str, ...] = ()
    judging: PageToJudge | None = None  # its page's unchecked sentences, for a judge (judges.py)


class Work(Protocol):
    """What the dispatcher asks of the run around it."""

    async def prepare(self, job: Job) -> Prepared:
        """Read the document and work out its request; DocumentError fails it alone."""
        ...

    async def record(self, job: Job, lane: Lane, summary: Summary) -> Recorded:
        """Keep an answer (durably, before it counts), and say what it made of it: a flagged
        first answer's reasons (the dispatcher may ask another model), or whether a second
        opinion replaced the first answer."""
        ...

    def gathered(self, job: Job, notes: list[str]) -> Prepared:
        """A long document's notes on its parts are in: its page's request, or (notes still
        too long for one request) the parts of another round of notes."""
        ...

    def fail(self, job: Job, reason: str) -> None: ...

    async def judged(
        self,
        judging: PageToJudge,
        judge: Lane,
        judgement: Judgement,
        holds: Holds,
    ) -> tuple[str, ...]:
        """A judge's answer on a page's sentences: ``holds(controls answered, right)`` counts
        its controls and says whether its verdicts apply (then the page is written again).
        Returns why the page is flagged now, where the run would have another model look at it
        (as :attr:`Recorded.flags`)."""
        ...

    def held_back(self) -> bool:
        """Whether new requests must wait (pages lag behind); the run calls
        :meth:`Dispatcher.wake` when that changes."""
        ...
