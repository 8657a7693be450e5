"""What a model must return for one document: a librarian's page, validated by pydantic.

The same schema is sent as ``response_format`` (JSON schema) to servers that constrain output with
it, with the related-document paths restricted to the candidates (an ``enum``), so a model cannot
invent a link. Whatever the server, the answer is parsed and validated here; links to anything but
a candidate are dropped.

Each key point carries its evidence: a quote copied from the document and the line numbers it
stands on (the prompt shows the document's lines numbered). :mod:`wiki_assets.engine.quality`
checks both against the document. Validation is tolerant: a plain string (what results journaled
before evidence held, or what a small model writes) is a point without evidence, which is shown
as unverified rather than rejected.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from wiki_assets.engine.errors import DraftError as DraftError
from wiki_assets.engine.text.sentences import finished_sentences

MAX_ITEMS = 8


class RelatedLink(BaseModel):
    model_config = ConfigDict(extra="ignore")

    path: str = Field(description="Path of one of the candidate documents, exactly as given.")
    reason: str = Field(description="One short sentence: why a reader of this document needs it.")


# A TypedDict, not a model: a draft's key points are plain JSON, journaled as they are. (Its
# docstring travels in the schema sent to the model, so it is kept short.)
class KeyPoint(TypedDict):
    """One fact and where the document states it."""

    text: Annotated[str, Field(description="One fact the document states, in a short sentence.")]
    quote: Annotated[str, Field(description="The document's words that state it, copied exactly.")]
    lines: Annotated[list[int], Field(description="The first and last line number of the quote.")]


def key_point(value: Any) -> KeyPoint | None:
    """``value`` as a key point, tolerantly: a string is a point without evidence; missing or
    odd evidence (``"lines": 12`` or ``"12-14"``) becomes what it can. ``None``: no text."""
    if isinstance(value, str):
        value = {"text": value}
    if not isinstance(value, dict):
        return None
    text = " ".join(str(value.get("text") or "").split())
    if not text:
        return None
    quote = " ".join(str(value.get("quote") or "").split())
    return {"text": text, "quote": quote, "lines": _line_range(value.get("lines"))}


def _line_range(value: Any) -> list[int]:
    """The first and last cited line (one number for a single line), in order; [] if none."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        numbers = [value]
    elif isinstance(value, str):
        numbers = [int(found) for found in re.findall(r"\d+", value)]
    elif isinstance(value, list):
        numbers = [item for item in value if isinstance(item, int) and not isinstance(item, bool)]
    else:
        numbers = []
    numbers = [number for number in numbers if number >= 1][:2]
    return sorted(set(numbers))


class PageDraft(BaseModel):
    """A catalogue entry: what the document is, what it is for, and what it relates to."""

    model_config = ConfigDict(extra="ignore")

    title: str = Field(description="The document's title, in the document's language.")
    description: str = Field(description="One line: what this document is and who needs it.")
    summary: str = Field(description="Two to four sentences: what it says and what it is for.")
    key_points: list[KeyPoint] = Field(
        default_factory=list, description="Up to 4 key facts, each with its evidence."
    )
    topics: list[str] = Field(
        default_factory=list, description="Up to 5 subjects of the document, a few words each."
    )
    related: list[RelatedLink] = Field(
        default_factory=list, description="Candidates a reader of this document should also see."
    )

    @field_validator("title", "description", "summary")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()

    @field_validator("key_points", mode="before")
    @classmethod
    def _clean_points(cls, values: Any) -> list[KeyPoint]:
        points: dict[str, KeyPoint] = {}  # by text: each fact once
        for value in values if isinstance(values, list) else []:
            point = key_point(value)
            if point is not None:
                points.setdefault(point["text"], point)
        return list(points.values())[:MAX_ITEMS]

    @field_validator("topics")
    @classmethod
    def _clean_list(cls, values: list[str]) -> list[str]:
        cleaned = [" ".join(str(value).split()) for value in values]
        return list(dict.fromkeys(value for value in cleaned if value))[:MAX_ITEMS]

    def keep_links_to(self, allowed: set[str]) -> PageDraft:
        """Only links to known candidates survive, each once, never to the page itself."""
        seen: set[str] = set()
        kept = []
        for link in self.related:
            if link.path in allowed and link.path not in seen:
                seen.add(link.path)
                kept.append(link)
        return self.model_copy(update={"related": kept[:MAX_ITEMS]})


