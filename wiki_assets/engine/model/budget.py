"""Token budgets without a tokenizer.

Requests must fit the model's context window, which is counted in tokens. Tokenizers of small
models are generous with ASCII (about four characters a token) and expensive for Hangul and other
non-Latin scripts (SmolLM2 spends 1.4-1.75 tokens on one Korean character), so a character budget
that suits English overflows on Korean. These estimates err on the expensive side.
"""

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
