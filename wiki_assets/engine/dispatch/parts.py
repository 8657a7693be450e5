"""A long document's parts: jobs of their own, for any free worker of any model, and its page once
their notes are in.

A document longer than one request of the fleet's smallest context comes back from
:meth:`~wiki_assets.engine.dispatch.work.Work.prepare` with its parts (``Prepared.split``). Each
part goes to the queue ahead of every claim; a request for a part returns notes
(:mod:`~wiki_assets.engine.dispatch.request`), and once every part has them the run turns them
into the page's request (:meth:`~wiki_assets.engine.dispatch.work.Work.gathered`), or into
another round of parts when the notes are still too long for one request.
"""

from __future__ import annotations

from collections.abc import Callable

from wiki_assets.engine.dispatch.queue import Gathering, Job, Part, WorkQueue
from wiki_assets.engine.dispatch.work import Work


class Parts:
    """The long documents whose parts are out for notes, and the jobs their parts added."""

    def __init__(self, queue: WorkQueue, work: Work, wake: Callable[[], None]) -> None:
        self.queue = queue
        self.work = work
        self.wake = wake  # every waiting worker looks again
        self.added = 0  # jobs beyond one per document: long documents' parts
        self.gathering: set[Job] = set()  # long documents whose parts are out for notes

    def spread(self, job: Job) -> None:
        """A long document: its parts go to the queue as jobs of their own, ahead of every
        claim, for any free worker of any model; its page follows once their notes are in
        (:meth:`gathered`)."""
        prepared = job.prepared
        assert prepared is not None
        count = len(prepared.split)
        parts = [
            Job(job.doc, job.page, prepared=part, part=Part(job, index, count))
            for index, part in enumerate(prepared.split)
        ]
        if job.gathering is None:
            job.gathering = Gathering([None] * count)
        else:  # another round: notes on the notes
            job.gathering.notes = [None] * count
        self.added += count
        self.gathering.add(job)
        self.queue.add_urgent(parts)
        self.wake()

    def gathered(self, job: Job) -> None:
        """Every part of ``job`` has its notes: its page is next, first in line (or another
        round of notes, if they are still too long for one request)."""
        gathering = job.gathering
        assert gathering is not None and job.prepared is not None
        notes = [text for text in gathering.notes if text is not None]
        job.prepared = self.work.gathered(job, notes)
        if job.prepared.split:
            self.gathering.discard(job)
            self.spread(job)
            return
        self.gathering.discard(job)
        self.queue.add_urgent([job], first=True)
        self.wake()

    def out(self) -> int:
        """Long documents whose parts are out (their document has not failed)."""
        return sum(1 for job in self.gathering if not job.failed)

    def none_out(self) -> bool:
        """No long document waits for its parts' notes (one whose document failed is
        forgotten)."""
        if any(job.failed for job in self.gathering):
            self.gathering = {job for job in self.gathering if not job.failed}
        return not self.gathering
