"""The wiki checked as its readers see it: the files on disk, not the journal that wrote them.

The same checks back Dagster's asset checks on ``wiki_index`` and ``wiki-assets check`` (a team's
own CI over a committed wiki), so each is defined once here, with its name, severity and what it
means. Severities follow one rule: a broken wiki (a link that leads nowhere, a page no one can
reach from the index) is an error; a page that is merely out of date or doubtful is a warning.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote

from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.state.journal import FAILED, NO_TEXT, SUMMARIZED, WRITTEN, Entry, Journal
from wiki_assets.engine.state.store import StateStore
from wiki_assets.engine.wiki.files import DIGEST_DIR, INDEX_PAGE, STATE_DIR
from wiki_assets.engine.wiki.links import MARKDOWN_LINK, dangling_links

SHOWN_FINDINGS = 20
"""Findings a check lists by name; the count is always complete."""


class Severity(StrEnum):
    ERROR = "error"
    WARN = "warn"


@dataclass(frozen=True, slots=True)
class WikiCheck:
    name: str
    severity: Severity
    description: str


NO_DANGLING_LINKS = WikiCheck(
    "no_dangling_links",
    Severity.ERROR,
    "Every relative link on every page, index.md included, leads to a page that exists.",
)
EVERY_PAGE_LISTED = WikiCheck(
    "every_page_listed",
    Severity.ERROR,
    "index.md links to every page of the wiki, so no page is unreachable from it.",
)
PAGES_CURRENT = WikiCheck(
    "pages_current",
    Severity.WARN,
    "No page is older than its source: each page's source_hash is the synced file's hash, and "
    "its source still exists (a page of a collection not ingested since its last sync warns).",
)
EVERY_DOCUMENT_PAGED = WikiCheck(
    "every_document_has_a_page",
    Severity.WARN,
    "Every synced document has a page (one whose front matter names it as its source), but the "
    "files that hold no text (images, archives, scans, locked files: the run lists them). A "
    "document without one is new since the last run, failed (no_failed_documents says why), or "
    "lost its page (a full disk, a deletion): the next run writes it, from the answer the state "
    "store keeps where it has one, asking no model.",
)
NO_FAILED_DOCUMENTS = WikiCheck(
    "no_failed_documents",
    Severity.WARN,
    "No document failed its last attempt (each failure is listed with its reason; the next run "
    "retries it). A bad document fails alone: the rest of the wiki stands, so this warns.",
)
MAX_FLAGGED_SHARE = 0.2
"""The share of pages flagged for review past which ``flagged_share`` warns (its default)."""
FLAGGED_SHARE = WikiCheck(
    "flagged_share",
    Severity.WARN,
    "At most max_flagged_share (default 0.2) of the pages are flagged for review (their reasons "
    "are in each page's front matter and under Needs review in index.md). A bad page warns; it "
    "does not break the wiki.",
)
WIKI_CHECKS = (NO_DANGLING_LINKS, EVERY_PAGE_LISTED, PAGES_CURRENT, EVERY_DOCUMENT_PAGED)
"""The checks of the files, run after the index is built."""


@dataclass(frozen=True, slots=True)
class Outcome:
    check: WikiCheck
    checked: int  # how many pages (or links) the check looked at
    findings: tuple[str, ...] = ()  # one line per problem, complete
    share: float | None = None  # what a share check measured (flagged_share: flagged / pages)

    @property
    def passed(self) -> bool:
        return not self.findings


@dataclass(frozen=True, slots=True)
class Audit:
    pages: int
    outcomes: tuple[Outcome, ...] = field(default=())

    @property
    def errors(self) -> int:
        """Checks of severity error that failed."""
        return sum(
            1 for outcome in self.outcomes
            if not outcome.passed and outcome.check.severity is Severity.ERROR
        )  # fmt: skip

    def outcome(self, check: WikiCheck) -> Outcome:
        return next(outcome for outcome in self.outcomes if outcome.check is check)


def front_matter(text: str) -> dict[str, object]:
    """A page's front matter: one ``key: <JSON value>`` per line, as the renderer writes it."""
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        return {}
    found: dict[str, object] = {}
    for line in lines[1:]:
        if line == "---":
            break
        key, _, value = line.partition(": ")
        try:
            found[key] = json.loads(value)
        except json.JSONDecodeError:
            found[key] = value
    return found


def pages_of(wiki_root: Path) -> Iterator[Path]:
    """Every page of the wiki (``index.md``, the digests and the state folder left out), in path
    order."""
    root = wiki_root.resolve()
    for page in sorted(root.rglob("*.md")):
        relative = page.relative_to(root)
        if relative.parts[0] in (STATE_DIR, DIGEST_DIR) or relative.as_posix() == INDEX_PAGE:
            continue
        yield page


