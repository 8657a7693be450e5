"""The wiki on disk: page names, page text, and writes that never leave the wiki root.

Every write goes to a temporary file in the state folder and is renamed over its target, so a
reader never sees half a page, and whatever a killed run left half-written is in one place, swept
at the start of the next run.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

STATE_DIR = ".wiki_assets"
"""Hidden folder in the wiki root for the journal; Obsidian and most readers skip dot-folders."""


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


class Wiki:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def _scratch(self) -> Path:
        return self.state_dir / "tmp"

    def sweep_temporaries(self) -> int:
        """Remove what a killed run left half-written; returns how many files."""
        leftovers = list(self._scratch.glob(".tmp-*")) if self._scratch.is_dir() else []
        for leftover in leftovers:
            leftover.unlink(missing_ok=True)
        return len(leftovers)

    def resolve(self, page: str) -> Path:
        """The absolute path of ``page``, refusing anything that escapes the root."""
        relative = PurePosixPath(page)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise UnsafePath(f"page path {page!r} is not a plain relative path")
        if relative.parts[0] == STATE_DIR:
            raise UnsafePath(f"page path {page!r} is inside the state folder")
        target = (self.root / relative).resolve()
        if not target.is_relative_to(self.root):
            raise UnsafePath(f"page path {page!r} resolves outside the wiki root")
        return target

    def write(self, page: str, text: str) -> None:
        target = self.resolve(page)
        target.parent.mkdir(parents=True, exist_ok=True)
        self._scratch.mkdir(parents=True, exist_ok=True)
        # Same file system as the target, so the rename below is atomic.
        fd, temporary = tempfile.mkstemp(dir=self._scratch, prefix=".tmp-", suffix=".md")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, target)
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


def render_page(source_path: str, content_hash: str, result: dict[str, Any]) -> str:
    """Markdown with YAML front matter. Values are JSON-quoted, which is valid YAML and cannot
    break out of the front matter whatever the model wrote."""
    # Titles come from the documents and summaries from the models: both are data, never markup.
    title = _escape_html(_one_line(result["title"]))
    notes = []
    if result.get("input_cut"):
        notes.append(
            "> [!note] The document was longer than the model's context; only its beginning "
            "was summarized."
        )
    if result.get("finish_reason") == "length":
        notes.append("> [!warning] The summary hit the max_tokens limit and may end mid-sentence.")
    front = {
        "title": title,
        "source": source_path,
        "source_hash": content_hash,
        "model": result["model"],
        "prompt_version": result["prompt_version"],
        "generated": result["generated"],
        "prompt_tokens": result["prompt_tokens"],
        "completion_tokens": result["completion_tokens"],
        "input_cut": bool(result.get("input_cut")),
        "hit_max_tokens": result.get("finish_reason") == "length",
    }
    lines = ["---"]
    lines += [f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in front.items()]
    lines += ["---", "", f"# {title}", "", *notes, "" if notes else None]
    lines += [_escape_body(result["summary"]), "", f"*Source:* `{source_path}`", ""]
    return "\n".join(line for line in lines if line is not None)


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
