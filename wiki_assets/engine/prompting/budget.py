"""Token budgets without a tokenizer.

Requests must fit the model's context window, which is counted in tokens. Tokenizers of small
models are generous with ASCII (about four characters a token) and expensive for Hangul and other
non-Latin scripts (SmolLM2 spends 1.4-1.75 tokens on one Korean character), so a character budget
that suits English overflows on Korean. These estimates err on the expensive side.

What fits one request is counted here too (:func:`input_budget`): the document's text (or a long
document's notes, :func:`join_notes`) beside the prompts, the list of link candidates and the
answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wiki_assets.engine.prompting.prompts import NO_CANDIDATES

if TYPE_CHECKING:
    from wiki_assets.engine.config import Endpoint
    from wiki_assets.engine.prompting.candidate import Candidate

# Room for the system prompt, the user template and the chat template's own tokens.
PROMPT_OVERHEAD_TOKENS = 160

ASCII_TOKENS_PER_CHAR = 0.3
OTHER_TOKENS_PER_CHAR = 1.8


def char_cost(char: str) -> float:
    return ASCII_TOKENS_PER_CHAR if char < "\x80" else OTHER_TOKENS_PER_CHAR


def estimate_tokens(text: str) -> int:
    # Counted in C: encoding to ASCII with errors ignored keeps exactly the ASCII characters.
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    return int(ascii_chars * ASCII_TOKENS_PER_CHAR + other * OTHER_TOKENS_PER_CHAR) + 1


def cut_to_budget(text: str, budget_tokens: int) -> tuple[str, bool]:
    """The longest prefix of ``text`` estimated to fit ``budget_tokens``, cut at whitespace when
    possible; the flag says whether anything was cut."""
    if estimate_tokens(text) <= budget_tokens:
        return text, False
    spent = 0.0
    end = 0
    while end < len(text) and spent + char_cost(text[end]) <= budget_tokens:
        spent += char_cost(text[end])
        end += 1
    space = text.rfind(" ", 0, end)
    newline = text.rfind("\n", 0, end)
    boundary = max(space, newline)
    if boundary > end * 0.8:
        end = boundary
    return text[:end].rstrip(), True


def split_to_budget(text: str, budget_tokens: int) -> list[str]:
    """Consecutive parts of ``text``, each estimated to fit ``budget_tokens``, cut at whitespace;
    together they hold the whole text (only the whitespace at the cuts is dropped)."""
    parts = []
    rest = text
    while rest.strip():
        part, cut = cut_to_budget(rest, budget_tokens)
        if not part:  # a single "word" longer than the budget: cut it mid-word
            part, cut = rest[: max(1, int(budget_tokens / OTHER_TOKENS_PER_CHAR))], True
        parts.append(part)
        rest = rest[len(part) :].lstrip() if cut else ""
    return parts


def input_budget(endpoint: Endpoint, max_tokens: int) -> int:
    """Tokens of document text (or notes) that fit one request to ``endpoint`` besides its
    prompts and its answer (``max_tokens``, unless the endpoint caps its own)."""
    return endpoint.context_tokens - (endpoint.max_tokens or max_tokens) - PROMPT_OVERHEAD_TOKENS


def join_notes(notes: Sequence[str]) -> str:
    """A long document's notes on its parts, in order, as the page request shows them."""
    return "\n\n".join(f"Part {index}: {text}" for index, text in enumerate(notes, start=1))


def candidate_listing_tokens(candidates: Sequence[Candidate]) -> int:
    """What the list of link candidates costs a page request, in tokens."""
    return estimate_tokens(candidate_list(candidates))


def candidate_list(candidates: Sequence[Candidate]) -> str:
    """The list of link candidates as a page request shows them."""
    if not candidates:
        return NO_CANDIDATES
    return "\n".join(f"- {c.path}: {c.title} — {c.line}" for c in candidates)