def audit_wiki(
    wiki_root: Path,
    synced_root: Path | None = None,
    store: StateStore | None = None,
    *,
    max_flagged_share: float = MAX_FLAGGED_SHARE,
) -> Audit:
    """Run :data:`WIKI_CHECKS` over the wiki at ``wiki_root``; ``pages_current`` and
    ``every_document_has_a_page`` need the ``synced_root`` the pages were written from,
    ``no_failed_documents`` and ``flagged_share`` the wiki's state ``store`` (without them, those
    checks are left out; with it, a document without a page says why, as the store knows)."""
    root = wiki_root.resolve()
    pages = list(pages_of(root))
    names = [page.relative_to(root).as_posix() for page in pages]
    dangling = [f"{page}: {target}" for page, target in dangling_links(root)]
    outcomes = [
        Outcome(NO_DANGLING_LINKS, len(pages) + 1, tuple(dangling)),
        Outcome(EVERY_PAGE_LISTED, len(pages), tuple(_unlisted(root, names))),
    ]
    if synced_root is not None:
        # The synced tree is hashed the way sync hashes it (one scan), not page by page.
        hashes = {
            doc.path: doc.content_hash
            for doc in scan(synced_root, depth=1)
            if doc.format.no_text is None  # an image, an archive…: no page to have
        }
        sources: set[str] = set()
        stale = tuple(_stale(pages, root, hashes, sources))
        outcomes.append(Outcome(PAGES_CURRENT, len(pages), stale))
        unpaged = sorted(hashes.keys() - sources)
        outcomes.append(
            Outcome(EVERY_DOCUMENT_PAGED, len(hashes), tuple(_without_page(unpaged, store)))
        )
    if store is not None:
        outcomes += [
            failed_documents(store),
            flagged_pages(store, max_flagged_share=max_flagged_share),
        ]
    return Audit(len(pages), tuple(outcomes))


def failed_documents(store: StateStore, collections: Iterable[str] | None = None) -> Outcome:
    """:data:`NO_FAILED_DOCUMENTS` over ``collections`` (every collection when None)."""
    if not store.has_state():
        return Outcome(NO_FAILED_DOCUMENTS, 0)
    with Journal(store) as journal:
        wanted = journal.collections() if collections is None else set(collections)
        failures = journal.failures(wanted)
        checked = sum(1 for _ in journal.paths_in(wanted))
    return Outcome(
        NO_FAILED_DOCUMENTS, checked, tuple(f"{entry.path}: {entry.reason}" for entry in failures)
    )


def flagged_pages(
    store: StateStore,
    collections: Iterable[str] | None = None,
    *,
    max_flagged_share: float = MAX_FLAGGED_SHARE,
) -> Outcome:
    """:data:`FLAGGED_SHARE` over the pages of ``collections`` (every collection when None): a
    finding per flagged page while they are more than ``max_flagged_share`` of the pages."""
    if not store.has_state():
        return Outcome(FLAGGED_SHARE, 0)
    wanted = None if collections is None else set(collections)
    pages = flagged = 0
    findings: list[str] = []
    with Journal(store) as journal:
        for entry in journal.pages():
            if entry.status != WRITTEN or (wanted is not None and entry.collection not in wanted):
                continue
            pages += 1
            reasons = (entry.result or {}).get("flags") or []
            if reasons:
                flagged += 1
                findings.append(f"{entry.page}: {', '.join(reasons)}")
    share = flagged / pages if pages else 0.0
    shown = tuple(findings) if share > max_flagged_share else ()
    return Outcome(FLAGGED_SHARE, pages, shown, round(share, 3))


def _unlisted(root: Path, names: list[str]) -> Iterator[str]:
    index = root / INDEX_PAGE
    if not index.is_file():
        if names:
            yield f"{INDEX_PAGE} is missing ({len(names)} pages unlisted)"
        return
    listed = {
        os.path.normpath(unquote(target))
        for target in MARKDOWN_LINK.findall(index.read_text(encoding="utf-8"))
    }
    yield from (name for name in names if os.path.normpath(name) not in listed)


def _stale(
    pages: list[Path], root: Path, hashes: dict[str, str], sources: set[str]
) -> Iterator[str]:
    """Pages older than their source (``hashes``: the synced documents'), or without one; adds
    each page's source to ``sources``."""
    for page in pages:
        meta = front_matter(page.read_text(encoding="utf-8"))
        name = page.relative_to(root).as_posix()
        source = meta.get("source")
        if isinstance(source, str):
            sources.add(source)
        if not isinstance(source, str):
            yield f"{name}: no source in its front matter"
        elif source not in hashes:
            yield f"{name}: its source {source} is gone"
        elif hashes[source] != meta.get("source_hash"):
            yield f"{name}: older than its source {source}"


def _without_page(paths: list[str], store: StateStore | None) -> Iterator[str]:
    """A finding per document without a page, with what the state store knows of it."""
    known: dict[str, Entry] = {}
    if store is not None and store.has_state() and paths:
        with Journal(store) as journal:
            known = journal.get_many(paths)
    for path in paths:
        entry = known.get(path)
        if entry is not None and entry.status == NO_TEXT:
            continue  # a scan, a locked file: it has no page to have (the run lists it)
        if store is None:
            yield f"{path}: no page"
        elif entry is None:
            yield f"{path}: no page (not ingested yet)"
        elif entry.status == FAILED:
            yield f"{path}: no page (failed: {entry.reason})"
        elif entry.status == SUMMARIZED:
            yield f"{path}: no page (answered, page not written yet: the next run writes it)"
        else:
            yield f"{path}: no page ({entry.page} is missing: the next run writes it again)"
