"""A statement's polarity: whether it says "not" (in English or Korean), and what marks a clause
or an "only" (a sentence compared with its document's sentence and with the clause of it that
says the same)."""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["CLAUSE", "ONLY", "negated"]

# Not "without" or "없이" (a condition, not a statement's polarity: "not rolled back without a
# ticket" is negated by its "not"), nor 없어지다 (to expire), nor "no more than" (at most).
_NEGATION = re.compile(
    r"\b(?:not|no|never|cannot|can't|won't|don't|doesn't|isn't|aren't|nor|none|neither|"
    r"unless|forbidden|prohibited)\b|n't\b|않|없(?!이|어지|어져|어진|애)|못|금지|불가|아니|안\s",
    re.IGNORECASE,
)
_COMPARED = re.compile(r"\bno(?:t)?\s+(?:more|less|later|earlier|fewer|longer)\s+than\b", re.I)
CLAUSE = re.compile(r"[,;:]\s+(?!\d)")  # not the comma of "March 31, 2027"
ONLY = re.compile(r"\b(?:only|solely)\b|뿐|에만|때만", re.IGNORECASE)


@functools.lru_cache(maxsize=1024)  # a sentence is compared with its line and with its clause
def negated(text: str) -> bool:
    return _NEGATION.search(_COMPARED.sub("", unicodedata.normalize("NFKC", text))) is not None
