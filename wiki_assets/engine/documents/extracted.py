"""What every extractor builds with: the text, line by line within its limit (:class:`Lines`),
and what comes of it (:class:`Extracted`); the document as the extractor gets it (:data:`Source`:
a file, or the bytes of an archive's member); and the ways a library's failure becomes a reason.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

from wiki_assets.engine.errors import DocumentError, NoText

T = TypeVar("T")

Location = tuple[int, str]  # (the line a page, slide or sheet begins on, its label)
Source = Path | bytes  # a file of the synced tree, or the bytes of an archive's member
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Office 97-2003's container (and HWP 5's)


def as_file(source: Source) -> str | BinaryIO:
    """``source`` as a library opens it: the file's path, or the member's bytes as a file."""
    return str(source) if isinstance(source, Path) else io.BytesIO(source)


def read_all(source: Source) -> bytes:
    return source.read_bytes() if isinstance(source, Path) else source


@dataclass(frozen=True, slots=True)
class Extracted:
    """A document's text as extracted: its title where the format has one, its locations."""

    text: str
    title: str | None = None
    locations: tuple[Location, ...] = ()
    ocr: bool = False  # read from pictures by OCR (ocr.py), which the page says



class Lines:
    """The text being built, line by line, within the limit; and where each part begins."""

    def __init__(self, max_bytes: int) -> None:
        self.lines: list[str] = []
        self.locations: list[Location] = []
        self.size = 0
        self.max_bytes = max_bytes

    def add(self, text: str) -> None:
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            self.lines.append(line.rstrip())
            self.size += len(line.encode("utf-8")) + 1
        if self.size > self.max_bytes:
            raise DocumentError(f"too large: extracted text over {self.max_bytes} bytes")

    def begin(self, label: str) -> None:
        """The next line begins a part (a page, a slide, a sheet) named ``label``."""
        if self.lines and self.lines[-1]:
            self.lines.append("")
        self.locations.append((len(self.lines) + 1, label))

    def done(self, title: str | None, ocr: bool = False) -> Extracted:
        text = "\n".join(self.lines).strip("\n")
        if not text.strip():
            raise NoText("no text")
        # Leading blank lines went with strip: the locations' line numbers move with them.
        lead = len(self.lines) - len("\n".join(self.lines).lstrip("\n").split("\n"))
        locations = tuple((max(1, line - lead), label) for line, label in self.locations)
        return Extracted(text, clean(title), locations, ocr)



def table(out: Lines, rows: Iterable[Iterable[object]]) -> None:
    """Rows as Markdown table lines (``| a | b |``), empty rows left out, one at a time."""
    for row in rows:
        cells = ["" if cell is None else " ".join(str(cell).split()) for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            out.add("| " + " | ".join(cells) + " |")


def opened(open_it: Callable[[], T], kind: str, source: Source) -> T:
    """A document opened by its library; a file that is not one (cut short, not a zip) is
    :class:`NoText` with the library's reason, and one that is encrypted (which Office stores as
    a different container) is "password-protected"."""
    try:
        return open_it()
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as error:
        reason = short(error)
    except Exception as error:
        if type(error).__name__ != "PackageNotFoundError":  # python-docx's, python-pptx's
            raise
        reason = "File is not a zip file"  # (what it means: "Package not found at <path>")
    if encrypted(read_all(source)):
        raise NoText("password-protected") from None
    raise NoText(f"unreadable {kind} file: {reason}") from None


def encrypted(data: bytes) -> bool:
    """Whether an Office file is encrypted, as msoffcrypto-tool tells from the flags each format
    keeps for it: Word, Excel and PowerPoint 97-2003, and Office's XML formats, which become an
    OLE container holding the encrypted package (their readers see a file that is not a zip)."""
    import msoffcrypto

    if not data.startswith(OLE_MAGIC):
        return False
    try:
        return bool(msoffcrypto.OfficeFile(io.BytesIO(data)).is_encrypted())
    except Exception:  # not a file it knows: the reader says why
        return False


def clean(title: str | None) -> str | None:
    title = " ".join((title or "").split())
    return title[:120] or None


def short(error: object) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 120 else text[:119] + "…"
