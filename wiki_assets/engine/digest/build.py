"""What happened to the wiki on one day, from the pages' history (:mod:`..state.page_events`).

A day is a calendar day in a timezone (its window may be 23 or 25 hours long around a clock
change). A page touched several times that day is listed once, by what the day did to it:
added (it did not exist before the day), changed (it existed and says something else at the
day's end; the old title and description are what it said before the day), removed (it existed
before and is gone at the end). A page added and removed the same day is not listed. Flagged
pages are the day's added and changed pages whose verdict is flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from wiki_assets.engine.quality.sentences import ProseCheck, Support
from wiki_assets.engine.state.journal import Entry
from wiki_assets.engine.state.page_events import PageEvent, PageHistory


@dataclass(frozen=True, slots=True)
class DayWindow:
    day: date
    timezone: str  # an IANA name, e.g. UTC or Europe/Berlin
    start: float  # epoch seconds, inclusive
    end: float  # exclusive

    @classmethod
    def of(cls, day: date, timezone: str) -> DayWindow:
        zone = ZoneInfo(timezone)
        start = datetime.combine(day, time.min, tzinfo=zone)
        end = datetime.combine(day + timedelta(days=1), time.min, tzinfo=zone)
        return cls(day, timezone, start.timestamp(), end.timestamp())


@dataclass(frozen=True, slots=True)
class PageChange:
    """One page in the digest: what it says at the day's end (for a removed page, what it said
    last); ``old_*`` are what a changed page said before the day."""

    page: str
    source: str
    collection: str
    title: str
    description: str
    verdict: str
    flags: tuple[str, ...]
    at: float  # the day's last event of the page, epoch seconds
    language: str = ""  # the page's, as a code ("ko", "en"); "" for an event from before
    old_title: str | None = None
    old_description: str | None = None

    @classmethod
    def of(cls, event: PageEvent, before: PageEvent | None = None) -> PageChange:
        return cls(
            event.page,
            event.path,
            event.collection,
            event.title,
            event.description,
            event.verdict,
            event.flags,
            event.at,
            event.language,
            before.title if before else None,
            before.description if before else None,
        )


@dataclass(frozen=True, slots=True)
class Digest:
    window: DayWindow
    added: tuple[PageChange, ...] = ()
    changed: tuple[PageChange, ...] = ()
    removed: tuple[PageChange, ...] = ()
    flagged: tuple[PageChange, ...] = ()
    # Per model that wrote the day's added and changed pages: (model, sentences of their
    # descriptions and summaries supported, checked), by model.
    prose: tuple[tuple[str, int, int], ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.removed)

    def counts(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "changed": len(self.changed),
            "removed": len(self.removed),
            "flagged": len(self.flagged),
        }


def prose_by_model(entries: Iterable[Entry]) -> tuple[tuple[str, int, int], ...]:
    """(model, supported, checked) over the sentences of ``entries``' pages, by model: how often
    each model's prose is backed by its documents (a model that invents shows here)."""
    counts: dict[str, list[int]] = {}
    for entry in entries:
        result = entry.result or {}
        prose = ProseCheck.from_json(result.get("prose"))
        if prose.sentences and result.get("model"):
            count = counts.setdefault(str(result["model"]), [0, 0])
            count[0] += prose.count(Support.SUPPORTED)
            count[1] += prose.checked
    return tuple(
        (model, supported, checked) for model, (supported, checked) in sorted(counts.items())
    )


def build_digest(history: PageHistory, window: DayWindow) -> Digest:
    """The digest of ``window``'s day: every page the day's events touched, once."""
    touched: dict[str, list[PageEvent]] = {}
    for event in history.between(window.start, window.end):
        touched.setdefault(event.path, []).append(event)
    earlier = history.last_events(list(touched), before=window.start)
    added: list[PageChange] = []
    changed: list[PageChange] = []
    removed: list[PageChange] = []
    for path, events in touched.items():
        kind, change = _what_the_day_did(earlier.get(path), events)
        if kind == "added":
            added.append(change)
        elif kind == "changed":
            changed.append(change)
        elif kind == "removed":
            removed.append(change)
    flagged = [change for change in (*added, *changed) if change.verdict == "flagged"]
    return Digest(
        window,
        added=_sorted(added),
        changed=_sorted(changed),
        removed=_sorted(removed),
        flagged=_sorted(flagged),
    )


def _what_the_day_did(
    before: PageEvent | None, events: Sequence[PageEvent]
) -> tuple[str | None, PageChange]:
    # An "existing" event (a store that predates the history) is a starting point, not a change.
    real = [event for event in events if event.event != "existing"]
    for event in events:
        if event.event != "existing":
            break
        before = event
    last = (real or list(events))[-1]
    if not real:
        return None, PageChange.of(last)
    # No event before the day and its first is not "added": a page from before the history.
    existed = before.live if before is not None else real[0].event != "added"
    if last.live and not existed:
        return "added", PageChange.of(last)
    if last.live:
        if before is not None and before.says() == last.says():
            return None, PageChange.of(last)  # changed, then changed back
        return "changed", PageChange.of(last, before)
    return ("removed" if existed else None), PageChange.of(last)


def _sorted(changes: Sequence[PageChange]) -> tuple[PageChange, ...]:
    return tuple(sorted(changes, key=lambda change: (change.page, change.source)))
