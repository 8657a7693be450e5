"""The shared queue: claims, give-back and tail stealing.

There is one queue for the whole fleet. Each worker claims ``claim_size`` documents and takes them
one at a time; when its claim is empty it claims again, so a fast model simply takes more. Once the
source is dry, an idle worker steals the unstarted back half of the largest claim, so a slow model
cannot sit on documents a free model could start now. Single-threaded (asyncio): no locks.

A long document's parts, and its page once their notes are in, are *urgent*: they wait apart and
come before a worker's claim, so that they spread over every free worker of the fleet at once
(the document's page waits for its slowest part).

A flagged answer may go back for a second opinion (:meth:`WorkQueue.ask_another`): it waits apart,
for a worker of a model that has not answered it (its first answer is journaled; nothing else
waits for it). One worth waiting for comes before anything else a worker would claim; the others
are taken only by workers with nothing else to do (:mod:`~wiki_assets.engine.dispatch.opinions`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import TYPE_CHECKING, Any

from wiki_assets.engine.documents.corpus import SourceDocument

if TYPE_CHECKING:
    from wiki_assets.engine.documents.reader import DocumentText
    from wiki_assets.engine.prompting.candidate import Candidate


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a request needs besides the model: read and worked out once per document (or part).

    A long document is prepared with its ``split``: the parts to take notes on first, each a job
    of its own. Once their notes are in, the document is prepared again for its page, written
    from the ``notes`` of its ``parts`` parts."""

    title: str
    text: str  # the document's text (a part's own text, for a part)
    language: str
    prompt_tokens: int  # of this job's request
    candidates: list[Candidate]
    notes: str | None = None  # a long document's page: written from these notes on its parts
    parts: int = 1  # how many parts a long document was taken in
    split: tuple[Prepared, ...] = ()  # a long document's parts, to take notes on first
    # The document's text as read (its extractor and locations, for the page): a document's.
    source: DocumentText | None = None


@dataclass(frozen=True, slots=True)
class Part:
    """Which part of which document a part job is."""

    document: Job
    index: int  # from 0
    count: int


