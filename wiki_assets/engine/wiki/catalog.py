"""``catalog.jsonl``: the wiki for machines, one JSON record per page.

A consumer (a chat bot, a search index) reads this instead of parsing every page's front matter.
It is rewritten, atomically and only when it changed, every time the index is built, in page
order, so two builds of the same wiki give the same bytes. Every record carries
:data:`CATALOG_VERSION`: a field is only ever added within a version; renaming or removing one, or
changing what it means, is a new version.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypedDict

from wiki_assets.engine.documents.language import language_code
from wiki_assets.engine.wiki.record import Page

CATALOG_FILE = "catalog.jsonl"
"""At the wiki's root, next to ``index.md``."""

CATALOG_VERSION = 1


class CatalogRecord(TypedDict):
    """One page of the wiki; the one definition of the catalog's fields."""

    catalog_version: int  # CATALOG_VERSION
    page: str  # the page's path relative to the wiki root
    source: str  # the document's path relative to the synced root
    collection: str
    title: str
    description: str
    language: str  # the page's language as a code ("ko", "en"); "" when not recorded
    topics: list[str]
    related: list[str]  # the pages this one links to as related (only pages that exist)
    # The pages it links to as nearest in meaning, which its model was not offered (the same)
    related_by_meaning: list[str]
    model: str  # the model that wrote it
    generated: str  # ISO time the model answered
    source_hash: str  # the document's content hash the page was written from
    verdict: Literal["ok", "flagged", "unchecked"]  # unchecked: journaled before pages were checked
    flags: list[str]  # why a flagged page needs review (reason names), empty otherwise
    points_verified: int | None  # key points backed by the document; None when unchecked
    points_total: int | None
    summarized: bool  # False: not a summary (an extractive page, or the lines a small model picked)
    # Each sentence of the description and the summary with what the document says to it
    # (SentenceCheck.to_json: text, part, status, lines, document_says, checked_by); a bot
    # quotes the "supported" ones. Empty: journaled before sentences were checked.
    prose: list[dict[str, Any]]
    summary: str


def catalog_record(page: Page, collection: str) -> CatalogRecord:
    checked = page.verdict is not None
    return CatalogRecord(
        catalog_version=CATALOG_VERSION,
        page=page.name,
        source=page.source,
        collection=collection,
        title=page.title,
        description=page.description,
        language=language_code(page.language),
        topics=list(page.topics),
        related=[link.page for link in page.related],
        related_by_meaning=[link.page for link in page.by_meaning],
        model=page.model,
        generated=page.generated,
        source_hash=page.source_hash,
        verdict="unchecked" if page.verdict is None else "ok" if page.verdict.ok else "flagged",
        flags=list(page.verdict.reasons) if page.verdict else [],
        points_verified=page.verified_points if checked else None,
        points_total=len(page.key_points) if checked else None,
        summarized=page.summarized,
        prose=[sentence.to_json() for sentence in page.prose],
        summary=page.summary,
    )


def render_catalog(records: Iterable[CatalogRecord]) -> str:
    """One compact JSON object per line, by page path (keys in :class:`CatalogRecord`'s order)."""
    ordered = sorted(records, key=lambda record: record["page"])
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in ordered)


def read_catalog(wiki_root: Path) -> list[CatalogRecord]:
    """The records of the wiki's catalog (none when it was never built)."""
    path = wiki_root / CATALOG_FILE
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
