"""The synced root as a stream of documents, grouped into collections.

A collection is a folder level under the synced root (the first by default); files directly under
the root form the root collection. Documents are streamed, never all held in memory: the scan yields
paths and content hashes (with :func:`scan_contents`, each document's bytes too, one at a time, for
a caller that needs hash and text from one read), and the worker that summarizes a document reads
its text again when it starts it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path, PurePosixPath

from wiki_assets.engine.documents import archive_kinds, archives
from wiki_assets.engine.documents.encodings import decode
from wiki_assets.engine.documents.formats import TEXT, Format, format_of
from wiki_assets.engine.documents.ignore import Ignored, IgnoreRules
from wiki_assets.engine.errors import DocumentError as DocumentError
from wiki_assets.engine.errors import NoText

ROOT_COLLECTION = "_root"
"""Partition key of the files that sit directly under the synced root."""

DEFAULT_MAX_BYTES = 2_000_000
"""The most text a document may hold: its bytes, or the UTF-8 bytes of the text extracted."""
DEFAULT_MAX_FILE_BYTES = 200_000_000
"""The largest file read at all: a deck of images holding a little text is a normal document."""
HEAD_BYTES = 4096  # of a file, kept to tell what it is (formats.py)
_PLAIN = Format(TEXT)


@dataclass(frozen=True, slots=True)
class Corpus:
    """What a run reads: ``collections`` of the synced root, a collection being a folder
    ``depth`` levels under it, and the bounds on what is read: ``max_bytes`` of text per
    document (its bytes, or what is extracted) and ``max_file_bytes`` per file."""

    synced_root: Path
    collections: Sequence[str]
    depth: int = 1
    max_bytes: int = DEFAULT_MAX_BYTES
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def __post_init__(self) -> None:
        object.__setattr__(self, "collections", tuple(self.collections))  # (frozen: a copy)


@dataclass(frozen=True, slots=True)
class SourceDocument:
    path: str  # POSIX path relative to the synced root; the document's identity
    collection: str
    size: int
    content_hash: str  # sha256 of the bytes
    format: Format = _PLAIN  # what it is: text, a format a library extracts, or no text

    @property
    def title_hint(self) -> str:
        return title_hint(self.path)


def title_hint(path: str) -> str:
    """A title from the file name, for documents without a heading."""
    return PurePosixPath(path).stem.replace("-", " ").replace("_", " ")


def title_of(text: str, path: str) -> str:
    """A page's title: the document's first non-blank line within its first 20, without Markdown
    heading marks, at most 120 characters (a document's own heading beats a model's rewording);
    else the file name."""
    for line in islice((line.strip() for line in text.splitlines()), 20):
        if line:
            title = line.lstrip("#").strip()
            return title[:120] if title else title_hint(path)
    return title_hint(path)


def collection_of(relative: PurePosixPath | str, depth: int) -> str:
    """The collection of a document, from its path relative to the synced root."""
    folders = (relative.parts if isinstance(relative, PurePosixPath) else relative.split("/"))[:-1]
    return "/".join(folders[:depth]) if folders else ROOT_COLLECTION


def _hidden(name: str) -> bool:
    # Dot-files are tool state (.git, .obsidian, editor swap files), not documents.
    return name.startswith(".")


def _walk(start: str, prefix: str, recurse: bool) -> Iterator[tuple[str, str]]:
    """The files under the folder ``start`` in name order: each one's path, and its path
    relative to the synced root (``prefix``: the folder's, ending in "/"). Plain strings: a scan
    touches every file of the corpus, and path objects cost more than reading a small file."""
    try:
        entries = sorted(os.scandir(start), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if _hidden(entry.name):
            continue
        # Symlinks are never followed: a mirror must not pull in files from outside the root.
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            if recurse:
                yield from _walk(entry.path, f"{prefix}{entry.name}/", recurse)
        elif entry.is_file(follow_symlinks=False):
            yield entry.path, f"{prefix}{entry.name}"


def _read_file(path: str, keep_up_to: int) -> tuple[int, str, bytes, bytes | None]:
    """A file's size, sha256 and first bytes, and its bytes when it has at most ``keep_up_to`` of
    them: one read serves the hash, the format and the text. Larger files are hashed in a
    stream, never held."""
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError("not a regular file")
        if info.st_size > keep_up_to:
            head = handle.read(HEAD_BYTES)
            digest = hashlib.sha256(head)
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
            return info.st_size, digest.hexdigest(), head, None
        data = handle.read()
    return info.st_size, hashlib.sha256(data).hexdigest(), data[:HEAD_BYTES], data


def scan(
    root: Path,
    depth: int = 1,
    collections: Iterable[str] | None = None,
    ignored: list[Ignored] | None = None,
) -> Iterator[SourceDocument]:
    """Yield the documents under ``root`` (only those of ``collections`` if given), sorted by path,
    each with its format (formats.py); the files the ignore rules leave out (ignore.py) go to
    ``ignored``, if given.

    Unreadable files are yielded with an empty hash so that they are accounted for (and fail with a
    reason) instead of silently disappearing from the wiki's view of the corpus.
    """
    for doc, _ in scan_contents(root, depth, collections, keep_up_to=0, ignored=ignored):
        yield doc


def scan_contents(
    root: Path,
    depth: int = 1,
    collections: Iterable[str] | None = None,
    *,
    keep_up_to: int = DEFAULT_MAX_BYTES,
    ignored: list[Ignored] | None = None,
) -> Iterator[tuple[SourceDocument, bytes | None]]:
    """:func:`scan`, each document with its bytes when it has at most ``keep_up_to`` of them (for
    :func:`read_text`), so that a caller that needs both hash and text reads the file once. One
    document's bytes at a time: the stream never holds the corpus."""
    root = root.resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"synced root {root} is not a directory")
    rules = IgnoreRules.of(root)
    wanted = None if collections is None else set(collections)
    if wanted is None:
        starts = [(root, True)]
    else:
        starts = [
            (root, False) if name == ROOT_COLLECTION else (root / name, True)
            for name in sorted(wanted)
        ]
    for start, recurse in starts:
        if start != root and not (start.is_dir() and not start.is_symlink()):
            continue
        prefix = "" if start == root else f"{start.relative_to(root).as_posix()}/"
        for file, relative in _walk(str(start), prefix, recurse):
            collection = collection_of(relative, depth)
            if wanted is not None and collection not in wanted:
                continue
            rule = rules.rule_for(relative)
            if rule is not None:
                if ignored is not None:
                    ignored.append(Ignored(relative, rule))
                continue
            container = archive_kinds.kind_of(relative)
            if container is not None and container not in archive_kinds.WITH_BODY:
                yield from _archive(file, relative, collection, rules, ignored, keep_up_to)
                continue
            try:
                size, digest, head, data = _read_file(file, keep_up_to)
            except OSError:
                yield SourceDocument(relative, collection, 0, ""), None
                continue
            yield (
                SourceDocument(relative, collection, size, digest, format_of(relative, head)),
                data,
            )
            if container is not None:  # a mail: its attachments are documents under it
                yield from _archive(
                    file, relative, collection, rules, ignored, keep_up_to, body=True
                )


