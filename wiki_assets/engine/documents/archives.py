"""Archives are folders: each document inside a ``.zip``, ``.tar``, ``.tar.gz``/``.tgz`` or a
``.gz`` of one file is a document of its own, under the archive's path
(``drive/회의자료.zip/agenda.docx``), with the hash of its own bytes, so that a member is redone
only when it changes. An archive inside an archive is opened too, one level deep. An Outlook mail
is a container too: its attachments are documents under it.

How each kind is opened, within limits (a zip bomb, an encrypted or broken archive, a tar cut
short, a Korean PC's zip names), is :mod:`.archive_kinds`'. Here: an archive's members, nested
ones under their archive's name (:func:`members`), and a document's bytes by its path through
archives (:func:`source`, :func:`read_bytes`; :func:`holder`: the file a person opens).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from wiki_assets.engine.documents.archive_kinds import WITH_BODY, kind_of, listing
from wiki_assets.engine.errors import NoText

__all__ = ["MAX_DEPTH", "Member", "holder", "members", "read_bytes", "source"]

MAX_DEPTH = 1  # archives inside archives opened (a zip in a zip: 1)


@dataclass(frozen=True, slots=True)
class Member:
    """A file inside an archive: its path inside it, and its bytes (or why it holds no text:
    an archive nested too deep, a member that cannot be read)."""

    name: str
    data: bytes
    no_text: str | None = None


def members(source: Path | bytes, name: str, depth: int = 0) -> Iterator[Member]:
    """The files inside the archive ``source`` (named ``name``), one at a time, those inside
    an archive it holds under that archive's name (``첨부.zip/deck.pptx``); or :class:`NoText`
    with the reason the archive cannot be opened (before any member), or is cut short (after
    the members before the cut)."""
    for inside, read in listing(source, name):
        try:
            data = read()
        except NoText as error:
            yield Member(inside, b"", str(error))
            continue
        kind = kind_of(inside)
        if kind is None or kind in WITH_BODY:
            yield Member(inside, data)
        if kind is None or kind in WITH_BODY and depth >= MAX_DEPTH:
            continue
        if depth >= MAX_DEPTH:
            yield Member(inside, data, "an archive inside an archive inside an archive")
        else:
            nested: list[Member] = []
            failed: NoText | None = None
            try:
                nested.extend(members(data, inside, depth + 1))
            except NoText as error:
                failed = error
            for found in nested:
                yield Member(f"{inside}/{found.name}", found.data, found.no_text)
            if failed is not None and kind not in WITH_BODY:  # (a mail's reader says why)
                yield Member(inside, b"", str(failed))


def source(path: Path) -> Path | bytes:
    """The document at ``path``: the file, or the bytes of a file inside an archive
    (``…/drive/회의자료.zip/안건.docx``, ``…/회의자료.zip/첨부.zip/deck.pptx``), reading no
    other member. :class:`FileNotFoundError` when there is none."""
    if path.is_file():
        return path
    for archive in path.parents:
        if archive.is_file():
            if kind_of(archive.name) is not None:
                inside = path.relative_to(archive).parts
                found = _find(archive.read_bytes(), archive.name, list(inside), 0)
                if found is not None:
                    return found
            break
    raise FileNotFoundError(f"no file {str(path)!r}")


def holder(path: str) -> str:
    """The file ``path`` is in: the outermost archive, for a file inside one
    (``drive/회의자료.zip`` for ``drive/회의자료.zip/첨부.zip/deck.pptx``); else ``path``. By its
    name alone: a file's page links the archive, which a person can open."""
    parts = path.split("/")
    for end, part in enumerate(parts[:-1], start=1):
        if kind_of(part) is not None:
            return "/".join(parts[:end])
    return path


def read_bytes(path: Path) -> bytes:
    """The bytes of the document at ``path``, a file or a file inside an archive."""
    try:  # most documents are files: read at once, without asking first (a stat each)
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        found = source(path)  # a member of an archive, or no file at all
    return found.read_bytes() if isinstance(found, Path) else found


def _find(data: bytes, name: str, inside: list[str], depth: int) -> bytes | None:
    """The bytes of the member at the path ``inside`` of the archive ``data``, or None."""
    wanted = "/".join(inside)
    try:
        for listed, read in listing(data, name):
            if listed == wanted:
                return read()
            if depth < MAX_DEPTH and kind_of(listed) and wanted.startswith(f"{listed}/"):
                rest = wanted.removeprefix(f"{listed}/").split("/")
                return _find(read(), listed, rest, depth + 1)
    except NoText:
        return None
    return None