@dataclass(slots=True)
class Gathering:
    """A long document's parts out for notes, and what their requests cost (for its page's
    figures), whichever models took them."""

    notes: list[str | None]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0

    def complete(self) -> bool:
        return all(text is not None for text in self.notes)


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
    part: Part | None = None  # a part of a long document, to take notes on
    gathering: Gathering | None = None  # a long document whose parts are out for notes
    urgent: bool = False  # a long document's part or page: taken before any claim
    failed: bool = False  # the document failed (its other parts are dropped)
    flags: tuple[str, ...] = ()  # a second opinion: why its first answer was flagged
    writer: Any = None  # the model (Lane) whose answer is the document's page, once answered
    given_up: str | None = None  # a second opinion cancelled on purpose: why (opinions.py)

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
        self._urgent: deque[Job] = deque()  # long documents' parts and pages (see the docstring)
        self._claims: dict[int, deque[Job]] = {}
        self.stolen = 0
        self.version = 0  # bumped whenever a job comes back: waiting workers may look again
        # Documents still to arrive (:meth:`arrive`): while any is, the queue is not dry.
        self.expecting = 0

    def put_back(self, job: Job, *, news: bool = True) -> None:
        """A job to be tried again, or left for a faster model: next in line for anyone.
        ``news=False`` (a job left for a faster model) does not bump :attr:`version`: it tells
        the workers that left it nothing new, and waking them would only make them leave it
        again. A second opinion goes back to wait with the others."""
        if job.second_opinion:
            self._second.appendleft(job)
        elif job.urgent:
            self._urgent.appendleft(job)
        else:
            self._returned.appendleft(job)
        self.version += news

    def arrive(self, jobs: Iterable[Job], *, dropped: int = 0) -> None:
        """Jobs of documents read after the run began (their text extracted beside the
        requests), at the back of the queue; ``dropped``: documents expected that will not come
        (they hold no text, or failed already)."""
        jobs = list(jobs)
        self._returned.extend(jobs)
        self.expecting = max(0, self.expecting - len(jobs) - dropped)
        self.version += 1

    def add_urgent(self, jobs: Iterable[Job], *, first: bool = False) -> None:
        """A long document's parts (after the urgent jobs waiting), or its page once the notes
        are in (``first``: it completes a document)."""
        jobs = list(jobs)
        for job in jobs:
            job.urgent = True
        if first:
            self._urgent.extendleft(reversed(jobs))
        else:
            self._urgent.extend(jobs)
        self.version += 1

    def ask_another(self, job: Job) -> None:
        """``job`` (answered) waits for a second opinion from a model that has not answered it."""
        job.second_opinion, job.done = True, False
        self._second.append(job)
        self.version += 1

    def waiting_second(self) -> list[Job]:
        """The second opinions waiting for a model."""
        return [job for job in self._second if not job.done]

    def second_opinions(self) -> int:
        """Second opinions waiting for a model."""
        return len(self._second)

    def abandon(self, unwanted: Callable[[Job], bool]) -> list[Job]:
        """Drop the waiting second opinions ``unwanted`` says none will give (their first answers
        stand): the ones dropped."""
        dropped = [job for job in self._second if unwanted(job)]
        if dropped:
            self._second = deque(job for job in self._second if not unwanted(job))
        return dropped

    def take_second(self, wanted: Callable[[Job], bool]) -> Job | None:
        """The first waiting second opinion ``wanted`` accepts, taken out of the queue (for a
        worker with nothing else to do)."""
        for index, job in enumerate(self._second):
            if not job.done and wanted(job):
                del self._second[index]
                return job
        return None

    def remaining(self) -> int:
        """Unstarted documents (claimed, returned and not yet claimed, and long documents'
        pages); consumes the source. Parts are not counted (their document is, by the
        dispatcher, while they are out), nor second opinions: their first answer is kept."""
        rest = sum(1 for _ in self._source) + self.expecting
        waiting = [self._returned, self._urgent, *self._claims.values()]
        return rest + sum(1 for jobs in waiting for job in jobs if job.part is None)

    def has_work(
        self, model: int, second: Callable[[Job], bool] | None = None, *, first_work: bool = True
    ) -> bool:
        """Whether a job came back that the model in place ``model`` may take (of the second
        opinions, those ``second`` accepts, if given; only those, unless ``first_work``)."""
        return (first_work and (bool(self._returned) or bool(self._urgent))) or any(
            job.may_take(model) and not job.done and (second is None or second(job))
            for job in self._second
        )

    def dry(self) -> bool:
        """Whether no document, part or page is left to start (second opinions aside), nor any
        to arrive."""
        if self._returned or self._urgent or any(self._claims.values()) or self.expecting:
            return False
        for job in self._source:  # looked at, and put back in front of the rest
            self._source = chain((job,), self._source)
            return False
        return True

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
        """The first of the next ``look_at`` urgent or returned jobs that ``wanted`` accepts,
        taken out of the queue: a worker that left one job to a faster model may still start
        another."""
        for waiting in (self._urgent, self._returned):
            for index, job in enumerate(islice(waiting, look_at)):
                if wanted(job):
                    del waiting[index]
                    return job
        return None

    def next_job(
        self,
        worker: int,
        claim_size: int,
        model: int | None = None,
        urgent_second: Callable[[Job], bool] | None = None,
        *,
        first_work: bool = True,
    ) -> Job | None:
        """The next job for ``worker`` of the model in place ``model``: a second opinion it may
        give that ``urgent_second`` says is worth waiting for (any, for ``None``), else (unless
        not ``first_work``) a long document's part or page, else the next of its claim (claimed
        again, or stolen, when the claim is empty)."""
        if any(job.done for job in self._second):
            # Answered meanwhile by a request that was already out for it: nothing to ask.
            self._second = deque(job for job in self._second if not job.done)
        for index, job in enumerate(self._second):
            if (model is None or job.may_take(model)) and (
                urgent_second is None or urgent_second(job)
            ):
                del self._second[index]
                return job
        if not first_work:
            return None
        while self._urgent:
            job = self._urgent.popleft()
            if not job.failed and not (job.part is not None and job.part.document.failed):
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
