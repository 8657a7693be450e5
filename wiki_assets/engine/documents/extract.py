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
from collections.abc import Callable
from typing import Any

from wiki_assets.engine.documents import ocr
from wiki_assets.engine.documents.encodings import decode
from wiki_assets.engine.documents.extracted import (
    Extracted,
    Lines,
    Source,
    as_file,
    opened,
    read_all,
    short,
    table,
)
from wiki_assets.engine.documents.legacy import KREUZBERG, LEGACY
from wiki_assets.engine.documents.word import docx
from wiki_assets.engine.errors import DocumentError, NoText

# Each extractor's version: a new one re-extracts that format's files, and redoes the pages
# whose text it changes (a page records the text it was written from).
VERSIONS = {
    "pdf": 3, "docx": 2, "pptx": 1, "xlsx": 1, "csv": 1, "tsv": 1, "html": 1, "hwp": 1, "eml": 1,
    "doc": 1, "xls": 1, "ppt": 1, "rtf": 1, "odt": 2, "ods": 2, "odp": 2, "msg": 1,
    "image": 2,
}  # fmt: skip


# Formats whose reader can panic, crash or hang on a hostile file (native code that is not
# PDFium, python-docx's lxml…): read only in the extracting processes, with a time limit per
# file (extractors.py), never in the run's own.
ISOLATED = frozenset(KREUZBERG)


def extractor(name: str) -> str:
    """The extractor of format ``name`` and its version, as pages and the text store record it
    (``pdf/1``)."""
    return f"{name}/{VERSIONS[name]}"


def extract(source: Source, name: str, max_bytes: int) -> Extracted:
    """The text of ``source`` (a file, or an archive member's bytes), in format ``name``
    (formats.py), at most ``max_bytes`` bytes of UTF-8 (:class:`DocumentError` past that), or
    :class:`NoText` with the reason."""
    try:
        return _EXTRACTORS[name](source, Lines(max_bytes))
    except (NoText, DocumentError):
        raise
    except MemoryError:
        raise DocumentError("too large to extract") from None
    except Exception as error:  # a converter's own error for a file it cannot read
        raise NoText(f"unreadable {name.upper()} file: {short(error)}") from None


def _pdf(source: Source, out: Lines) -> Extracted:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(source if isinstance(source, bytes) else str(source))
    except pdfium.PdfiumError as error:
        if getattr(error, "err_code", None) == 4:  # FPDF_ERR_PASSWORD
            raise NoText("password-protected") from None
        raise NoText(f"unreadable PDF file: {short(error)}") from None
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
            if not ocr.available():
                raise NoText(f"no text layer (scanned?): {ocr.WOULD_READ}")
            return _scanned(pdf, Lines(out.max_bytes))
        title = pdf.get_metadata_dict().get("Title")
    finally:
        pdf.close()
    return out.done(title)


def _scanned(pdf: Any, out: Lines) -> Extracted:
    """A PDF without a text layer, read by OCR a page at a time (its title: its first line)."""
    for index, text in ocr.pdf_pages(pdf):
        out.begin(f"page {index + 1}")
        out.add(text)
    return out.done(None, ocr=True)


def _image(source: Source, out: Lines) -> Extracted:
    """A picture (a scan, a photo of a whiteboard), read by OCR."""
    if not ocr.available():
        raise NoText(f"image: {ocr.WOULD_READ}")
    out.add(ocr.read_picture(ocr.whole_picture(read_all(source))))
    return out.done(None, ocr=True)


def _pptx(source: Source, out: Lines) -> Extracted:
    from pptx import Presentation

    deck = opened(lambda: Presentation(as_file(source)), "PowerPoint", source)
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
                table(out, ([cell.text for cell in row.cells] for row in shape.table.rows))
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                out.add(f"Notes: {notes}")
    return out.done(deck.core_properties.title or first_title)


def _xlsx(source: Source, out: Lines) -> Extracted:
    import openpyxl

    book = opened(
        lambda: openpyxl.load_workbook(as_file(source), read_only=True, data_only=True),
        "Excel",
        source,
    )
    try:
        for sheet in book.worksheets:
            out.begin(f"sheet {sheet.title}")
            out.add(f"## {sheet.title}")
            table(out, sheet.iter_rows(values_only=True))
        title = book.properties.title
    finally:
        book.close()
    return out.done(title)


def _csv(source: Source, out: Lines, dialect: type[csv.Dialect] = csv.excel) -> Extracted:
    text = decode(read_all(source))
    table(out, csv.reader(io.StringIO(text, newline=""), dialect))
    return out.done(None)


def _tsv(source: Source, out: Lines) -> Extracted:
    return _csv(source, out, csv.excel_tab)


# Where an HTML page's content is, most specific first: a Confluence export's main content (its
# breadcrumbs, "Space : Title" heading, "Created by …" line, attachments and footer lie outside
# it), a Notion export's page body, then any page's main element or article, then its body.
_MAIN = ("#main-content", ".page-body", "main", "article", "[role=main]", "body")
# Page furniture inside the content that a reader does not need.
_CHROME = "script, style, noscript, nav, header, footer, aside, form, #breadcrumb-section"
_SPACE_TITLE = re.compile(r"^[^:]{1,80} : ")  # a Confluence export's "Space : Title"


def _html(source: Source, out: Lines) -> Extracted:
    import html_to_markdown
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(decode(read_all(source)))
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


def _hwp(source: Source, out: Lines) -> Extracted:
    import extract_hwp

    if isinstance(source, bytes):  # an archive's member: read by its kind, HWP 5 or HWPX
        hwpx = source.startswith(b"PK")
        read = extract_hwp.extract_text_from_hwpx if hwpx else extract_hwp.extract_text_from_hwp5
        try:
            text, error = read(io.BytesIO(source)), None
        except Exception as failure:  # (what extract_text_from_hwp turns into its error value)
            text, error = "", str(failure)
    else:
        if extract_hwp.is_hwp_file_password_protected(str(source)):
            raise NoText("password-protected")
        text, error = extract_hwp.extract_text_from_hwp(str(source))
    if error is not None or not (text or "").strip():
        # (A broken file is reported as an error value, or as no text at all.)
        raise NoText(f"unreadable HWP file{': ' + short(error) if error else ''}")
    out.add(text)
    return out.done(None)


def _eml(source: Source, out: Lines) -> Extracted:
    message = email.message_from_bytes(read_all(source), policy=email.policy.default)
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


_EXTRACTORS: dict[str, Callable[[Source, Lines], Extracted]] = {
    **LEGACY,
    "pdf": _pdf,
    "docx": docx,
    "pptx": _pptx,
    "xlsx": _xlsx,
    "csv": _csv,
    "tsv": _tsv,
    "html": _html,
    "hwp": _hwp,
    "eml": _eml,
    "image": _image,
}
assert set(_EXTRACTORS) == set(VERSIONS)


