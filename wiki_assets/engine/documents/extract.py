"""The text of a document in a format a library reads, each format by a library made for it:
PDF's text layer by pypdfium2 (PDFium, a page at a time), Word by python-docx, PowerPoint
(slides and speaker notes) by python-pptx, Excel by openpyxl (rows streamed), CSV and mail by
Python's own ``csv`` and ``email``, HTML exports by selectolax (the page's main content, its
navigation, breadcrumbs, metadata line and footer left out) and html-to-markdown, HWP and HWPX by
extract-hwp. ``docs/benchmarks.md`` has how they compared with the all-in-one converters.

The text is Markdown-like (headings as ``#`` lines, tables as ``|`` rows), so that a page's
title, its headings and its lines read the same as a Markdown document's, and every key point's
lines cite it. A PDF's pages, a deck's slides and a workbook's sheets are *locations*: the line
each begins on, so a key point also names its page or slide.

A file that holds no text (a scan without a text layer, a password-protected or broken file) is
:class:`~wiki_assets.engine.errors.NoText` with the reason; one whose text passes the limit is a
:class:`~wiki_assets.engine.errors.DocumentError`, raised as soon as it does (memory stays
bounded: a PDF is read a page at a time, a workbook a row at a time).
"""

from __future__ import annotations

import csv
import email
import email.policy
import io
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from wiki_assets.engine.documents.encodings import decode
from wiki_assets.engine.errors import DocumentError, NoText

T = TypeVar("T")

# Each extractor's version: a new one re-extracts that format's files, and redoes the pages
# whose text it changes (a page records the text it was written from).
VERSIONS = {"pdf": 1, "docx": 1, "pptx": 1, "xlsx": 1, "csv": 1, "html": 1, "hwp": 1, "eml": 1}

Location = tuple[int, str]  # (the line a page, slide or sheet begins on, its label)


@dataclass(frozen=True, slots=True)
class Extracted:
    """A document's text as extracted: its title where the format has one, its locations."""

    text: str
    title: str | None = None
    locations: tuple[Location, ...] = ()


def extractor(name: str) -> str:
    """The extractor of format ``name`` and its version, as pages and the text store record it
    (``pdf/1``)."""
    return f"{name}/{VERSIONS[name]}"


def extract(path: Path, name: str, max_bytes: int) -> Extracted:
    """The text of the file at ``path``, in format ``name`` (formats.py), at most ``max_bytes``
    bytes of UTF-8 (:class:`DocumentError` past that), or :class:`NoText` with the reason."""
    try:
        return _EXTRACTORS[name](path, _Lines(max_bytes))
    except (NoText, DocumentError):
        raise
    except MemoryError:
        raise DocumentError("too large to extract") from None
    except Exception as error:  # a converter's own error for a file it cannot read
        raise NoText(f"unreadable {name.upper()} file: {_short(error)}") from None


class _Lines:
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

    def done(self, title: str | None) -> Extracted:
        text = "\n".join(self.lines).strip("\n")
        if not text.strip():
            raise NoText("no text")
        # Leading blank lines went with strip: the locations' line numbers move with them.
        lead = len(self.lines) - len("\n".join(self.lines).lstrip("\n").split("\n"))
        locations = tuple((max(1, line - lead), label) for line, label in self.locations)
        return Extracted(text, _clean(title), locations)


def _pdf(path: Path, out: _Lines) -> Extracted:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        if getattr(error, "err_code", None) == 4:  # FPDF_ERR_PASSWORD
            raise NoText("password-protected") from None
        raise NoText(f"unreadable PDF file: {_short(error)}") from None
    try:
        chars = 0
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            try:
                chars += textpage.count_chars()
                out.begin(f"page {index + 1}")
                out.add(textpage.get_text_bounded())
            finally:
                textpage.close()
                page.close()
        if chars == 0:
            raise NoText("no text layer (scanned?)")
        title = pdf.get_metadata_dict().get("Title")
    finally:
        pdf.close()
    return out.done(title)


def _docx(path: Path, out: _Lines) -> Extracted:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    document = _opened(lambda: docx.Document(str(path)), "Word")
    first_title = None
    # The body in order: paragraphs and tables as they stand (``paragraphs`` alone skips tables).
    for block in document.element.body.iterchildren():
        tag = block.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(block, document)
            text = paragraph.text.strip()
            if not text:
                continue
            style = paragraph.style.name if paragraph.style is not None else ""
            if style == "Title":
                first_title = first_title or text
                out.add(f"# {text}")
            elif (style or "").startswith("Heading"):
                level = (style or "").split()[-1]
                out.add("#" * (int(level) + 1 if level.isdigit() else 2) + f" {text}")
            elif (style or "").startswith("List"):
                out.add(f"- {text}")
            else:
                out.add(text)
            out.add("")
        elif tag == "tbl":
            table = Table(block, document)
            _table(out, ([cell.text for cell in row.cells] for row in table.rows))
            out.add("")
    return out.done(document.core_properties.title or first_title)


