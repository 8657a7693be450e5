"""How a document becomes its request: its text read, its link candidates (stored, from the
helper process, or asked of the index), its language and title; longer than one request of the
fleet's smallest context, its parts first (each a job any model may take), and once their notes
are in, the page's request from the notes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.dispatch import Job, Prepared
from wiki_assets.engine.documents.corpus import DocumentError
from wiki_assets.engine.documents.language import LANGUAGES, detect_language
from wiki_assets.engine.documents.lines import number_lines
from wiki_assets.engine.documents.reader import Reader
from wiki_assets.engine.errors import NoText
from wiki_assets.engine.ingestion.plan import RELATED_CANDIDATES
from wiki_assets.engine.prompting.budget import (
    PROMPT_OVERHEAD_TOKENS,
    candidate_listing_tokens,
    estimate_tokens,
    input_budget,
    join_notes,
    split_to_budget,
)
from wiki_assets.engine.prompting.candidate import Candidate
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.related.service import CandidatesService
from wiki_assets.engine.wiki.files import UnsafePath, Wiki

MIN_PART_TOKENS = 64  # a context with less room than this for text cannot be split usefully


@dataclass(eq=False)
class Preparer:
    """The run's :meth:`~wiki_assets.engine.dispatch.Work.prepare` and
    :meth:`~wiki_assets.engine.dispatch.Work.gathered`."""

    reader: Reader  # the document's text, whatever its format
    wiki: Wiki
    related: RelatedIndex
    language: str  # the page-language dial: "auto", or the language every page is written in
    # Tokens of text one request of every model of the fleet can take: a longer document is
    # taken in parts this long (any model may take any part).
    part_budget: int
    full_pages: bool  # some model of the fleet is asked for a full page (with candidates)
    candidates_helper: CandidatesService | None = None  # answers link candidates, if any
    # Told of each document whose candidates are about to be asked for (links by meaning: a
    # page whose candidates had vectors still to come is due for its nearest by meaning).
    before_candidates: Callable[[str], None] | None = None

    @classmethod
    def for_fleet(
        cls,
        endpoints: Sequence[Endpoint],
        dials: Dials,
        *,
        reader: Reader,
        wiki: Wiki,
        related: RelatedIndex,
        candidates_helper: CandidatesService | None,
        before_candidates: Callable[[str], None] | None = None,
    ) -> Preparer:
        return cls(
            reader=reader,
            wiki=wiki,
            related=related,
            language=dials.language,
            part_budget=min(input_budget(e, dials.max_tokens) for e in endpoints),
            full_pages=any(e.page_shape != "compact" for e in endpoints),
            candidates_helper=candidates_helper,
            before_candidates=before_candidates,
        )

    async def prepare(self, job: Job) -> Prepared:
        doc = job.doc
        try:
            if doc.format.extracted:  # from the text store, or extracted now: off the loop
                source = await asyncio.to_thread(self.reader.read, doc)
            else:
                source = self.reader.read(doc)
            self.wiki.check(job.page)
        except UnsafePath as error:
            raise DocumentError(str(error)) from error
        except NoText as error:  # (it held text when the run was planned)
            raise DocumentError(f"no text: {error}") from error
        text = source.text
        candidates = job.candidates
        if self.before_candidates is not None:
            self.before_candidates(doc.path)
        if candidates is None and self.candidates_helper is not None:
            candidates = await self.candidates_helper.candidates(doc.path)
        if candidates is None:
            # The query runs in SQLite's C code, which releases the GIL: off the event loop.
            candidates = await asyncio.to_thread(
                self.related.candidates, doc.path, RELATED_CANDIDATES
            )
        language = detect_language(text) if self.language == "auto" else self.language
        language = LANGUAGES.get(language, language)
        title = source.title
        listing = self._listing_tokens(candidates)
        tokens = estimate_tokens(text)
        # Counted as the model will see it (numbered lines) only when it may be long.
        numbered = number_lines(text) if tokens > self.part_budget // 2 else ""
        if estimate_tokens(numbered) + listing > self.part_budget >= MIN_PART_TOKENS:
            # Longer than one request of the fleet's smallest context: notes on its parts first,
            # each a job any model may take (numbered first: a part keeps the whole document's
            # line numbers).
            # (The estimate of a cut part may exceed its budget by the one token it rounds up.)
            parts = split_to_budget(numbered, self.part_budget - 1)
            return Prepared(
                title, text, language, tokens + PROMPT_OVERHEAD_TOKENS, candidates,
                parts=len(parts), split=self._parts(title, parts, language), source=source,
            )  # fmt: skip
        prompt_tokens = tokens + PROMPT_OVERHEAD_TOKENS
        return Prepared(title, text, language, prompt_tokens, candidates, source=source)

    def gathered(self, job: Job, notes: list[str]) -> Prepared:
        prepared = job.prepared
        assert prepared is not None
        joined = join_notes(notes)
        tokens = estimate_tokens(joined)
        listing = self._listing_tokens(prepared.candidates)
        if tokens + listing > self.part_budget and len(notes) > 1:
            # Still too long for one request: notes on the notes, like a map step again.
            split = self._parts(prepared.title, split_to_budget(joined, self.part_budget - 1),
                                prepared.language)  # fmt: skip
            return replace(prepared, split=split)
        return replace(
            prepared,
            notes=joined,
            split=(),
            prompt_tokens=tokens + listing + PROMPT_OVERHEAD_TOKENS,
        )

    def _parts(self, title: str, parts: list[str], language: str) -> tuple[Prepared, ...]:
        return tuple(
            Prepared(title, part, language, estimate_tokens(part) + PROMPT_OVERHEAD_TOKENS, [])
            for part in parts
        )

    def _listing_tokens(self, candidates: list[Candidate]) -> int:
        """What a page request's list of candidates costs, where any model of the fleet asks
        for a full page (a compact page lists none)."""
        return candidate_listing_tokens(candidates) if self.full_pages else 0
