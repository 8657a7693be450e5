"""The wiki's files: page names, and writes that never leave the wiki root.

Every write goes to a temporary file in the state folder and is renamed over its target, so a
reader never sees half a page, and whatever a killed run left half-written is in one place, swept
at the start of the next run.
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import time
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Protocol

from wiki_assets.engine.errors import UnsafePath as UnsafePath

STATE_DIR = ".wiki_assets"
"""Hidden folder in the wiki root for the journal; Obsidian and most readers skip dot-folders."""

INDEX_PAGE = "index.md"
"""The wiki's index, at its root; no document's page may take the name."""

DIGEST_DIR = "digest"
"""The daily digests' folder (``digest/YYYY-MM-DD.md``), at the root; no document's page may be
in it. Digests are dated records, not pages: the wiki's checks leave them out."""


def page_for(source_path: str) -> str:
    """The page of a source document, mirroring its folders.

    Markdown sources keep their name; any other file gets ``.md`` appended (``notes.txt`` becomes
    ``notes.txt.md``), so two sources never map to one page just because they share a stem.
    """
    path = PurePosixPath(source_path)
    if path.suffix.lower() == ".md":
        return str(path)
    return str(path.with_name(path.name + ".md"))


_TEMPORARY_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_temporaries = itertools.count()  # next() is atomic under the GIL: one name per write
_HOST = re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname())[:64] or "host"
STALE_TEMPORARY_S = 600
"""Age past which a half-written page of another host's run is taken for a leftover (a page is
renamed into place milliseconds after its file is created)."""


class Sender(Protocol):
    """Who writes a batch of pages for :meth:`Wiki.write_many`: the page writer process
    (:class:`~wiki_assets.engine.wiki.writer.PageWriter`)."""

    def send(self, target: Path, data: bytes) -> bool:
        """Hand one page over; False if it cannot be (the caller writes it)."""
        ...

    def finish(self) -> dict[int, OSError] | None:
        """Wait for the batch: its errors by the page's place in it, or None if any page may
        be unwritten."""
        ...


class Wiki:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._folders: dict[Path, Path] = {}  # a synced folder -> where it leads (original)
        # (synced root, a document's folder, a page's folder) -> the link between the folders
        self._links: dict[tuple[Path, str, str], str] = {}

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def scratch(self) -> Path:
        """Where a page is written before it is renamed into place."""
        return self.state_dir / "tmp"

    def sweep_temporaries(self) -> int:
        """Remove what a killed run left half-written; returns how many files. A file another
        run may be writing is left alone (runs on other collections, on this host or on another
        one sharing the wiki, write into the same folder): one whose process on this host is
        alive, or another host's younger than :data:`STALE_TEMPORARY_S`."""
        leftovers = list(self.scratch.glob(".tmp-*")) if self.scratch.is_dir() else []
        swept = 0
        for leftover in leftovers:
            if not _in_use(leftover):
                leftover.unlink(missing_ok=True)
                swept += 1
        return swept

    def resolve(self, page: str) -> Path:
        """The absolute path of ``page``, refusing anything that escapes the root."""
        relative = self._relative(page)
        target = (self.root / relative).resolve()
        if not target.is_relative_to(self.root):
            raise UnsafePath(f"page path {page!r} resolves outside the wiki root")
        return target

    def original(self, synced_root: Path, path: str, page: str) -> str:
        """The link from ``page`` to a file outside the wiki (the original of the document at
        ``path``, POSIX and relative to ``synced_root``): relative, so that the wiki and the
        mirror can move together. Worked out once per pair of folders: a folder's documents
        and their pages share it, and paths and resolving cost more than the page's rendering."""
        folder, _, name = path.rpartition("/")
        page_folder = page.rpartition("/")[0]
        if not _plain(path) or not _plain(page):  # ".", "..", "//": as the paths say, no cache
            file = synced_root / path
            return self._link(self._resolved_folder(file.parent) / file.name, page)
        key = (synced_root, folder, page_folder)
        link = self._links.get(key)
        if link is None:  # (a file is no folder: joining its name to the folder's link is exact)
            link = self._links[key] = self._link(self._resolved_folder(synced_root / folder), page)
        return name if link == "." else f"{link}/{name}"

    def _link(self, target: Path, page: str) -> str:
        folder = (self.root / self._relative(page)).parent
        return Path(os.path.relpath(target, folder)).as_posix()

    def _resolved_folder(self, folder: Path) -> Path:
        """``folder.resolve()``, once per run for a folder (resolving asks the disk about every
        part of the path, a system call each, which waits for the GIL while other threads run).
        A document itself is never a symlink: the scan skips symlinks (documents/corpus.py)."""
        resolved = self._folders.get(folder)
        if resolved is None:
            resolved = self._folders[folder] = folder.resolve()
        return resolved

    @staticmethod
    def check(page: str) -> None:
        """Refuse a page name that could never be written (absolute, ``..``, the state folder);
        where its folder leads on disk is checked when it is written."""
        if not _plain(page):  # a plain one is none of those (the state folder is hidden)
            Wiki._relative(page)

    @staticmethod
    def _relative(page: str) -> PurePosixPath:
        relative = PurePosixPath(page)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise UnsafePath(f"page path {page!r} is not a plain relative path")
        if relative.parts[0] == STATE_DIR:
            raise UnsafePath(f"page path {page!r} is inside the state folder")
        return relative

    def write(self, page: str, text: str) -> None:
        self.scratch.mkdir(parents=True, exist_ok=True)
        write_file(self.scratch, self._target(page, {}), text.encode("utf-8"))

    def write_if_changed(self, page: str, text: str) -> bool:
        """Write ``page`` unless it already reads ``text``; returns whether it was written. A
        page that cannot be read (missing, not UTF-8) is written."""
        target = self.resolve(page)
        try:
            current = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            current = None
        if current == text:
            return False
        self.write(page, text)
        return True

    def write_many(
        self, pages: Iterable[tuple[str, str]], writer: Sender | None = None
    ) -> dict[str, OSError | UnsafePath]:
        """Write ``(page, text)`` pairs; returns the pages that could not be written, with their
        error. ``pages`` is consumed in the calling thread (it may render from a connection that
        thread owns). Given a :class:`~.writer.PageWriter`, that process writes each page while
        the next one renders here; if it is gone, this process writes them."""
        folders: dict[str, Path] = {}  # checked once per call, not once per page
        self.scratch.mkdir(parents=True, exist_ok=True)
        failed: dict[str, OSError | UnsafePath] = {}
        # Kept until the writer confirms the batch, to be written here if it dies: a flush's
        # pages (at most UNWRITTEN_LIMIT, a few KB each) in memory at once.
        sent: list[tuple[str, Path, bytes]] = []

        def write_here(target: Path, data: bytes) -> OSError | None:
            try:
                write_file(self.scratch, target, data)
            except OSError as error:
                return error
            return None

        for page, text in pages:
            try:
                target = self._target(page, folders)
            except (OSError, UnsafePath) as unsafe:
                failed[page] = unsafe
                continue
            data = text.encode("utf-8")
            if writer is not None and writer.send(target, data):
                sent.append((page, target, data))
            elif (error := write_here(target, data)) is not None:
                failed[page] = error
        if sent:
            assert writer is not None
            errors = writer.finish()
            if errors is None:  # the writer is gone: whatever it was sent is written here
                written_here = (write_here(target, data) for _, target, data in sent)
                errors = {at: error for at, error in enumerate(written_here) if error is not None}
            failed.update((sent[at][0], error) for at, error in errors.items())
        return failed

    def _target(self, page: str, folders: dict[str, Path]) -> Path:
        """Where ``page`` is written: its folder resolved (symlinks followed), checked to be in
        the root and outside the state folder, and created; ``folders`` caches that per folder."""
        if _plain(page):  # its folder and name split at the last "/", no path object for them
            parent, _, name = page.rpartition("/")
            folder = folders.get(parent or ".")
            if folder is not None:
                return folder / name
        relative = self._relative(page)
        key = str(relative.parent)
        folder = folders.get(key)
        if folder is None:
            # A symlink at the page's own name is replaced by the rename, never followed.
            folder = (self.root / relative.parent).resolve()
            if not folder.is_relative_to(self.root) or folder.is_relative_to(self.state_dir):
                raise UnsafePath(f"page path {page!r} resolves outside the wiki root")
            folder.mkdir(parents=True, exist_ok=True)
            folders[key] = folder
        return folder / relative.name

    def remove(self, page: str) -> None:
        target = self.resolve(page)
        target.unlink(missing_ok=True)
        # Drop folders the removal emptied, but never the root itself.
        folder = target.parent
        while folder != self.root and folder.is_relative_to(self.root):
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent


