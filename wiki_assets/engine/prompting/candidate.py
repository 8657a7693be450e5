"""What a page request gives a model: the document (:class:`PageRequest`) and the other
documents its page may link to (:class:`Candidate`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str  # the document's path relative to the synced root (its identity)
    title: str
    line: str  # one line describing it (first meaningful sentence, <= 160 chars)
    score: float  # the similarity it was taken for: a cosine by n-grams or by meaning


@dataclass(frozen=True, slots=True)
class PageRequest:
    """One document to write a page of, as every model of the fleet is asked for it."""

    path: str  # relative to the synced root
    title: str
    text: str  # the whole document's text (its notes stand in for it where ``notes`` is set)
    candidates: tuple[Candidate, ...] = ()
    language: str = "English"  # the page's, as a name ("Korean")
    notes: str | None = None  # a long document's notes on its parts, to write the page from
    parts: int = 1  # how many parts those notes were taken on
