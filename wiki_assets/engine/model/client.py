"""The client that turns one document into one summary on one model endpoint."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.errors import ErrorKind, ModelError
from wiki_assets.engine.model.budget import estimate_tokens, split_to_budget
from wiki_assets.engine.model.compact import (
    citable_lines,
    compact_messages,
    compact_schema,
    parse_compact,
    shown_lines,
)
from wiki_assets.engine.model.page import DraftError, PageDraft, draft_schema, parse_draft
from wiki_assets.engine.model.prompts import (
    CHUNK_SYSTEM,
    CHUNK_USER,
    LIBRARIAN_SYSTEM,
    NO_CANDIDATES,
    PAGE_USER,
    PARTS_NOTE,
    REPAIR_USER,
)
from wiki_assets.engine.model.response import (
    OUTPUT_MODES,
    Answer,
    error_kind,
    error_reason,
    overflows_context,
    refuses_format,
    response_format,
)
from wiki_assets.engine.quality import number_lines
from wiki_assets.engine.related import Candidate

# Room for the system prompt, the user template and the chat template's own tokens.
PROMPT_OVERHEAD_TOKENS = 160

PLATFORM_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
)
"""The headers openai's client adds to every request to describe itself to OpenAI's API. Not
sent (:data:`_REQUEST_OPTIONS` omits them): no server this engine talks to reads them, and the
client copies and normalises every header of every request (without them, about 13 % less client
CPU per request against an instant server)."""

_REQUEST_OPTIONS: openai.RequestOptions = {
    "headers": {name: openai.Omit() for name in PLATFORM_HEADERS}
}


@dataclass(frozen=True, slots=True)
class Summary:
    """One document's page, and what writing it took on the model."""

    draft: PageDraft
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    parts: int  # 1, or how many chunks a long document was summarized in
    requests: int
    # False: the model picked the key lines but wrote no prose (a compact page in a language it
    # does not write); the page is labelled as not summarized.
    prose: bool = True


