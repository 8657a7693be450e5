"""The text of the formats a drive keeps from before Office's XML: Word 97-2003 (``.doc``), Excel
97-2003 (``.xls``), PowerPoint 97-2003 (``.ppt``) and RTF, and Outlook mail (``.msg``), read by
kreuzberg (a Rust core: it can panic, so these formats are read only in the extracting
processes, with a time limit per file, extractors.py; an encrypted file is told by
msoffcrypto-tool); OpenDocument (``.odt``, ``.ods``, ``.odp``) by odfpy, with its slides and
sheets as locations. ``docs/benchmarks.md`` compares
them with the other readers tried.

A title is the file's own: the OLE summary's (olefile) for the 97-2003 formats, OpenDocument's
``dc:title``, a mail's subject.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from typing import Any

from wiki_assets.engine.documents.extracted import (
    OLE_MAGIC,
    Extracted,
    Lines,
    Source,
    as_file,
    encrypted,
    read_all,
    short,
    table,
)
from wiki_assets.engine.errors import NoText

# kreuzberg's formats: their MIME types (a member's bytes carry no name to tell it by).
KREUZBERG = {
    "doc": "application/msword",
    "xls": "application/vnd.ms-excel",
    "ppt": "application/vnd.ms-powerpoint",
    "rtf": "application/rtf",
    "msg": "application/vnd.ms-outlook",
}


def _kreuzberg(name: str) -> Callable[[Source, Lines], Extracted]:
    def read(source: Source, out: Lines) -> Extracted:
        import kreuzberg

        # No cache (it would write beside the run) and no OCR (its own tesseract looks for
        # language data a plain install lacks, and prints errors): text only.
        # (disable_ocr is a keyword of ExtractionConfig that its type stubs do not list yet.)
        config = kreuzberg.ExtractionConfig(use_cache=False, disable_ocr=True)  # type: ignore[call-arg]
        data = read_all(source)
        if name != "msg" and encrypted(data):
            raise NoText("password-protected")
        try:
            result = kreuzberg.extract_bytes_sync(data, KREUZBERG[name], config=config)
        except BaseException as error:  # a Rust panic is a BaseException (PanicException)
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            reason = short(error).removeprefix("ParsingError: ")
            if "encrypt" in reason.lower() or "password" in reason.lower():
                raise NoText("password-protected") from None
            raise NoText(f"unreadable {name.upper()} file: {reason}") from None
        metadata = dict(result.metadata)
        named = metadata.get("sheet_names") if name == "xls" else None
        sheets = [str(sheet) for sheet in named] if isinstance(named, list) else []
        for line in result.content.split("\n"):
            if sheets and line.strip() == sheets[0]:  # a sheet's name begins it
                out.begin(f"sheet {sheets.pop(0)}")
                out.add(f"## {line.strip()}")
                continue
            out.add(line)
        if name == "msg":
            return out.done(str(metadata.get("subject") or "") or None)
        return out.done(_ole_title(data) if data.startswith(OLE_MAGIC) else None)

    return read


def _ole_title(data: bytes) -> str | None:
    """The title in an OLE file's summary (Word, Excel and PowerPoint 97-2003), decoded in the
    code page the summary names."""
    import olefile

    try:
        summary = olefile.OleFileIO(data).get_metadata()
        title, codepage = summary.title, summary.codepage
    except Exception:  # a summary that cannot be read: the title comes from the text
        return None
    if not isinstance(title, bytes):
        return title if isinstance(title, str) else None
    page = (codepage or 1252) & 0xFFFF
    try:
        return title.decode("utf-8" if page == 65001 else codecs.lookup(f"cp{page}").name)
    except (LookupError, UnicodeDecodeError):
        return None


def _opendocument(source: Source, out: Lines) -> Extracted:
    from odf import dc, draw, opendocument, teletype
    from odf import table as odf_table

    if _odf_encrypted(source):
        raise NoText("password-protected")
    document = opendocument.load(as_file(source))
    titles = [teletype.extractText(node) for node in document.meta.getElementsByType(dc.Title)]
    slides = document.body.getElementsByType(draw.Page)
    sheets = [] if slides else document.body.getElementsByType(odf_table.Table)
    if slides:
        for number, slide in enumerate(slides, start=1):
            out.begin(f"slide {number}")
            _paragraphs(slide, out, heading=True)
    elif sheets and document.mimetype.endswith("spreadsheet"):
        for sheet in sheets:
            name = sheet.getAttribute("name")
            out.begin(f"sheet {name}")
            out.add(f"## {name}")
            table(out, _cells(sheet))
    else:
        _paragraphs(document.body, out, heading=False)
    return out.done(titles[0] if titles else None)


def _odf_encrypted(source: Source) -> bool:
    """Whether an OpenDocument file is encrypted: its manifest lists how each part of it is
    (its parts are then no XML that odfpy can parse, and a reader can tell no more)."""
    import zipfile

    try:
        with zipfile.ZipFile(as_file(source)) as package:
            manifest = package.read("META-INF/manifest.xml")
    except (zipfile.BadZipFile, KeyError, OSError):  # broken: odfpy says why
        return False
    return b"encryption-data" in manifest


def _paragraphs(node: Any, out: Lines, *, heading: bool) -> None:
    """Every paragraph and heading under ``node`` in order (``text:h`` as a Markdown heading;
    on a slide, its first line too)."""
    from odf import teletype
    from odf.namespaces import TEXTNS

    first = heading
    for element in _walk(node):
        if element.qname not in ((TEXTNS, "p"), (TEXTNS, "h")):
            continue
        text = teletype.extractText(element).strip()
        if not text:
            continue
        level = element.getAttribute("outlinelevel") if element.qname[1] == "h" else None
        if first or level:
            out.add("#" * (min(int(level or 1), 5) + 1) + f" {text}")
            first = False
        else:
            out.add(text)


def _walk(node: Any) -> Any:
    """The elements under ``node`` in document order, a paragraph's own children left out."""
    for child in node.childNodes:
        if child.nodeType != child.ELEMENT_NODE:
            continue
        yield child
        if child.qname[1] not in ("p", "h"):
            yield from _walk(child)


def _cells(sheet: Any) -> Any:
    from odf import table as odf_table
    from odf import teletype

    for row in sheet.getElementsByType(odf_table.TableRow):
        yield [teletype.extractText(cell) for cell in row.getElementsByType(odf_table.TableCell)]


LEGACY: dict[str, Callable[[Source, Lines], Extracted]] = {
    **{name: _kreuzberg(name) for name in KREUZBERG},
    "odt": _opendocument,
    "ods": _opendocument,
    "odp": _opendocument,
}
