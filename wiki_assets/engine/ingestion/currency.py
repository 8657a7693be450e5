"""What makes a page current: written from the document's present text, with the prompt and the
dials that shape pages now, by a model the fleet still trusts (:class:`Currency`); and what a run
does with a document (its :func:`standing`).

The plan (:mod:`~wiki_assets.engine.ingestion.plan`) and the dry run
(:mod:`~wiki_assets.engine.ingestion.survey`) read it to decide what a run does with each
document, and the flush (:mod:`~wiki_assets.engine.ingestion.flush`) to stamp each page it
journals with its :func:`fingerprint`; none imports another.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.model.prompts import PROMPT_VERSION
from wiki_assets.engine.state.journal import SUMMARIZED, WRITTEN, Entry
from wiki_assets.engine.text.corpus import SourceDocument


def fingerprint(max_tokens: int, language: str = "auto", form: str = "full") -> str:
    """What shapes a page besides its text and its model: prompt, length cap, page language and
    what the model is asked for (``Endpoint.page_form``)."""
    key = f"{PROMPT_VERSION}\0{max_tokens}\0{language}\0{form}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class Currency:
    """What a page must have been written with to be current. A page by a model that has left the
    fleet stays current (changing the fleet never silently redoes the wiki) as long as the prompt
    and the dials that shape pages are the same; a model named in ``redo`` has its pages redone."""

    by_model: dict[str, str]  # fleet model id -> fingerprint of the pages it would write now
    departed: frozenset[str]  # fingerprints a page by a model no longer in the fleet may carry
    redo: frozenset[str] = frozenset()

    def accepts(self, model: str, page_fingerprint: str) -> bool:
        if model in self.redo:
            return False
        if model in self.by_model:
            return self.by_model[model] == page_fingerprint
        return page_fingerprint in self.departed


def fingerprints(endpoints: Sequence[Endpoint], dials: Dials) -> Currency:
    """What the pages of this fleet and these dials must carry to be current."""
    caps = {dials.max_tokens, *(ep.max_tokens for ep in endpoints if ep.max_tokens)}
    forms = {"full", *(ep.page_form for ep in endpoints)}
    return Currency(
        by_model={
            ep.model: fingerprint(ep.max_tokens or dials.max_tokens, dials.language, ep.page_form)
            for ep in endpoints
        },
        departed=frozenset(
            fingerprint(cap, dials.language, form) for cap in caps for form in forms
        ),
        redo=frozenset(dials.redo_models),
    )


def is_current(entry: Entry | None, doc: SourceDocument, current: Currency) -> bool:
    return (
        entry is not None
        and entry.status in (SUMMARIZED, WRITTEN)
        and entry.content_hash == doc.content_hash
        and entry.model is not None
        and current.accepts(entry.model, entry.fingerprint)
    )


SKIP, RECOVER = "skip", "recover"
# Why a document would be summarized, in the order they are checked.
REASONS = ("new", "changed", "earlier failure", "forced", "model", "prompt version", "dials")


def standing(entry: Entry | None, doc: SourceDocument, current: Currency, force: bool) -> str:
    """What a run does with ``doc``: ``skip`` (its page is current), ``recover`` (a model answered
    in a run that died before the page was written: write it, ask no model), or the reason it is
    summarized (one of :data:`REASONS`)."""
    if not force and is_current(entry, doc, current):
        assert entry is not None
        if entry.status == WRITTEN:
            return SKIP
        if entry.result is not None and entry.page is not None:
            return RECOVER
    if entry is None:
        return "new"
    if entry.status not in (SUMMARIZED, WRITTEN):
        return "earlier failure"
    if entry.content_hash != doc.content_hash:
        return "changed"
    if force:
        return "forced"
    if is_current(entry, doc, current):
        return "earlier failure"  # answered, but the answer was not kept
    if entry.model is None or entry.model in current.redo:
        return "model"
    written_with = (entry.result or {}).get("prompt_version")
    return "prompt version" if written_with != PROMPT_VERSION else "dials"
