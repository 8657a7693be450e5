"""Documents whose text is extracted beside the run's requests: the fleet never waits for it.

The plan reads what is quick to read (text files, and documents whose extracted text the store
keeps) and defers the rest (:attr:`~.plan.RunPlan.deferred`: a first run over a drive of PDFs
and decks, say). Past a few, they are not extracted before the first request: the dispatcher
starts on the documents that are ready while a thread of the run's has the deferred ones
extracted by the extracting processes and, :data:`CHUNK` at a time in the order their
extraction ends (a scan read by OCR holds up no other), indexes them for link candidates (and has
them embedded, with an embeddings model: :mod:`~.meaning`), and hands those of the run's
collections
to the queue as they come (:meth:`~wiki_assets.engine.dispatch.WorkQueue.arrive`), or lists
them as holding no text. Until the last has come the queue is not dry, so the run does not end.

What it costs: a document prepared before its partners are indexed is offered the candidates the
index has then; a partner indexed later still finds it, and the index build's backlinks show the
link on both pages (docs/benchmarks.md measures what it costs).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from wiki_assets.engine.dispatch import Dispatcher
from wiki_assets.engine.documents.corpus import DocumentError, SourceDocument
from wiki_assets.engine.documents.reader import Reader
from wiki_assets.engine.errors import NoText
from wiki_assets.engine.ingestion.files_without_text import record_no_text
from wiki_assets.engine.ingestion.flush import Pages
from wiki_assets.engine.ingestion.meaning import LinksByMeaning
from wiki_assets.engine.ingestion.plan import NoTextFile, RunPlan
from wiki_assets.engine.ingestion.progress import Log
from wiki_assets.engine.related import RelatedIndex

CHUNK = 16  # deferred documents extracted, indexed and handed to the queue together


@dataclass(eq=False)
class Arrivals:
    """The deferred documents of one run (see the module docstring)."""

    plan: RunPlan
    reader: Reader
    related: RelatedIndex
    pages: Pages
    log: Log
    meaning: LinksByMeaning | None = None  # told of each chunk indexed, to embed it
    arrived: int = 0  # documents extracted so far
    _stop: bool = field(default=False, init=False)

    @property
    def expected(self) -> int:
        """Documents the queue waits for: those of the run's collections to summarize."""
        return sum(1 for doc in self.plan.deferred if doc.path in self.plan.later)

    async def run(self, dispatcher: Dispatcher) -> None:
        """Extract the deferred documents and hand them over, until done or cancelled (the
        dispatcher has ended: the thread stops at its next chunk, and what did not arrive is
        left for the next run). A failure here is one error line: the documents left are the
        next run's."""
        loop = asyncio.get_running_loop()
        self.log.info(
            f"extracting {len(self.plan.deferred)} documents beside the requests "
            f"({self.expected} to summarize once read)"
        )

        def arrive(
            docs: list[SourceDocument], no_text: list[NoTextFile], indexed: list[str]
        ) -> None:
            if self.meaning is not None and indexed:
                self.meaning.arrived(indexed)
            record_no_text(self.pages, no_text)
            self.plan.total -= len(no_text)
            found = (self.plan.job(doc, self.pages.owner, self.pages.fail) for doc in docs)
            jobs = [job for job in found if job is not None]
            dispatcher.queue.arrive(jobs, dropped=len(no_text) + len(docs) - len(jobs))
            dispatcher.wake()

        work = loop.run_in_executor(
            None, self._extract_all, lambda *args: loop.call_soon_threadsafe(arrive, *args)
        )
        try:
            await asyncio.shield(work)
        except asyncio.CancelledError:
            self._stop = True
            await asyncio.wait([work])  # the thread ends at its next chunk
            raise
        except Exception as error:
            self.log.error(
                f"extracting documents beside the requests failed: {error}; "
                f"{dispatcher.queue.expecting} documents are left for the next run"
            )
            dispatcher.queue.arrive([], dropped=dispatcher.queue.expecting)
            dispatcher.wake()
        finally:
            if self.meaning is not None:
                self.meaning.arrivals_done()

    def _extract_all(
        self, arrive: Callable[[list[SourceDocument], list[NoTextFile], list[str]], object]
    ) -> None:
        """On a thread: the deferred documents extracted in parallel, handed over
        :data:`CHUNK` at a time in the order their extraction ends (a scan read by OCR holds
        up no other), each chunk indexed first."""
        ready = self.reader.extracting(self.plan.deferred)
        try:
            while not self._stop:
                chunk = list(itertools.islice(ready, CHUNK))
                if not chunk:
                    return
                self._hand_over(chunk, arrive)
        finally:
            ready.close()  # (the extractions not begun are cancelled)

    def _hand_over(
        self,
        chunk: list[SourceDocument],
        arrive: Callable[[list[SourceDocument], list[NoTextFile], list[str]], object],
    ) -> None:
        items, docs, no_text = [], [], []
        for doc in chunk:
            wanted = doc.path in self.plan.later
            try:
                text = self.reader.read(doc)
            except NoText as error:
                if wanted:
                    no_text.append(NoTextFile(doc, str(error), new=True))
                continue
            except DocumentError:
                if wanted:
                    docs.append(doc)  # it fails with the reason when prepared
                continue
            items.append((doc.path, text.title, text.text, doc.content_hash))
            if wanted:
                docs.append(doc)
        self.related.update_many(items)
        self.arrived += len(chunk)
        arrive(docs, no_text, [item[0] for item in items])