# Bounds for grammar-constrained servers: a small model fills an unbounded string or list until
# max_tokens runs out. Fields come in schema order, so a cut answer keeps title and summary.
_LENGTHS = {"title": 120, "description": 200, "summary": 700}
_LISTS = {"key_points": 4, "topics": 5}  # most items
_ITEM_LENGTHS = {"topics": 32}  # longest string item
_POINT_LENGTHS = {"text": 160, "quote": 200}
MAX_RELATED = 5


@lru_cache(maxsize=1)
def _base_schema() -> dict[str, Any]:
    """The page schema without link targets. Shared by every request: never modified (each
    request's schema copies what it changes, :func:`draft_schema`)."""
    schema = PageDraft.model_json_schema()
    for name, length in _LENGTHS.items():
        schema["properties"][name]["maxLength"] = length
    for name, items in _LISTS.items():
        schema["properties"][name]["maxItems"] = items
    for name, length in _ITEM_LENGTHS.items():
        schema["properties"][name]["items"]["maxLength"] = length
    point = schema["$defs"]["KeyPoint"]["properties"]
    for name, length in _POINT_LENGTHS.items():
        point[name]["maxLength"] = length
    point["lines"].update(maxItems=2)
    point["lines"]["items"]["minimum"] = 1
    schema["$defs"]["RelatedLink"]["properties"]["reason"]["maxLength"] = 160
    schema["required"] = list(schema["properties"])
    return schema


def draft_schema(candidates: list[str]) -> dict[str, Any]:
    """The JSON schema of a page, with link targets limited to ``candidates``: the shared base
    schema with new dicts along the two paths that change (a request is built per document;
    a deep copy of the whole schema cost more than the rest of the request's preparation)."""
    base = _base_schema()
    properties = dict(base["properties"])
    related = properties["related"] = dict(properties["related"])
    schema = {**base, "properties": properties}
    if candidates:
        link = base["$defs"]["RelatedLink"]
        path = {**link["properties"]["path"], "enum": candidates}
        link = {**link, "properties": {**link["properties"], "path": path}}
        schema["$defs"] = {**base["$defs"], "RelatedLink": link}
        related["maxItems"] = min(MAX_RELATED, len(candidates))
    else:
        related["maxItems"] = 0
    return schema


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def close_truncated_json(text: str) -> str | None:
    """Best effort for an answer cut off by max_tokens: close the open string and brackets, or
    fall back to the last complete member. ``None`` if nothing sensible is left. The open string
    ends at its last finished sentence where it has one: the words after it are a sentence the
    cut left unsaid ("… a seven-minute walk from Pangyo station on 16"), and a page that shows
    them states what the model never finished saying."""
    stack: list[str] = []
    in_string = escaped = False
    opened = 0  # where the string being read began
    last_member: tuple[int, list[str]] | None = None  # (cut position, open brackets there)
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string, opened = True, position
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and stack:
            stack.pop()
        elif char == "," and stack:
            last_member = (position, list(stack))
    attempts = []
    if stack or in_string:
        tail = text.rstrip()
        if in_string:
            tail = tail[: opened + 1] + finished_sentences(tail[opened + 1 :]) + '"'
        attempts.append(tail.rstrip(",:") + "".join(reversed(stack)))
    if last_member is not None:
        cut, open_brackets = last_member
        attempts.append(text[:cut] + "".join(reversed(open_brackets)))
    for attempt in attempts:
        try:
            json.loads(attempt, strict=False)
        except json.JSONDecodeError:
            continue
        return attempt
    return None


def parse_draft(text: str, truncated: bool = False) -> PageDraft:
    """The page in a model's answer. ``truncated``: the answer hit max_tokens, so an unclosed
    JSON object is closed (a summary cut short beats no page; the page is flagged)."""
    body = text.strip()
    if truncated and body.count("{") > body.count("}"):
        closed = close_truncated_json(body[body.find("{") :])
        if closed is not None:
            body = closed
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise DraftError("the answer contains no JSON object")
    try:
        # strict=False: grammar-constrained servers can emit raw newlines inside strings.
        data = json.loads(body[start : end + 1], strict=False)
    except json.JSONDecodeError as error:
        raise DraftError(f"invalid JSON: {error}") from error
    try:
        return PageDraft.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        raise DraftError(f"JSON does not match the page schema: {problems}") from error
