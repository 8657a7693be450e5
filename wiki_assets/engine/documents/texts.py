"""The texts extracted from documents, kept in the wiki's state folder by the file's content hash,
so that a file is extracted once per content (and again by a new extractor version), and so that
the checks, ``wiki-assets check`` and a reader see what the model saw.

``texts/<hash[:2]>/<hash>.md`` holds a document's text exactly as the model was given it (line
numbers are this file's), ``<hash>.json`` beside it what the extractor said of it: its version,
the title, the page, slide or sheet each line range is on, or why the file holds no text. Derived
from the synced tree alone, like the related index: deleting the folder costs only the time to
extract again. Written atomically (a temporary file, then a rename).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wiki_assets.engine.documents import ocr
from wiki_assets.engine.documents.extracted import Extracted

TEXTS_DIR = "texts"  # in the wiki's state folder


@dataclass(frozen=True, slots=True)
class Kept:
    """What the store holds for a content hash and an extractor: the text, or why there is none."""

    extractor: str
    extracted: Extracted | None
    no_text: str | None = None


class TextStore:
    """Extracted texts under ``folder`` (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def text_path(self, content_hash: str) -> Path:
        """Where the text extracted from the file of ``content_hash`` is (or would be)."""
        return self.folder / content_hash[:2] / f"{content_hash}.md"

    def get(self, content_hash: str, extractor: str) -> Kept | None:
        """What ``extractor`` (``pdf/1``) made of the file of ``content_hash``; None when it has
        not seen that content (or another version of the extractor did)."""
        meta_path = self.text_path(content_hash).with_suffix(".json")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("extractor") != extractor:
                return None
            if meta.get("no_text") is not None:
                if ocr.could_read(meta["no_text"]):
                    return None  # a scan seen before OCR was installed: read again, by it
                return Kept(extractor, None, str(meta["no_text"]))
            text = self.text_path(content_hash).read_text(encoding="utf-8")
        except (OSError, ValueError):
            return None  # not there, or half of it: extracted again
        locations = tuple((int(line), str(label)) for line, label in meta.get("locations", []))
        return Kept(extractor, Extracted(text, meta.get("title"), locations, bool(meta.get("ocr"))))

    def put(self, content_hash: str, kept: Kept) -> None:
        """Keep what an extractor made of a file: the text first, then its description (which
        makes it count), each replaced atomically."""
        path = self.text_path(content_hash)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta: dict[str, object] = {"extractor": kept.extractor}
        if kept.extracted is not None:
            _write(path, kept.extracted.text)
            meta["title"] = kept.extracted.title
            meta["locations"] = [list(location) for location in kept.extracted.locations]
            if kept.extracted.ocr:
                meta["ocr"] = True
        else:
            meta["no_text"] = kept.no_text
        _write(path.with_suffix(".json"), json.dumps(meta, ensure_ascii=False))

    def prune(self, keep: Iterable[str]) -> int:
        """Remove the texts of every content hash not in ``keep`` (files that changed or went);
        how many."""
        wanted = set(keep)
        removed = 0
        if not self.folder.is_dir():
            return 0
        for shard in self.folder.iterdir():
            if not shard.is_dir():
                continue
            for path in shard.iterdir():
                if path.name.split(".", 1)[0] not in wanted:
                    path.unlink(missing_ok=True)
                    removed += path.suffix == ".json"
        return removed


def _write(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


__all__ = ["TEXTS_DIR", "Kept", "TextStore"]
