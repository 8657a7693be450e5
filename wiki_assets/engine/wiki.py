"""The wiki on disk: page names, page text, and writes that never leave the wiki root.

Every write goes to a temporary file in the state folder and is renamed over its target, so a
reader never sees half a page, and whatever a killed run left half-written is in one place, swept
at the start of the next run.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

STATE_DIR = ".wiki_assets"
"""Hidden folder in the wiki root for the journal; Obsidian and most readers skip dot-folders."""


PAGE_WRITERS = 4
"""Pages written at once. A write is file-system calls (create, write, rename) that release the
GIL and cost far more than rendering on some disks, so a flush overlaps them with each other and
with rendering the next page."""


class UnsafePath(ValueError):
    """A page path that would land outside the wiki root."""


def page_for(source_path: str) -> str:
    """The page of a source document, mirroring its folders.

    Markdown sources keep their name; any other file gets ``.md`` appended (``notes.txt`` becomes
    ``notes.txt.md``), so two sources never map to one page just because they share a stem.
    """
    path = PurePosixPath(source_path)
    if path.suffix.lower() == ".md":
        return str(path)
    return str(path.with_name(path.name + ".md"))


_UMASK_LOCK = threading.Lock()


def new_file_mode() -> int:
    """The mode ``open()`` gives a new file under the process's umask (0644 under 022). Reading
    the umask means setting it, so the set-and-restore is serialised."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