@dataclass(frozen=True, slots=True)
class Notes:
    """Notes on one part of a long document, and what taking them took on the model."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    requests: int


class _Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0


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
        self.output_mode = OUTPUT_MODES[0]  # downgraded, once per client, when a server refuses
        hooks: dict[str, list[Callable[..., Any]]] = {}
        if on_overload is not None:
            # openai retries 429/5xx itself and reports only the last failure; the hook sees
            # every answer, so the concurrency controller can back off at the first push-back.
            async def watch(response: Any) -> None:  # an httpx(-compatible) Response
                if response.status_code == 429 or response.status_code >= 500:
                    on_overload()

            hooks = {"response": [watch]}
        # openai's client owns HTTP retries (with backoff, honouring Retry-After) and timeouts.
        # Its aiohttp transport (the ``openai[aiohttp]`` extra, documented "for improved
        # concurrency performance") replaces httpx's connection pool, which checks every pooled
        # connection with a system call on each request: with dozens of requests in flight that
        # was the single largest cost of a request against a fast server.
        self._client = openai.AsyncOpenAI(
            base_url=endpoint.base_url,
            api_key=endpoint.api_key(),
            timeout=endpoint.timeout_s,
            max_retries=endpoint.max_retries,
            http_client=openai.DefaultAioHttpClient(event_hooks=hooks),
        )

    async def close(self) -> None:
        await self._client.close()

    def _input_budget(self, reserved: str = "") -> int:
        return input_budget(self.endpoint, self.max_tokens) - estimate_tokens(reserved)

    async def summarize(
        self,
        path: str,
        title: str,
        text: str,
        candidates: Sequence[Candidate] = (),
        language: str = "English",
        *,
        notes: str | None = None,
        parts: int = 1,
    ) -> Summary:
        """One page for one document. ``notes`` are a long document's notes on its ``parts``
        parts (taken by whichever models of the fleet took the parts), to write the page from.
        Without them, a document longer than this model's context is summarized over its whole
        length here: each part is turned into notes, and the page is written from the notes."""
        compact = self.endpoint.page_shape == "compact"
        prose = self.endpoint.writes(language)
        # The compact request lists no candidates: its links are the closest ones.
        listing = "" if compact else _candidate_list(candidates)
        usage = _Usage()
        # The model sees numbered lines so that a key point can cite them; numbered before any
        # split, a part keeps the whole document's numbers.
        source = number_lines(text) if notes is None else notes
        body, count = source, parts
        budget = self._input_budget(listing)
        if budget < 64:
            raise self._error(
                f"context of {self.endpoint.context_tokens} tokens leaves no room for input "
                f"after max_tokens={self.max_tokens}",
                "rejected",
            )
        # The estimate is pessimistic; a server that still reports an overflow gets parts half
        # as long.
        overflow: _Overflow | None = None
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
            except _Overflow as refused:
                overflow = refused
                budget //= 2
                body, count = source, parts
        else:
            raise self._overflow_error(overflow)
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

    async def notes(self, path: str, text: str, part: int, parts: int, language: str) -> Notes:
        """Notes on part ``part`` of ``parts`` of a long document (``text``: its lines, numbered
        as in the whole document). A part the server still finds too long is taken in pieces
        half as long."""
        usage = _Usage()
        budget = self._input_budget()
        overflow: _Overflow | None = None
        for _ in range(3):
            try:
                if estimate_tokens(text) > budget:
                    content, _ = await self._notes(path, text, budget, language, usage)
                else:
                    content = await self._part_notes(path, text, part, parts, language, usage)
                break
            except _Overflow as refused:
                overflow = refused
                budget //= 2
        else:
            raise self._overflow_error(overflow)
        return Notes(
            text=content,
            model=self.endpoint.model,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            requests=usage.requests,
        )

    def _overflow_error(self, overflow: _Overflow | None) -> ModelError:
        """The server's last refusal of a prompt as too long: its status (and request id) like
        any other answer's."""
        assert overflow is not None  # every attempt ended in one
        return self._error(
            "prompt too long for the model's context",
            "rejected",
            overflow.status_code,
            overflow.request_id,
        )

    async def _notes(
        self, path: str, text: str, budget: int, language: str, usage: _Usage
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
        self, path: str, text: str, part: int, parts: int, language: str, usage: _Usage
    ) -> str:
        messages = [
            {"role": "system", "content": CHUNK_SYSTEM.format(language=language)},
            {
                "role": "user",
                "content": CHUNK_USER.format(path=path, part=part, parts=parts, text=text),
            },
        ]
        content, _ = await self._request(messages, None, usage)
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
        usage: _Usage,
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
        content, finish = await self._structured(messages, schema, usage)
        try:
            return parse_draft(content, truncated=finish == "length"), finish
        except DraftError as problem:
            # One repair attempt, in the same conversation, then the document fails.
            messages += [
                {"role": "assistant", "content": content},
                {"role": "user", "content": REPAIR_USER.format(problem=problem)},
            ]
            content, finish = await self._structured(messages, schema, usage)
            try:
                return parse_draft(content, truncated=finish == "length"), finish
            except DraftError as again:
                raise self._error(
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
        usage: _Usage,
    ) -> tuple[PageDraft, str]:
        """A compact page (:mod:`wiki_assets.engine.model.compact`): the key lines by number, and
        prose where the model writes the language. The grammar of a constraining server keeps
        the answer valid, so there is no repair round: an unparsable answer fails the
        document."""
        citable = citable_lines(text, title)
        numbers = sorted(shown_lines(body) & citable.keys())
        schema = compact_schema(numbers, prose=prose, language=language)
        messages = compact_messages(body, prose=prose, language=language)
        content, finish = await self._structured(messages, schema, usage, temperature=0.0)
        try:
            draft = parse_compact(
                content, truncated=finish == "length", citable=citable, title=title,
                path=path, candidates=candidates, prose=prose,
            )  # fmt: skip
        except DraftError as problem:
            raise self._error(f"unparsable compact page ({problem})", "garbage") from None
        return draft, finish

    async def _structured(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        usage: _Usage,
        temperature: float = 0.2,
    ) -> tuple[str, str]:
        while True:
            mode = self.output_mode
            try:
                return await self._request(
                    messages, response_format(mode, schema), usage, temperature
                )
            except _FormatRefused:
                self.output_mode = OUTPUT_MODES[OUTPUT_MODES.index(mode) + 1]

    async def _request(
        self,
        messages: list[dict[str, str]],
        output_format: Any,
        usage: _Usage,
        temperature: float = 0.2,
    ) -> tuple[str, str]:
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            # Greedy for the compact page (it picks line numbers); a little spread for prose.
            "temperature": temperature,
        }
        if output_format is not None:
            body["response_format"] = output_format
        try:
            # The client's generic POST, not ``chat.completions.create``: that method walks every
            # request through its type-driven parameter transform and builds the whole typed
            # ChatCompletion from the answer (together about as much CPU as the HTTP exchange
            # against a fast server). The body here is plain strings and numbers, and the engine
            # reads four fields of the answer, which Answer validates. Retries, timeouts,
            # headers, hooks and errors are the same: both go through the client's one request
            # path, and ``cast_to=object`` hands back the decoded JSON.
            data = await self._client.post(
                "/chat/completions", cast_to=object, body=body, options=_REQUEST_OPTIONS
            )
            response = Answer.model_validate(data)
        except openai.APIStatusError as error:
            if output_format is not None and output_format.get("type") != "text":
                if refuses_format(error):
                    raise _FormatRefused from error
            if overflows_context(error):
                raise _Overflow(error) from error
            raise self._error(
                error_reason(error), error_kind(error), error.status_code, error.request_id
            ) from error
        except openai.APIError as error:
            kind = error_kind(error)
            # A connection that could not be made: no answer, and not a request out of time.
            unreachable = isinstance(error, openai.APIConnectionError) and kind != "timeout"
            raise self._error(error_reason(error), kind, unreachable=unreachable) from error
        except (ValueError, TypeError, AttributeError, KeyError) as error:
            # openai parses the body itself: a non-JSON or malformed answer surfaces here.
            raise self._error(f"unparsable answer ({type(error).__name__})", "garbage") from error
        usage.requests += 1
        if response.usage:
            usage.prompt_tokens += response.usage.prompt_tokens or 0
            usage.completion_tokens += response.usage.completion_tokens or 0
        if not response.choices:
            raise self._error("answer without choices", "garbage")
        choice = response.choices[0]
        content = (choice.message.content or "").strip()
        if not content:
            raise self._error("empty answer", "garbage")
        return content, choice.finish_reason or "stop"

    def _error(
        self,
        reason: str,
        kind: ErrorKind,
        status_code: int | None = None,
        request_id: str | None = None,
        *,
        unreachable: bool = False,
    ) -> ModelError:
        return ModelError(
            f"model {self.endpoint.name}: {reason}",
            kind,
            status_code=status_code,
            request_id=request_id,
            reason=reason,
            unreachable=unreachable,
        )


