"""The one call a run makes for each page: verify its points, check it, record the outcome."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wiki_assets.engine.prompting.page import PageDraft
from wiki_assets.engine.quality.checks import Written, check_page
from wiki_assets.engine.quality.claims import check_prose
from wiki_assets.engine.quality.evidence import PointCheck, verify_points
from wiki_assets.engine.quality.passages import DocumentUnits
from wiki_assets.engine.quality.sentences import NOTHING_CHECKED, ProseCheck
from wiki_assets.engine.quality.topics import kept_topics
from wiki_assets.engine.quality.verdict import Verdict

__all__ = ["Assessment", "assess"]


@dataclass(frozen=True, slots=True)
class Assessment:
    points: tuple[PointCheck, ...]
    verdict: Verdict
    topics: tuple[str, ...] = ()  # the draft's, placeholders and junk left out (kept_topics)
    prose: ProseCheck = NOTHING_CHECKED  # each sentence of the description and the summary

    @property
    def verified(self) -> int:
        return sum(1 for point in self.points if point.verified)

    def result_fields(self) -> dict[str, Any]:
        """What a page's journaled result holds of the assessment (``key_points`` and
        ``topics`` replace the draft's; :meth:`wiki_assets.engine.wiki.record.Page.of` reads
        them back)."""
        return {
            "key_points": [point.to_json() for point in self.points],
            "topics": list(self.topics),
            "flags": list(self.verdict.reasons),
            "prose": self.prose.to_json(),
        }


def assess(
    draft: PageDraft,
    document: str,
    *,
    title: str,
    language: str,
    finish_reason: str,
    prose: bool = True,
) -> Assessment:
    """Verify ``draft``'s key points against ``document`` (the full original text, also for a
    document summarized in parts) and check the page it makes. ``title``: the title the page
    shows; ``language``: the one it should be in; ``finish_reason``: of the page's answer;
    ``prose``: False where the model only picked the key lines (its page has no prose to check)."""
    # The document's lines read once for the points, the prose's rules and the page's checks.
    units = DocumentUnits(document) if prose else None
    points = verify_points(draft.key_points, units or document)
    checked = (
        check_prose(draft.description, draft.summary, document, title, units)
        if prose
        else NOTHING_CHECKED
    )
    page = Written.of(
        draft, points, document=document, title=title, language=language,
        finish_reason=finish_reason, prose=prose, checked=checked, units=units,
    )  # fmt: skip
    return Assessment(points, check_page(page), tuple(kept_topics(draft.topics)), checked)
