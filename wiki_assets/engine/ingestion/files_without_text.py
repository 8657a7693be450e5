"""The run's files that hold no text: an image, an archive, a scan without a text layer, a broken
or password-protected file, a format nothing here reads.

None is a failure. Each is listed with why (the report's ``no_text``, counted apart in the done
line, the JSON and the run's figures) and journaled, so that it is looked at again only once it
changes. A file found so in this run gets a line in the log (a warning when it is broken or
locked, which someone may want to mend); a page it had from text it held before goes, and no
link points at it any more.
"""

from __future__ import annotations

from collections.abc import Sequence

from wiki_assets.engine.ingestion.flush import Pages
from wiki_assets.engine.ingestion.plan import NoTextFile
from wiki_assets.engine.wiki.links import neighbours, relink

MENDABLE = ("password-protected", "unreadable")  # reasons worth a warning: someone can fix them


def record_no_text(pages: Pages, found: Sequence[NoTextFile]) -> None:
    """Journal and list the run's files that hold no text (see the module docstring)."""
    pages.report.no_text += [{"path": file.doc.path, "reason": file.reason} for file in found]
    new = [file for file in found if file.new]
    if not new:
        return
    journal = pages.journal
    with pages.store.page_writes():
        linked = neighbours(journal, [file.doc.path for file in new])
        gone = set()
        for file in new:
            doc = file.doc
            page = journal.record_no_text(
                path=doc.path,
                collection=doc.collection,
                content_hash=doc.content_hash,
                reason=file.reason,
                at=pages.clock(),
            )
            if page is not None:
                pages.wiki.remove(page)
                gone.add(doc.path)
            warn = file.reason.startswith(MENDABLE)
            (pages.log.warning if warn else pages.log.info)(f"no text: {doc.path}: {file.reason}")
        if gone:
            pages.report.relinked += relink(journal, pages.wiki, linked - gone)
