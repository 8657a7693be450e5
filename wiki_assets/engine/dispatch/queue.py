"""The shared queue: claims, give-back and tail stealing.

There is one queue for the whole fleet. Each worker claims ``claim_size`` documents and takes them
one at a time; when its claim is empty it claims again, so a fast model simply takes more. Once the
source is dry, an idle worker steals the unstarted back half of the largest claim, so a slow model
cannot sit on documents a free model could start now. Single-threaded (asyncio): no locks.

A flagged answer may go back for a second opinion (:meth:`WorkQueue.ask_another`): it waits apart,
for the first free worker of a model that has not answered it, and comes before anything else a
worker would claim (its first answer is journaled; nothing else waits for it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from wiki_assets.engine.corpus import SourceDocument

if TYPE_CHECKING:
    from wiki_assets.engine.related import Candidate


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a request needs besides the model: read and worked out once per document."""

    title: str
    text: str
    language: str
    prompt_tokens: int
    candidates: list[Candidate]


@dataclass(eq=False, slots=True)
class Job:
    """One document of the run. Compared by identity: the same document is one job."""

    doc: SourceDocument
    page: str
    attempts: int = 0  # requests that used up one of the document's tries
    candidates: list[Candidate] | None = None  # link candidates, when already known
    prepared: Prepared | None = None  # kept while the document waits to be started again
    running: list[Any] = field(default_factory=list)  # its requests in flight (Attempt)
    started: bool = False  # sent to a model at least once
    raced_by: set[int] = field(default_factory=set)  # models that raced it (each at most once)
    done: bool = False  # answered and recorded: later answers are dropped
    answered_by: set[int] = field(default_factory=set)  # models whose answer was recorded
    second_opinion: bool = False  # sent back for another model's answer (its first is kept)

    def may_take(self, model: int) -> bool:
        """Whether the model in place ``model`` may be sent this job: a second opinion goes only
        to a model that has not answered it."""
        return model not in self.answered_by


class WorkQueue:
    """One queue for the whole fleet (see the module docstring)."""

    def __init__(self, source: Iterator[Job]) -> None:
        self._source = source
        self._returned: deque[Job] = deque()
        self._second: deque[Job] = deque()  # second opinions waiting (see the module docstring)
        self._claims: dict[int, deque[Job]] = {}
        self.stolen = 0
        self.version = 0  # bumped whenever a job comes back: waiting workers may look again

    def put_back(self, job: Job, *, news: bool = True) -> None:
        """A job to be tried again, or left for a faster model: next in line for anyone.
        ``news=False`` (a job left for a faster model) does not bump :attr:`version`: it tells
        the workers that left it nothing new, and waking them would only make them leave it
        again. A second opinion goes back to wait with the others."""
        if job.second_opinion:
            self._second.appendleft(job)
        else:
            self._returned.appendleft(job)
        self.version += news

    def ask_another(self, job: Job) -> None:
        """``job`` (answered) waits for a second opinion from a model that has not answered it."""
        job.second_opinion, job.done = True, False
        self._second.append(job)
        self.version += 1

    def second_opinions(self) -> int:
        """Second opinions waiting for a model."""
        return len(self._second)

    def abandon(self, unanswerable: Callable[[Job], bool]) -> int:
        """Drop the waiting second opinions ``unanswerable`` says no model can give now (their
        first answers stand); how many."""
        kept = deque(job for job in self._second if not unanswerable(job))
        dropped, self._second = len(self._second) - len(kept), kept
        return dropped

    def remaining(self) -> int:
        """Unstarted jobs (claimed, returned and not yet claimed); consumes the source. Second
        opinions are not among them: their first answer is kept."""
        rest = sum(1 for _ in self._source)
        return rest + len(self._returned) + sum(len(claim) for claim in self._claims.values())

    def has_work(self, model: int) -> bool:
        """Whether a job came back that the model in place ``model`` may take."""
        return bool(self._returned) or any(job.may_take(model) for job in self._second)

    def returned(self) -> int:
        """Jobs put back and not yet claimed again."""
        return len(self._returned)

    def give_back(self, worker: int) -> None:
        """Return a worker's unstarted claim (it is being parked, or it left a document to a
        faster model) ahead of the unclaimed source. Only documents nobody has looked at yet
        (not prepared) are news to waiting workers."""
        own = self._claims.get(worker)
        if own:
            self.version += any(job.prepared is None for job in own)
            self._returned.extendleft(reversed(own))
            own.clear()

    def take_returned(self, wanted: Callable[[Job], bool], look_at: int = 64) -> Job | None:
        """The first of the next ``look_at`` returned jobs that ``wanted`` accepts, taken out of
        the queue: a worker that left one document to a faster model may still start another."""
        for index, job in enumerate(islice(self._returned, look_at)):
            if wanted(job):
                del self._returned[index]
                return job
        return None

    def next_job(self, worker: int, claim_size: int, model: int | None = None) -> Job | None:
        """The next job for ``worker`` of the model in place ``model``: a second opinion it may
        give (any, for ``None``), else the next of its claim (claimed again, or stolen, when the
        claim is empty)."""
        if any(job.done for job in self._second):
            # Answered meanwhile by a request that was already out for it: nothing to ask.
            self._second = deque(job for job in self._second if not job.done)
        for index, job in enumerate(self._second):
            if model is None or job.may_take(model):
                del self._second[index]
                return job
        own = self._claims.setdefault(worker, deque())
        if not own:
            while self._returned and len(own) < claim_size:
                own.append(self._returned.popleft())
            own.extend(islice(self._source, claim_size - len(own)))
        if not own:
            victim = max(self._claims.values(), key=len)
            # Half, rounded up: even a single unstarted document moves to the idle worker.
            take = (len(victim) + 1) // 2
            for _ in range(take):
                own.appendleft(victim.pop())
            self.stolen += take
        return own.popleft() if own else None
