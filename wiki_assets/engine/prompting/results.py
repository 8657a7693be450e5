"""What a request to a model gives back: a document's page (:class:`Summary`) or the notes on
one part of a long document (:class:`Notes`), with what it took on the model.

No HTTP here: the dispatcher (:mod:`~wiki_assets.engine.dispatch`) and the simulation
(:mod:`wiki_assets.virtual_time`) read these without importing ``openai`` or the model client.
"""

from __future__ import annotations

from dataclasses import dataclass

from wiki_assets.engine.prompting.page import PageDraft


@dataclass(frozen=True, slots=True)
class Summary:
    """One document's page, and what writing it took on the model."""

    draft: PageDraft
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    parts: int  # 1, or how many chunks a long document was summarized in
    requests: int
    # False: the model picked the key lines but wrote no prose (a compact page in a language it
    # does not write); the page is labelled as not summarized.
    prose: bool = True


@dataclass(frozen=True, slots=True)
class Notes:
    """Notes on one part of a long document, and what taking them took on the model."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    requests: int
