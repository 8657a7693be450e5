"""The day's digest as files: ``digest/YYYY-MM-DD.md`` for people, ``.json`` for tools.

The markdown links each page the way ``index.md`` does (relative links Obsidian resolves like
wikilinks); a removed page is named, not linked, since it is gone. The JSON holds the same lists
with every field, and :data:`DIGEST_VERSION` (a field is only added within a version).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

from wiki_assets.engine.digest.build import Digest, PageChange
from wiki_assets.engine.wiki.escaping import escape, link_to
from wiki_assets.engine.wiki.files import DIGEST_DIR
from wiki_assets.engine.wiki.record import Link

# 2: a description holds only its sentences the document supports; 3: only those a judge verified
# or that quote the document, else the document's opening ("The document opens: …")
DIGEST_VERSION = 3

NOTHING_CHANGED = "Nothing changed in the wiki on this day."


def digest_files(day: date) -> tuple[str, str]:
    """The digest's markdown and JSON paths, relative to the wiki root."""
    stem = f"{DIGEST_DIR}/{day.isoformat()}"
    return f"{stem}.md", f"{stem}.json"


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def render_markdown(digest: Digest) -> str:
    window = digest.window
    here = digest_files(window.day)[0]
    counts = digest.counts()
    lines = [f"# Wiki digest {window.day.isoformat()}", ""]
    lines += [
        f"{window.day.isoformat()} ({escape(window.timezone)}): "
        + " · ".join(f"{count} {kind}" for kind, count in counts.items())
        + ".",
        "",
    ]
    if digest.empty:
        return "\n".join([*lines, NOTHING_CHANGED, ""])

    def linked(change: PageChange) -> str:
        return link_to(here, Link(change.page, change.title or change.page))

    def described(change: PageChange) -> str:
        return f" — {escape(change.description)}" if change.description else ""

    if digest.added:
        lines += [f"## Added ({len(digest.added)})", ""]
        lines += [f"- {linked(change)}{described(change)}" for change in digest.added] + [""]
    if digest.changed:
        lines += [f"## Changed ({len(digest.changed)})", ""]
        for change in digest.changed:
            lines.append(f"- {linked(change)}")
            if change.old_title is not None and change.old_title != change.title:
                lines.append(f"  - was titled: {escape(change.old_title)}")
            old = change.old_description
            lines.append(f"  - before: {escape(old) if old else '(no description)'}")
            lines.append(f"  - now: {escape(change.description) or '(no description)'}")
        lines.append("")
    if digest.removed:
        lines += [f"## Removed ({len(digest.removed)})", ""]
        for change in digest.removed:
            shown = change.page.replace("`", "'")
            lines.append(f"- {escape(change.title or change.page)} (`{shown}`)")
        lines.append("")
    if digest.flagged:
        lines += [f"## Flagged ({len(digest.flagged)})", ""]
        for change in digest.flagged:
            lines.append(f"- {linked(change)} — {escape(', '.join(change.flags) or 'flagged')}")
        lines.append("")
    if digest.prose:
        lines += ["## Prose by model", ""]
        for model, supported, checked in digest.prose:
            share = f" ({supported / checked:.2f})" if checked else ""
            lines.append(
                f"- {escape(model)}: {supported} of {checked} checked sentences supported{share}"
            )
        lines.append("")
    return "\n".join(lines)


def digest_json(digest: Digest) -> dict[str, Any]:
    window = digest.window
    return {
        "digest_version": DIGEST_VERSION,
        "day": window.day.isoformat(),
        "timezone": window.timezone,
        "start": iso(window.start),
        "end": iso(window.end),
        "counts": digest.counts(),
        "added": [_change(change) for change in digest.added],
        "changed": [_change(change, old=True) for change in digest.changed],
        "removed": [_change(change) for change in digest.removed],
        "flagged": [_change(change) for change in digest.flagged],
        # Per model of the day's pages: how often its prose is backed by its documents.
        "prose_by_model": {
            model: {
                "supported": supported,
                "checked": checked,
                "supported_share": round(supported / checked, 3) if checked else None,
            }
            for model, supported, checked in digest.prose
        },
    }


def render_json(digest: Digest) -> str:
    return json.dumps(digest_json(digest), ensure_ascii=False, indent=2) + "\n"


def _change(change: PageChange, *, old: bool = False) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "page": change.page,
        "source": change.source,
        "collection": change.collection,
        "title": change.title,
        "description": change.description,
        "language": change.language,
        "verdict": change.verdict,
        "flags": list(change.flags),
        "at": iso(change.at),
    }
    if old:
        shown["old_title"] = change.old_title
        shown["old_description"] = change.old_description
    return shown
