"""A link candidate: another document a page may link to, as a page request lists it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str  # the document's path relative to the synced root (its identity)
    title: str
    line: str  # one line describing it (first meaningful sentence, <= 160 chars)
    score: float  # the similarity it was taken for: a cosine by n-grams or by meaning