class Wiki:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self._file_mode = new_file_mode()

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def _scratch(self) -> Path:
        """Where a page is written before it is renamed into place."""
        return self.state_dir / "tmp"

    def sweep_temporaries(self) -> int:
        """Remove what a killed run left half-written; returns how many files."""
        leftovers = list(self._scratch.glob(".tmp-*")) if self._scratch.is_dir() else []
        for leftover in leftovers:
            leftover.unlink(missing_ok=True)
        return len(leftovers)

    def resolve(self, page: str) -> Path:
        """The absolute path of ``page``, refusing anything that escapes the root."""
        relative = self._relative(page)
        target = (self.root / relative).resolve()
        if not target.is_relative_to(self.root):
            raise UnsafePath(f"page path {page!r} resolves outside the wiki root")
        return target

    @staticmethod
    def check(page: str) -> None:
        """Refuse a page name that could never be written (absolute, ``..``, the state folder);
        where its folder leads on disk is checked when it is written."""
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
        self._scratch.mkdir(parents=True, exist_ok=True)
        self._write(page, text, {})

    def write_many(self, pages: Iterable[tuple[str, str]]) -> dict[str, OSError | UnsafePath]:
        """Write ``(page, text)`` pairs, :data:`PAGE_WRITERS` at a time; ``pages`` is consumed in
        the calling thread (it may render from a connection that thread owns) while earlier
        pages are written. Returns the pages that could not be written, with their error."""
        folders: dict[str, Path] = {}  # checked once per call, not once per page
        self._scratch.mkdir(parents=True, exist_ok=True)
        writes: dict[str, Future[None]] = {}
        with ThreadPoolExecutor(PAGE_WRITERS, thread_name_prefix="page-writer") as pool:
            for page, text in pages:
                writes[page] = pool.submit(self._write, page, text, folders)
        failed: dict[str, OSError | UnsafePath] = {}
        for page, write in writes.items():
            error = write.exception()
            if isinstance(error, OSError | UnsafePath):
                failed[page] = error
            elif error is not None:
                raise error
        return failed

    def _write(self, page: str, text: str, folders: dict[str, Path]) -> None:
        relative = self._relative(page)
        key = str(relative.parent)
        folder = folders.get(key)
        if folder is None:
            # The folder is resolved (symlinks followed) and must stay inside the root. A symlink
            # at the page's own name is replaced by the rename below, never followed.
            folder = (self.root / relative.parent).resolve()
            if not folder.is_relative_to(self.root) or folder.is_relative_to(self.state_dir):
                raise UnsafePath(f"page path {page!r} resolves outside the wiki root")
            folder.mkdir(parents=True, exist_ok=True)
            folders[key] = folder
        # Same file system as the target, so the rename below is atomic.
        fd, temporary = tempfile.mkstemp(dir=self._scratch, prefix=".tmp-", suffix=".md")
        try:
            with os.fdopen(fd, "wb") as handle:
                # mkstemp makes the file 0600 whatever the umask, and the rename keeps it: give the
                # page the mode a new file gets (0644 under umask 022), so others can read the wiki.
                os.fchmod(handle.fileno(), self._file_mode)
                handle.write(text.encode("utf-8"))
            os.replace(temporary, folder / relative.name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

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


@dataclass(frozen=True, slots=True)
class Link:
    page: str  # the target's page, relative to the wiki root
    title: str
    reason: str = ""


def relative_path(page: str, folder: str) -> str:
    """``posixpath.relpath(page, folder)`` for two paths relative to the wiki root, without the
    ``os.getcwd()`` call relpath makes for each (rendering a page computes a dozen of these)."""
    target = posixpath.normpath(page).split("/")
    start = [part for part in posixpath.normpath(folder or ".").split("/") if part != "."]
    common = 0
    while common < min(len(target), len(start)) and target[common] == start[common]:
        common += 1
    return "/".join([".."] * (len(start) - common) + target[common:]) or "."


def link_to(from_page: str, link: Link) -> str:
    """A relative markdown link, which Obsidian resolves like a wikilink and any viewer follows."""
    target = relative_path(link.page, posixpath.dirname(from_page))
    title = _escape_html(_one_line(link.title)).replace("[", "\\[").replace("]", "\\]")
    return f"[{title}]({quote(target)})"


def render_page(
    page: str,
    source_path: str,
    content_hash: str,
    result: dict[str, Any],
    related: list[Link],
    backlinks: list[Link],
) -> str:
    """Markdown with YAML front matter. Front matter values are JSON-quoted, which is valid YAML
    and cannot break out of the front matter; titles and model output are data, never markup."""
    title = _escape_html(_one_line(result["title"]))
    front = {
        # Escaped here too: front matter is shown by viewers and read by tools like the body.
        "title": title,
        "description": _escape_html(_one_line(result.get("description", ""))),
        "source": source_path,
        "source_hash": content_hash,
        "model": result["model"],
        "prompt_version": result["prompt_version"],
        "generated": result["generated"],
        "language": result.get("language", ""),
        "parts": result.get("parts", 1),
        "prompt_tokens": result["prompt_tokens"],
        "completion_tokens": result["completion_tokens"],
        "input_cut": False,
        "hit_max_tokens": result.get("finish_reason") == "length",
        "tags": [tag for tag in (_tag(t) for t in result.get("topics", [])) if tag],
        "related": [link.page for link in related],
    }
    lines = ["---"]
    lines += [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in front.items()]
    lines += ["---", "", f"# {title}", ""]
    if front["description"]:
        lines += [f"> {front['description']}", ""]
    if result.get("parts", 1) > 1:
        lines += [f"*Summarized from the whole document in {result['parts']} parts.*", ""]
    if front["hit_max_tokens"]:
        lines += ["> [!warning] The model hit the max_tokens limit on this page.", ""]
    lines += [_escape_body(result["summary"]), ""]
    if result.get("key_points"):
        lines += ["## Key points", ""]
        lines += [f"- {_escape_body(_one_line(point))}" for point in result["key_points"]] + [""]
    if front["tags"]:
        lines += ["## Topics", "", " ".join(f"#{tag}" for tag in front["tags"]), ""]
    if related:
        lines += ["## Related", ""]
        for link in related:
            reason = f" — {_escape_body(_one_line(link.reason))}" if link.reason else ""
            lines.append(f"- {link_to(page, link)}{reason}")
        lines.append("")
    if backlinks:
        lines += ["## Backlinks", ""] + [f"- {link_to(page, link)}" for link in backlinks] + [""]
    shown = source_path.replace("`", "'")
    lines += [f"*Source:* `{shown}`", ""]
    return "\n".join(lines)


_TAG_JUNK = re.compile(r"[^\w/-]+")


def _tag(topic: str) -> str:
    """An Obsidian tag: no spaces or punctuation, not only digits."""
    tag = re.sub(r"-{2,}", "-", _TAG_JUNK.sub("", "-".join(topic.split()))).strip("-/")
    return "" if not tag or tag.isdigit() else tag[:40]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_body(text: str) -> str:
    # Neutralise raw HTML, and any line that could close or open front matter.
    text = _escape_html(text)
    return "\n".join("\\---" if line.strip() == "---" else line for line in text.splitlines())
