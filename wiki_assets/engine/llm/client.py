"""The client that turns one document into one summary on one model endpoint: the page request
(full or compact), a long document's notes on its parts, and shorter parts when a server finds a
prompt too long. Each request goes through the endpoint's :class:`~.chat.Chat`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.documents.lines import number_lines
from wiki_assets.engine.llm.chat import Chat, Overflow, Usage
from wiki_assets.engine.llm.compact import (
    citable_lines,
    compact_messages,
    compact_schema,
    parse_compact,
    shown_lines,
)
from wiki_assets.engine.prompting.budget import (
    candidate_list,
    estimate_tokens,
    input_budget,
    join_notes,
    split_to_budget,
)
from wiki_assets.engine.prompting.candidate import Candidate, PageRequest
from wiki_assets.engine.prompting.page import DraftError, PageDraft, draft_schema, parse_draft
from wiki_assets.engine.prompting.prompts import (
    CHUNK_SYSTEM,
    CHUNK_USER,
    LIBRARIAN_SYSTEM,
    PAGE_USER,
    PARTS_NOTE,
    REPAIR_USER,
)
from wiki_assets.engine.prompting.results import Notes, Summary
from wiki_assets.engine.verification.prompt import (
    Judgement,
    judge_messages,
    judge_schema,
    parse_verdicts,
)


class ModelClient:
    """One endpoint's async client. Create it inside the event loop that uses it."""

    def __init__(
        self,
        endpoint: Endpoint,
        max_tokens: int,
        on_overload: Callable[[], None] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.max_tokens = endpoint.max_tokens or max_tokens
        self._chat = Chat(endpoint, self.max_tokens, on_overload)

    async def close(self) -> None:
        await self._chat.close()

    def _input_budget(self, reserved: str = "") -> int:
        return input_budget(self.endpoint, self.max_tokens) - estimate_tokens(reserved)

    async def summarize(self, request: PageRequest) -> Summary:
        """One page for one document. A request's ``notes`` are a long document's notes on its
        ``parts`` parts (taken by whichever models of the fleet took the parts), to write the
        page from. Without them, a document longer than this model's context is summarized over
        its whole length here: each part is turned into notes, and the page is written from the
        notes."""
        path, title, text, language = request.path, request.title, request.text, request.language
        candidates, notes, parts = request.candidates, request.notes, request.parts
        compact = self.endpoint.page_shape == "compact"
        prose = self.endpoint.writes(language)
        # The compact request lists no candidates: its links are the closest ones.
        listing = "" if compact else candidate_list(candidates)
        usage = Usage()
        # The model sees numbered lines so that a key point can cite them; numbered before any
        # split, a part keeps the whole document's numbers.
        source = number_lines(text) if notes is None else notes
        body, count = source, parts
        budget = self._input_budget(listing)
        if budget < 64:
            raise self._chat.error(
                f"context of {self.endpoint.context_tokens} tokens leaves no room for input "
                f"after max_tokens={self.max_tokens}",
                "rejected",
            )
        # The estimate is pessimistic; a server that still reports an overflow gets parts half
        # as long.
        overflow: Overflow | None = None
        for _ in range(3):
            try:
                if estimate_tokens(body) > budget:
                    body, split = await self._notes(path, source, budget, language, usage)
                    count = split if notes is None else parts
                if compact:
                    draft, finish = await self._compact_page(
                        path, title, text, body, language, prose, candidates, usage
                    )
                else:
                    draft, finish = await self._page(
                        path, title, body, count, listing, language, candidates, usage
                    )
                break
            except Overflow as refused:
                overflow = refused
                budget //= 2
                body, count = source, parts
        else:
            raise self._chat.overflow_error(overflow)
        allowed = {candidate.path for candidate in candidates} - {path}
        return Summary(
            draft=draft.keep_links_to(allowed),
            model=self.endpoint.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            finish_reason=finish,
            parts=count,
            requests=usage.requests,
            prose=prose,
        )

    async def judge(self, text: str, sentences: Sequence[str]) -> Judgement:
        """This model's verdict on each of ``sentences`` against ``text`` (a whole document):
        one request, as the judge's room words it (:mod:`wiki_assets.engine.verification.prompt`).
        A document too long for the context is not judged."""
        usage = Usage()
        numbered = number_lines(text)
        if estimate_tokens(numbered) > self._input_budget("\n".join(sentences)):
            raise self._chat.error("document too long to judge in one request", "rejected")
        messages = judge_messages(numbered, sentences)
        try:
            content, _ = await self._chat.structured(
                messages, judge_schema(len(sentences)), usage, temperature=0.0
            )
        except Overflow as refused:
            raise self._chat.overflow_error(refused) from None
        return Judgement(
            verdicts=parse_verdicts(content, len(sentences)),
            model=self.endpoint.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            requests=usage.requests,
        )

    async def notes(self, path: str, text: str, part: int, parts: int, language: str) -> Notes:
        """Notes on part ``part`` of ``parts`` of a long document (``text``: its lines, numbered
        as in the whole document). A part the server still finds too long is taken in pieces
        half as long."""
        usage = Usage()
        budget = self._input_budget()
        overflow: Overflow | None = None
        for _ in range(3):
            try:
                if estimate_tokens(text) > budget:
                    content, _ = await self._notes(path, text, budget, language, usage)
                else:
                    content = await self._part_notes(path, text, part, parts, language, usage)
                break
            except Overflow as refused:
                overflow = refused
                budget //= 2
        else:
            raise self._chat.overflow_error(overflow)
        return Notes(
            text=content,
            model=self.endpoint.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            requests=usage.requests,
        )

    async def _notes(
        self, path: str, text: str, budget: int, language: str, usage: Usage
    ) -> tuple[str, int]:
        """Map: notes on each part; repeated on the notes themselves if they are still too long."""
        chunks = split_to_budget(text, budget)
        notes = []
        for index, chunk in enumerate(chunks, start=1):
            notes.append(await self._part_notes(path, chunk, index, len(chunks), language, usage))
        joined = join_notes(notes)
        if estimate_tokens(joined) > budget and len(chunks) > 1:
            deeper, _ = await self._notes(path, joined, budget, language, usage)
            return deeper, len(chunks)
        return joined, len(chunks)

    async def _part_notes(
        self, path: str, text: str, part: int, parts: int, language: str, usage: Usage
    ) -> str:
        messages = [
            {"role": "system", "content": CHUNK_SYSTEM.format(language=language)},
            {
                "role": "user",
                "content": CHUNK_USER.format(path=path, part=part, parts=parts, text=text),
            },
        ]
        content, _ = await self._chat.request(messages, None, usage)
        return content

    async def _page(
        self,
        path: str,
        title: str,
        body: str,
        parts: int,
        listing: str,
        language: str,
        candidates: Sequence[Candidate],
        usage: Usage,
    ) -> tuple[PageDraft, str]:
        prompt = PAGE_USER.format(
            language=language,
            path=path,
            title=title,
            parts_note=PARTS_NOTE.format(parts=parts) if parts > 1 else "",
            text=body,
            candidates=listing,
        )
        messages: list[dict[str, str]] = [
            {"role": "system", "content": LIBRARIAN_SYSTEM},
            {"role": "user", "content": prompt},
        ]
        schema = draft_schema(sorted({c.path for c in candidates} - {path}))
        content, finish = await self._chat.structured(messages, schema, usage)
        try:
            return parse_draft(content, truncated=finish == "length"), finish
        except DraftError as problem:
            # One repair attempt, in the same conversation, then the document fails.
            messages += [
                {"role": "assistant", "content": content},
                {"role": "user", "content": REPAIR_USER.format(problem=problem)},
            ]
            content, finish = await self._chat.structured(messages, schema, usage)
            try:
                return parse_draft(content, truncated=finish == "length"), finish
            except DraftError as again:
                raise self._chat.error(
                    f"unparsable page after one repair ({again})", "garbage"
                ) from None

    async def _compact_page(
        self,
        path: str,
        title: str,
        text: str,
        body: str,
        language: str,
        prose: bool,
        candidates: Sequence[Candidate],
        usage: Usage,
    ) -> tuple[PageDraft, str]:
        """A compact page (:mod:`wiki_assets.engine.llm.compact`): the key lines by number, and
        prose where the model writes the language. The grammar of a constraining server keeps
        the answer valid, so there is no repair round: an unparsable answer fails the
        document."""
        citable = citable_lines(text, title)
        numbers = sorted(shown_lines(body) & citable.keys())
        schema = compact_schema(numbers, prose=prose, language=language)
        messages = compact_messages(body, prose=prose, language=language)
        content, finish = await self._chat.structured(messages, schema, usage, temperature=0.0)
        try:
            draft = parse_compact(
                content, truncated=finish == "length", citable=citable, title=title,
                path=path, candidates=candidates, prose=prose, language=language,
            )  # fmt: skip
        except DraftError as problem:
            raise self._chat.error(f"unparsable compact page ({problem})", "garbage") from None
        return draft, finish