def _archive(
    file: str,
    relative: str,
    collection: str,
    rules: IgnoreRules,
    ignored: list[Ignored] | None,
    keep_up_to: int,
    body: bool = False,
) -> Iterator[tuple[SourceDocument, bytes | None]]:
    """The documents inside the archive at ``relative`` (archives.py), each under its path
    (``drive/회의자료.zip/안건.docx``) and of the archive's collection, with its bytes when it has
    at most ``keep_up_to`` of them; or the archive itself, holding no text, with the reason it
    could not be opened (or was refused). ``body``: the container is a document itself (a
    mail, already listed, whose own reader says why it is broken): only what it holds."""
    kind = archive_kinds.kind_of(relative) or "archive"
    try:
        size, digest, _, data = _read_file(file, archive_kinds.MAX_EXPANDED_BYTES)
    except OSError:
        if not body:
            yield SourceDocument(relative, collection, 0, ""), None
        return
    if data is None:
        too_large = f"refused: larger than {archive_kinds.MAX_EXPANDED_BYTES:,} bytes"
        if not body:
            yield SourceDocument(relative, collection, size, digest, Format(kind, too_large)), None
        return
    try:
        for member in archives.members(data, relative):
            path = f"{relative}/{member.name}"
            rule = rules.rule_for(path)
            if rule is not None:
                if ignored is not None:
                    ignored.append(Ignored(path, rule))
                continue
            content = member.data
            what = (
                format_of(path, content[:HEAD_BYTES])
                if member.no_text is None
                else Format(archive_kinds.kind_of(path) or "archive", member.no_text)
            )
            inside = hashlib.sha256(content).hexdigest()
            doc = SourceDocument(path, collection, len(content), inside, what)
            yield doc, content if len(content) <= keep_up_to else None
    except NoText as error:
        if not body:
            reason = Format(kind, str(error))
            yield SourceDocument(relative, collection, size, digest, reason), None


def collection_names(root: Path, depth: int = 1) -> set[str]:
    """The collections :func:`scan` would find under ``root``, by the names of their files alone
    (no file is opened): cheap enough to look at often."""
    root = root.resolve()
    if not root.is_dir():
        return set()
    rules = IgnoreRules.of(root)
    return {
        collection_of(relative, depth)
        for _, relative in _walk(str(root), "", True)
        if rules.rule_for(relative) is None
    }


def collection_version(documents: Iterable[SourceDocument]) -> str:
    """A data version for a collection: changes when any document is added, removed or edited."""
    digest = hashlib.sha256()
    for doc in sorted(documents, key=lambda d: d.path):
        digest.update(f"{doc.path}\0{doc.content_hash}\n".encode())
    return digest.hexdigest()[:16]


def read_text(
    root: Path,
    doc: SourceDocument,
    max_bytes: int = DEFAULT_MAX_BYTES,
    data: bytes | None = None,
) -> str:
    """The document's text, or :class:`DocumentError` with a reason a person can act on. ``data``:
    its bytes, when :func:`scan_contents` already read them (the file is then not read again)."""
    if not doc.content_hash:
        raise DocumentError("unreadable file")
    if doc.size > max_bytes:
        raise DocumentError(f"too large: {doc.size} bytes (limit {max_bytes})")
    if data is None:
        try:
            data = archives.read_bytes(root / doc.path)
        except OSError as error:
            raise DocumentError(f"unreadable file: {error.strerror or error}") from error
    text = decode(data)
    if not text.strip():
        raise DocumentError("empty document")
    return text

