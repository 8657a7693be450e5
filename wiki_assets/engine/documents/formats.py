"""What a file of the synced tree is: text to decode, a format a library extracts, or a file that
holds no text, and why.

Decided by the file's name and, where a name can lie, its first bytes: a ``.pdf`` that does not
start like a PDF but reads as text is text (an export that kept the wrong extension), and a file
whose name says nothing is text when its bytes decode as text (in any encoding, encodings.py).
What holds no text is never opened by a converter: fonts, audio and video, archives not opened
as folders (``.7z``, ``.rar``: archives.py opens the others), pictures OCR does not read, a
picture OCR would read where tesseract is not installed (ocr.py), and formats no library here
reads (``unsupported format: .xlsb``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from wiki_assets.engine.documents import ocr
from wiki_assets.engine.documents.encodings import encoding_of
from wiki_assets.engine.documents.extracted import OLE_MAGIC

TEXT = "text"  # decoded as it is (Markdown, plain text, and any file whose bytes are text)
TEXT_EXTENSIONS = frozenset(".txt .text .md .markdown .rst .adoc .org".split())

# Formats a library extracts (see extract.py), by extension.
EXTRACTED = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".docm": "docx",
    ".pptx": "pptx",
    ".pptm": "pptx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".csv": "csv",
    ".tsv": "tsv",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".hwp": "hwp",
    ".hwpx": "hwp",
    ".eml": "eml",
    ".doc": "doc",
    ".dot": "doc",
    ".xls": "xls",
    ".ppt": "ppt",
    ".pps": "ppt",
    ".rtf": "rtf",
    ".odt": "odt",
    ".ods": "ods",
    ".odp": "odp",
    ".msg": "msg",
    # Pictures a scan or a phone gives: read by OCR (ocr.py), where tesseract is installed.
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
}
_ZIP = b"PK\x03\x04"
# What the first bytes of each extracted format are (None: any; a text format).
_MAGIC: dict[str, tuple[bytes, ...] | None] = {
    "pdf": (b"%PDF-",),
    "docx": (_ZIP,),
    "pptx": (_ZIP,),
    "xlsx": (_ZIP,),
    "hwp": (OLE_MAGIC, _ZIP),  # HWP 5 (OLE), HWPX (zip)
    "doc": (OLE_MAGIC,),
    "xls": (OLE_MAGIC,),
    "ppt": (OLE_MAGIC,),
    "msg": (OLE_MAGIC,),
    "odt": (_ZIP,),
    "ods": (_ZIP,),
    "odp": (_ZIP,),
    "rtf": (b"{\\rtf",),
    "image": (b"\x89PNG", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*"),  # PNG, JPEG, TIFF
    "csv": None,
    "tsv": None,
    "html": None,
    "eml": None,
}

# Files that hold no text, by extension: what they are.
_NO_TEXT_KINDS = {
    "image": ".gif .bmp .webp .heic .heif .svg .ico .psd .ai .eps",
    "archive": ".zip .7z .rar .tar .gz .tgz .bz2 .xz .zst .jar .war .iso .dmg",
    "font": ".ttf .otf .woff .woff2 .eot",
    "audio or video": ".mp3 .wav .m4a .flac .ogg .aac .mp4 .mov .avi .mkv .webm .wmv",
    "binary": ".exe .dll .so .dylib .bin .class .o .a .pyc .db .sqlite .mdb",
}
NO_TEXT_EXTENSIONS = {
    extension: kind for kind, listed in _NO_TEXT_KINDS.items() for extension in listed.split()
}
# Known formats no converter here reads (binary Excel, EPUB, Apple's, Visio, OneNote…).
UNSUPPORTED = frozenset(".xlsb .epub .pages .numbers .key .vsd .vsdx .one .mpp".split())


@dataclass(frozen=True, slots=True)
class Format:
    """What a file is: ``name`` (``text``, or the extracted format: ``pdf``, ``docx``…), or
    ``no_text``: why it holds none (``image``, ``archive``, ``unsupported format: .doc``…)."""

    name: str
    no_text: str | None = None

    @property
    def extracted(self) -> bool:
        return self.no_text is None and self.name != TEXT


def format_of(path: str, head: bytes) -> Format:
    """What the file at ``path`` (relative, POSIX) is, from its name and ``head``, its first
    bytes (a few KB: enough to tell text from binary)."""
    extension = PurePosixPath(path).suffix.lower()
    kind = NO_TEXT_EXTENSIONS.get(extension)
    if kind is not None:
        return Format(kind, no_text=kind)
    if extension in UNSUPPORTED:
        return Format(extension.lstrip("."), no_text=f"unsupported format: {extension}")
    name = EXTRACTED.get(extension)
    if name == "image" and not ocr.available():
        return Format(name, no_text=f"image: {ocr.WOULD_READ}")
    if name is not None:
        magic = _MAGIC[name]
        if magic is None or head.startswith(magic) or not looks_like_text(head):
            # (A file that starts wrong and is not text either: the converter says why.)
            return Format(name)
        return Format(TEXT)  # e.g. a ".pdf" that is really text
    if extension in TEXT_EXTENSIONS or looks_like_text(head):
        return Format(TEXT)  # (a text file that does not decode fails, with the reason)
    if not extension:
        return Format("binary", no_text="binary file")
    return Format(extension.lstrip("."), no_text=f"unsupported format: {extension}")


def looks_like_text(head: bytes) -> bool:
    """Whether the first bytes of a file read as text, in any encoding (encodings.py): UTF-8,
    UTF-16 with or without its mark, CP949, Shift-JIS…"""
    return encoding_of(head) is not None