def write_file(scratch: Path, target: Path, data: bytes) -> None:
    """Write ``data`` at ``target`` atomically: into a new file in ``scratch`` (on the target's
    file system), renamed over the target, so a reader never sees half a page. ``target``'s
    folder is the caller's to check (:meth:`Wiki._target`)."""
    temporary, fd = _create_temporary(scratch)
    try:
        try:
            view = memoryview(data)
            while view:  # a regular file takes it in one call, short of a full disk
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _create_temporary(scratch: Path) -> tuple[str, int]:
    """A new file in ``scratch``, opened for writing: its path and descriptor. Created with the
    mode ``open()`` gives a new file under the umask (0644 under 022), which the rename keeps, so
    others can read the wiki. The name is this host's, this process's and this write's
    (:func:`_in_use` reads it; one ``open`` call, where ``tempfile.mkstemp`` adds a random name,
    an fchmod and a file object); ``O_EXCL`` never reuses a file a dead process with the same pid
    left."""
    while True:
        temporary = f"{scratch}/.tmp-{_HOST}-{os.getpid()}-{next(_temporaries)}.md"
        try:
            return temporary, os.open(temporary, _TEMPORARY_FLAGS, 0o666)
        except FileExistsError:
            continue


def _plain(path: str) -> bool:
    """A relative POSIX path of plain names: no ".", "..", hidden or empty part, so that its
    folder and name are what splitting at the last "/" gives (the state folder is hidden)."""
    if not path or path.startswith("/") or path.endswith("/"):
        return False
    return "/." not in f"/{path}" and "//" not in path


def _in_use(temporary: Path) -> bool:
    """Whether a run may still be writing ``temporary`` (as :func:`_create_temporary` names
    it: host, pid, count)."""
    host_pid, _, _ = temporary.name.removeprefix(".tmp-").rpartition("-")
    host, _, pid = host_pid.rpartition("-")
    if host == _HOST and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # alive, another user's
        return True
    try:
        return time.time() - temporary.stat().st_mtime < STALE_TEMPORARY_S
    except FileNotFoundError:
        return True  # renamed into place meanwhile