class _FormatRefused(Exception):
    """The server refused the form of structured output asked for; the client asks for the next."""


class _Overflow(Exception):
    """The server refused the prompt as longer than its context; the client retries shorter."""

    def __init__(self, error: openai.APIStatusError) -> None:
        super().__init__(error.message)
        self.status_code = error.status_code
        self.request_id = error.request_id


def input_budget(endpoint: Endpoint, max_tokens: int) -> int:
    """Tokens of document text (or notes) that fit one request to ``endpoint`` besides its
    prompts and its answer (``max_tokens``, unless the endpoint caps its own)."""
    return endpoint.context_tokens - (endpoint.max_tokens or max_tokens) - PROMPT_OVERHEAD_TOKENS


def join_notes(notes: Sequence[str]) -> str:
    """A long document's notes on its parts, in order, as the page request shows them."""
    return "\n\n".join(f"Part {index}: {text}" for index, text in enumerate(notes, start=1))


def candidate_listing_tokens(candidates: Sequence[Candidate]) -> int:
    """What the list of link candidates costs a page request, in tokens."""
    return estimate_tokens(_candidate_list(candidates))


def _candidate_list(candidates: Sequence[Candidate]) -> str:
    if not candidates:
        return NO_CANDIDATES
    return "\n".join(f"- {c.path}: {c.title} — {c.line}" for c in candidates)