def _pptx(path: Path, out: _Lines) -> Extracted:
    from pptx import Presentation

    deck = _opened(lambda: Presentation(str(path)), "PowerPoint")
    first_title = None
    for number, slide in enumerate(deck.slides, start=1):
        out.begin(f"slide {number}")
        heading = slide.shapes.title
        title = heading.text_frame.text.strip() if heading is not None else ""
        first_title = first_title or title or None
        out.add(f"## {title or f'Slide {number}'}")
        for shape in slide.shapes:
            if heading is not None and shape.shape_id == heading.shape_id:
                continue
            if shape.has_text_frame:
                for paragraph in shape.text_frame.paragraphs:
                    if paragraph.text.strip():
                        out.add(paragraph.text.strip())
            elif getattr(shape, "has_table", False):
                _table(out, ([cell.text for cell in row.cells] for row in shape.table.rows))
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                out.add(f"Notes: {notes}")
    return out.done(deck.core_properties.title or first_title)


def _xlsx(path: Path, out: _Lines) -> Extracted:
    import openpyxl

    book = _opened(
        lambda: openpyxl.load_workbook(str(path), read_only=True, data_only=True), "Excel"
    )
    try:
        for sheet in book.worksheets:
            out.begin(f"sheet {sheet.title}")
            out.add(f"## {sheet.title}")
            _table(out, sheet.iter_rows(values_only=True))
        title = book.properties.title
    finally:
        book.close()
    return out.done(title)


def _csv(path: Path, out: _Lines) -> Extracted:
    text = decode(path.read_bytes())
    dialect = csv.excel_tab if path.suffix.lower() == ".tsv" else csv.excel
    _table(out, csv.reader(io.StringIO(text, newline=""), dialect))
    return out.done(None)


# Where an HTML page's content is, most specific first: a Confluence export's main content (its
# breadcrumbs, "Space : Title" heading, "Created by …" line, attachments and footer lie outside
# it), a Notion export's page body, then any page's main element or article, then its body.
_MAIN = ("#main-content", ".page-body", "main", "article", "[role=main]", "body")
# Page furniture inside the content that a reader does not need.
_CHROME = "script, style, noscript, nav, header, footer, aside, form, #breadcrumb-section"
_SPACE_TITLE = re.compile(r"^[^:]{1,80} : ")  # a Confluence export's "Space : Title"


def _html(path: Path, out: _Lines) -> Extracted:
    import html_to_markdown
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(decode(path.read_bytes()))
    confluence = tree.css_first("#main-content") is not None
    main = next((node for node in map(tree.css_first, _MAIN) if node is not None), None)
    if main is None:
        raise NoText("no text")
    for node in main.css(_CHROME):
        node.decompose()
    converted = html_to_markdown.convert(
        main.html or "", html_to_markdown.ConversionOptions(extract_metadata=False)
    )
    out.add(converted.content or "")
    named = tree.css_first("#title-text") or tree.css_first("title") or tree.css_first("h1")
    title = named.text(strip=True) if named is not None else None
    if title and (confluence or tree.css_first("#title-text") is not None):
        title = _SPACE_TITLE.sub("", title)
    return out.done(title)


def _hwp(path: Path, out: _Lines) -> Extracted:
    import extract_hwp

    if extract_hwp.is_hwp_file_password_protected(str(path)):
        raise NoText("password-protected")
    text, error = extract_hwp.extract_text_from_hwp(str(path))
    if error is not None or not (text or "").strip():
        # (A broken file is reported as an error value, or as no text at all.)
        raise NoText(f"unreadable HWP file{': ' + _short(error) if error else ''}")
    out.add(text)
    return out.done(None)


def _eml(path: Path, out: _Lines) -> Extracted:
    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    subject = str(message.get("subject") or "").strip()
    if subject:
        out.add(f"# {subject}")
    for header in ("from", "to", "date"):
        if message.get(header):
            out.add(f"{header.capitalize()}: {message[header]}")
    out.add("")
    body = message.get_body(("plain", "html"))
    if body is not None:
        content = body.get_content()
        if body.get_content_type() == "text/html":
            import html_to_markdown

            content = html_to_markdown.convert(
                content, html_to_markdown.ConversionOptions(extract_metadata=False)
            ).content
        out.add(content or "")
    return out.done(subject or None)


_EXTRACTORS: dict[str, Callable[[Path, _Lines], Extracted]] = {
    "pdf": _pdf,
    "docx": _docx,
    "pptx": _pptx,
    "xlsx": _xlsx,
    "csv": _csv,
    "html": _html,
    "hwp": _hwp,
    "eml": _eml,
}
assert set(_EXTRACTORS) == set(VERSIONS)


def _table(out: _Lines, rows: Iterable[Iterable[object]]) -> None:
    """Rows as Markdown table lines (``| a | b |``), empty rows left out, one at a time."""
    for row in rows:
        cells = ["" if cell is None else " ".join(str(cell).split()) for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            out.add("| " + " | ".join(cells) + " |")


def _opened(open_it: Callable[[], T], kind: str) -> T:
    """A document opened by its library; a file that is not one (cut short, not a zip, or
    encrypted, which Office stores as a different container) is :class:`NoText`."""
    try:
        return open_it()
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as error:
        reason = f"unreadable {kind} file (broken, or password-protected): {_short(error)}"
        raise NoText(reason) from None
    except Exception as error:
        if type(error).__name__ == "PackageNotFoundError":  # python-docx's, python-pptx's
            raise NoText(f"unreadable {kind} file (broken, or password-protected)") from None
        raise


def _clean(title: str | None) -> str | None:
    title = " ".join((title or "").split())
    return title[:120] or None


def _short(error: object) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 120 else text[:119] + "…"
