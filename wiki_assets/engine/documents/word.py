"""A Word file's text, all of it: the body in order (paragraphs, tables, and the text in content
controls and text boxes, which python-docx's ``paragraphs`` and ``Paragraph.text`` leave out),
then what stands beside the body: headers and footers, footnotes, endnotes and comments.

The body's text is taken from its XML: every ``w:t`` of a paragraph, in document order, inside a
content control (``w:sdt``), a hyperlink, a field or a tracked insertion alike; a deleted run's
text (``w:delText``) is not the document's. A text box's paragraphs follow the paragraph that
anchors it; the copy Word keeps for old readers (``mc:Fallback``) is skipped, or a text box
would be read twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from wiki_assets.engine.documents.extracted import Extracted, Lines, Source, as_file, opened

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_TEXT_BOX = f"{_W}txbxContent"
# What a paragraph's text is made of; anything inside these is not the paragraph's own text.
_CHARACTERS = {f"{_W}t": None, f"{_W}tab": "\t", f"{_W}br": "\n", f"{_W}cr": "\n"}
_NOT_OWN = {_TEXT_BOX, _FALLBACK, f"{_W}del", f"{_W}footnoteReference"}
# The parts beside the body, each under its heading: (relationship type's name, heading, the
# tag of one entry in it). Footnotes' and endnotes' separators have no text, so add nothing.
_NOTES = (("footnotes", "Footnotes", "footnote"), ("endnotes", "Endnotes", "endnote"))


def docx(source: Source, out: Lines) -> Extracted:
    import docx as python_docx

    document = opened(lambda: python_docx.Document(as_file(source)), "Word", source)
    styles = {style.style_id: style.name or "" for style in document.styles}
    first_title = _blocks(document.element.body, styles, out)
    _headers_and_footers(document, styles, out)
    _notes_and_comments(document, out)
    return out.done(document.core_properties.title or first_title)


def _blocks(container: Any, styles: dict[str, str], out: Lines) -> str | None:
    """The paragraphs and tables of ``container`` (a body, a cell, a header, a content
    control's content) in order; the text of its first paragraph styled Title."""
    first_title = None
    for block in container.iterchildren():
        tag = block.tag
        if tag == f"{_W}p":
            title = _paragraph(block, styles, out)
            first_title = first_title or title
        elif tag == f"{_W}tbl":
            for row in _rows(block):
                texts = (" ".join(map(_text, cell.iter(f"{_W}p"))) for cell in row)
                cells = [" ".join(text.split()) for text in texts]
                while cells and not cells[-1]:
                    cells.pop()
                if cells:
                    out.add("| " + " | ".join(cells) + " |")
            out.add("")
        elif tag == f"{_W}sdt":  # a content control around paragraphs or tables
            content = block.find(f"{_W}sdtContent")
            if content is not None:
                first_title = first_title or _blocks(content, styles, out)
    return first_title


def _paragraph(block: Any, styles: dict[str, str], out: Lines) -> str | None:
    """One paragraph as a Markdown line (a heading, a list item), then its text boxes' own
    paragraphs; its text when it is styled Title."""
    text = _text(block).strip()
    title = None
    if text:
        style_id = block.find(f"{_W}pPr/{_W}pStyle")
        style = styles.get(style_id.get(f"{_W}val"), "") if style_id is not None else ""
        if style == "Title":
            title = text
            out.add(f"# {text}")
        elif style.startswith("Heading"):
            level = style.split()[-1]
            out.add("#" * (int(level) + 1 if level.isdigit() else 2) + f" {text}")
        elif style.startswith("List"):
            out.add(f"- {text}")
        else:
            out.add(text)
        out.add("")
    for box in _text_boxes(block):
        _blocks(box, styles, out)
    return title


def _text(element: Any) -> str:
    """A paragraph's own text: its characters in document order, those of its text boxes, of
    deleted runs and of the copy kept for old readers left out."""
    return "".join(_characters(element))


def _characters(element: Any) -> Iterator[str]:
    for child in element.iterchildren():
        tag = child.tag
        if tag in _NOT_OWN:
            continue
        if tag in _CHARACTERS:
            yield (child.text or "") if tag == f"{_W}t" else (_CHARACTERS[tag] or "")
        else:
            yield from _characters(child)


def _text_boxes(element: Any) -> Iterator[Any]:
    """The text boxes anchored in ``element`` (not the copies under ``mc:Fallback``)."""
    for child in element.iterchildren():
        if child.tag == _FALLBACK:
            continue
        if child.tag == _TEXT_BOX:
            yield child
        else:
            yield from _text_boxes(child)


def _rows(table: Any) -> Iterator[list[Any]]:
    """A table's rows, each a list of its cells (rows and cells inside content controls too)."""
    for row in _unwrapped(table, f"{_W}tr"):
        yield list(_unwrapped(row, f"{_W}tc"))


def _unwrapped(parent: Any, tag: str) -> Iterator[Any]:
    for child in parent.iterchildren():
        if child.tag == tag:
            yield child
        elif child.tag == f"{_W}sdt":
            content = child.find(f"{_W}sdtContent")
            if content is not None:
                yield from _unwrapped(content, tag)


def _headers_and_footers(document: Any, styles: dict[str, str], out: Lines) -> None:
    """Each distinct header and footer once (every section may repeat the same)."""
    seen: set[str] = set()
    for kind in ("header", "footer"):
        parts = []
        for section in document.sections:
            for variant in ("", "first_page_", "even_page_"):
                part = getattr(section, f"{variant}{kind}")
                if part.is_linked_to_previous:
                    continue
                lines = Lines(out.max_bytes)
                _blocks(part._element, styles, lines)
                text = "\n".join(line for line in lines.lines if line.strip())
                if text and text not in seen:
                    seen.add(text)
                    parts.append(text)
        if parts:
            out.add(f"## {kind.capitalize()}s" if len(parts) > 1 else f"## {kind.capitalize()}")
            for text in parts:
                out.add(text)
            out.add("")


def _notes_and_comments(document: Any, out: Lines) -> None:
    """Footnotes, endnotes and comments, each part under its heading, an entry a line."""
    from docx.opc.constants import RELATIONSHIP_TYPE
    from lxml import etree

    for relationship, heading, entry_tag in (*_NOTES, ("comments", "Comments", "comment")):
        try:
            part = document.part.part_related_by(getattr(RELATIONSHIP_TYPE, relationship.upper()))
        except KeyError:
            continue
        root = etree.fromstring(part.blob)
        entries = []
        for entry in root.iter(f"{_W}{entry_tag}"):
            text = " ".join(" ".join(_text(p) for p in entry.iter(f"{_W}p")).split())
            if not text:
                continue
            author = entry.get(f"{_W}author")
            entries.append(f"{author}: {text}" if author else text)
        if entries:
            out.add(f"## {heading}")
            for text in entries:
                out.add(f"- {text}")
            out.add("")
