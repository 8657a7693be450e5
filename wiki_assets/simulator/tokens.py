"""The simulator's token estimate: what a simulated server charges a text, and how to cut one."""

from __future__ import annotations

__all__ = ["estimate_tokens", "truncate_to_tokens"]


def estimate_tokens(text: str) -> int:
    """Approximate token count: ASCII at 4 chars/token, other characters at 1.7 tokens each.

    1.7 tokens per character is what SmolLM2's byte-level tokenizer spends on Korean, so
    non-Latin documents cost what they would on the real embedded model.
    """
    non_ascii = sum(1 for ch in text if ord(ch) > 127)
    ascii_chars = len(text) - non_ascii
    # Integer arithmetic (1/4 = 5/20, 1.7 = 34/20) so that e.g. 10 Korean characters are exactly
    # 17 tokens rather than ceil(17.000000000000004) = 18.
    return (5 * ascii_chars + 34 * non_ascii + 19) // 20


def truncate_to_tokens(text: str, tokens: int) -> str:
    """Longest prefix of ``text`` whose estimate fits in ``tokens`` (estimate is monotonic)."""
    if estimate_tokens(text) <= tokens:
        return text
    lo, hi = 0, len(text)  # estimate(text[:lo]) fits, estimate(text[:hi]) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid
    return text[:lo].rstrip()
