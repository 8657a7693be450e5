"""What makes a page current: written from the document's present text, with the prompt and the
dials that shape pages now, by a model the fleet still trusts (:class:`Currency`); and what a run
does with a document (its :func:`standing`).

The plan (:mod:`~wiki_assets.engine.ingestion.plan`) and the dry run
(:mod:`~wiki_assets.engine.ingestion.survey`) read it to decide what a run does with each
document, and the flush (:mod:`~wiki_assets.engine.ingestion.flush`) to stamp each page it
journals with its :func:`fingerprint`; none imports another.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from wiki_assets.engine.config import Dials, Endpoint
from wiki_assets.engine.documents import ocr
from wiki_assets.engine.documents.corpus import SourceDocument
from wiki_assets.engine.prompting.prompts import PROMPT_VERSION
from wiki_assets.engine.state.journal import NO_TEXT, SUMMARIZED, WRITTEN, Entry


@functools.lru_cache(maxsize=256)  # a fleet has a few shapes; every page journaled asks for one
def fingerprint(max_tokens: int, language: str = "auto", form: str = "full") -> str:
    """What shapes a page besides its text and its model: prompt, length cap, page language and
    what the model is asked for (``Endpoint.page_form``)."""
    key = f"{PROMPT_VERSION}\0{max_tokens}\0{language}\0{form}"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


SHAPED_BY = "shaped_by"  # the journaled answer's field that keeps its Shaping


class Shaping(NamedTuple):
    """The settings a page is written with besides the prompt (its :func:`fingerprint`'s
    parts). The journal keeps them with each answer, so that a run can say which one changed."""

    max_tokens: int
    language: str  # the page-language dial
    form: str  # Endpoint.page_form: "full", or "compact:<the languages it writes>"

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.max_tokens, self.language, self.form)

    def fields(self) -> dict[str, Any]:
        return self._asdict()

    @classmethod
    def of(cls, result: dict[str, Any] | None) -> Shaping | None:
        """The shaping a journaled answer keeps (None: journaled before answers kept it)."""
        kept = (result or {}).get(SHAPED_BY)
        try:
            return cls(**kept) if isinstance(kept, dict) else None
        except TypeError:
            return None


# What a changed setting is called in a reason (the dials' and the endpoint field's names).
CHANGED = {"max_tokens": "max_tokens", "language": "language", "form": "page shape"}


@dataclass(frozen=True, slots=True)
class Currency:
    """What a page must have been written with to be current. A page by a model that has left the
    fleet stays current (changing the fleet never silently redoes the wiki) as long as the prompt
    and the dials that shape pages are the same; a model named in ``redo`` has its pages redone."""

    by_model: dict[str, Shaping]  # fleet model id -> how the pages it would write now are shaped
    departed: frozenset[str]  # fingerprints a page by a model no longer in the fleet may carry
    redo: frozenset[str] = frozenset()
    # What a page by a departed model may be shaped by: the caps, the dial and the fleet's forms.
    caps: frozenset[int] = frozenset()
    language: str = "auto"
    forms: frozenset[str] = frozenset()

    def accepts(self, model: str, page_fingerprint: str) -> bool:
        if model in self.redo:
            return False
        if model in self.by_model:
            return self.by_model[model].fingerprint == page_fingerprint
        return page_fingerprint in self.departed

    def changed(self, model: str, shaping: Shaping) -> str | None:
        """Which of ``shaping``'s settings a page by ``model`` would be written with otherwise
        now (their names, as in :data:`CHANGED`), or None when none would be."""
        wanted = self.by_model.get(model)
        if wanted is not None:
            names = [
                CHANGED[name]
                for name in Shaping._fields
                if getattr(shaping, name) != getattr(wanted, name)
            ]
        else:  # a departed model: any cap and form of the fleet's, the run's language
            names = [
                CHANGED[name]
                for name, fits in (
                    ("max_tokens", shaping.max_tokens in self.caps),
                    ("language", shaping.language == self.language),
                    ("form", shaping.form in self.forms),
                )
                if not fits
            ]
        return ", ".join(names) or None


def fingerprints(endpoints: Sequence[Endpoint], dials: Dials) -> Currency:
    """What the pages of this fleet and these dials must carry to be current."""
    caps = frozenset({dials.max_tokens, *(ep.max_tokens for ep in endpoints if ep.max_tokens)})
    # A page by a departed model is current in a full shape, or in a compact shape a model of
    # the fleet writes too: a compact page (the embedded demo model's) is redone by a fleet of
    # models that write full pages, which is what moving from the demo model to real ones means.
    forms = frozenset({"full", *(ep.page_form for ep in endpoints)})
    return Currency(
        by_model={
            ep.model: Shaping(ep.max_tokens or dials.max_tokens, dials.language, ep.page_form)
            for ep in endpoints
        },
        departed=frozenset(
            fingerprint(cap, dials.language, form) for cap in caps for form in forms
        ),
        redo=frozenset(dials.redo_models),
        caps=caps,
        language=dials.language,
        forms=forms,
    )


def is_current(entry: Entry | None, doc: SourceDocument, current: Currency) -> bool:
    return (
        entry is not None
        and entry.status in (SUMMARIZED, WRITTEN)
        and entry.content_hash == doc.content_hash
        and entry.model is not None
        and current.accepts(entry.model, entry.fingerprint)
    )


SKIP, RECOVER, HOLDS_NO_TEXT = "skip", "recover", "no text"
OCR = "ocr"  # a scan or an image found with no text before OCR was installed, which reads it now
# Why a document would be summarized, in the order they are checked. A page whose settings
# changed gives the settings' names ("max_tokens", "language", "page shape", or several joined
# with ", "); "dials" is a page journaled before answers kept their settings.
REASONS = (
    "new", "changed", "earlier failure", "forced", "model", "prompt version", "extractor", OCR,
    *CHANGED.values(), "dials",
)  # fmt: skip


def standing(entry: Entry | None, doc: SourceDocument, current: Currency, force: bool) -> str:
    """What a run does with ``doc``: ``skip`` (its page is current), ``recover`` (a model answered
    in a run that died before the page was written: write it, ask no model), ``no text`` (the file
    holds none: by its format, or as found when it last changed), or the reason it is summarized
    (one of :data:`REASONS`)."""
    if doc.format.no_text is not None:
        return HOLDS_NO_TEXT
    if entry is not None and entry.status == NO_TEXT and entry.content_hash == doc.content_hash:
        return OCR if ocr.could_read(entry.reason) else HOLDS_NO_TEXT
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
    if written_with != PROMPT_VERSION:
        return "prompt version"
    shaping = Shaping.of(entry.result)
    changed = current.changed(entry.model, shaping) if shaping is not None else None
    return changed or "dials"


def extracted_by(entry: Entry | None) -> tuple[str | None, str | None]:
    """The extractor (``pdf/1``) a page's text came from and that text's hash, as its answer
    keeps them; (None, None) for a page of plain text."""
    result = entry.result if entry is not None else None
    if not result:
        return None, None
    return result.get("extractor"), result.get("text_hash")
