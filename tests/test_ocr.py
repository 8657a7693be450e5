"""Scans read by OCR cost what they must and no more, and a hang is bounded tightly: a scanner's
PDF page is read from its image at the image's own resolution (a page that is more than one
image is rendered, at 300 DPI); a PDF's text layer has the file's time limit and each page read
by OCR its own, so a long scan is read whole while a page that hangs is stopped within the page's
limit; a file kept twice (in two folders) is extracted once; pictures are read first, on at
most half the extracting processes, so the others keep extracting for the requests; and a
picture cut short is unreadable, with the reason, before tesseract is asked to read it.

Fixtures: tests/data/formats' scan (a picture of Korean and English lines, and the same picture
as an image-only PDF, by scripts/make-documents); the PDFs of several pages are written here by
fpdf2 from that picture.
"""

from __future__ import annotations

import io
import shutil
import time
from pathlib import Path

import fpdf  # (the test extra's: to write the PDFs)
import pypdfium2 as pdfium
import pytest
from PIL import Image

from wiki_assets.engine.documents import ocr
from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.documents.extractors import ExtractorPool, Lanes
from wiki_assets.engine.documents.reader import Reader
from wiki_assets.engine.documents.texts import TextStore
from wiki_assets.engine.errors import NoText

FORMATS = Path(__file__).parent / "data" / "formats"
PICTURE = FORMATS / "scan-library-bilingual.png"  # 1,400 x 460 pixels
LINE = "Books may be borrowed for two weeks."  # a line of the picture OCR reads right
OTHERS = [f"{source}-{language}.{kind}" for source, kind in
          (("expense-claims", "pdf"), ("password-mfa", "docx"), ("office-move", "pptx"),
           ("laptop-refresh", "xlsx")) for language in ("en", "ko")]  # fmt: skip

needs_ocr = pytest.mark.skipif(
    not ocr.available(), reason="tesseract with its Korean data (CI installs them)"
)


def scanned_pdf(out: Path, pages: int, *, with_heading: bool = False) -> Path:
    """An image-only PDF of ``pages`` A4 pages, each the picture 190 mm wide (187 DPI); with a
    heading, each page also draws a line of text as vector paths (no text layer either)."""
    pdf = fpdf.FPDF()
    for _ in range(pages):
        pdf.add_page()
        pdf.image(str(PICTURE), x=10, y=10, w=190)
        if with_heading:
            pdf.rect(10, 100, 190, 2, style="F")  # a rule drawn under the picture
    pdf.output(str(out))
    return out


def test_a_scanners_page_is_read_from_its_image_at_its_own_resolution(tmp_path: Path) -> None:
    document = pdfium.PdfDocument(str(FORMATS / "scan-library-bilingual.pdf"))
    picture, dpi = ocr.page_picture(document[0])
    assert picture.startswith(b"P5\n1400 460\n")  # the image as stored, in gray
    assert dpi == 187
    drawn = pdfium.PdfDocument(str(scanned_pdf(tmp_path / "drawn.pdf", 1, with_heading=True)))
    picture, dpi = ocr.page_picture(drawn[0])
    assert picture.startswith(b"P5\n2481 3508\n")  # the whole A4 page, rendered
    assert dpi == ocr.MAX_DPI


@needs_ocr
def test_a_page_whose_ocr_hangs_is_stopped_within_the_pages_limit_and_the_next_file_is_read(
    tmp_path: Path,
) -> None:
    scanned = str(scanned_pdf(tmp_path / "scan.pdf", 2))
    text_pdf = str(FORMATS / "expense-claims-en.pdf")
    with ExtractorPool(1, page_limit_s=0.01) as pool:
        [(text, no_text, failure), (read, _, _)] = pool.map(
            [(scanned, "pdf", 2_000_000), (text_pdf, "pdf", 2_000_000)]
        )
    assert text is None and failure is None
    assert no_text == "unreadable PDF file: its OCR of page 1 ran over 0.01 s"
    assert read is not None and "Reimbursement" in read.text


@needs_ocr
def test_a_long_scan_is_read_whole_each_page_within_its_own_limit(tmp_path: Path) -> None:
    """The file's limit bounds its reading up to the first page OCR reads: past it, each page
    has its own (a long scan is not cut at the file's limit, a hang is not given 50 pages')."""
    scanned = str(scanned_pdf(tmp_path / "long-scan.pdf", 6))
    limit_s = 1.0
    with ExtractorPool(1, time_limit_s=limit_s) as pool:
        pool.map([(str(FORMATS / "expense-claims-en.pdf"), "pdf", 2_000_000)])  # (started)
        started = time.monotonic()
        [(read, no_text, failure)] = pool.map([(scanned, "pdf", 2_000_000)])
        took = time.monotonic() - started
    assert no_text is None and failure is None and read is not None
    assert read.ocr and [label for _, label in read.locations] == [f"page {n}" for n in range(1, 7)]
    assert read.text.count(LINE) == 6
    assert took > limit_s  # (six pages of OCR: longer than the file's own limit)


@needs_ocr
def test_a_scan_kept_twice_is_read_once(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    for folder in ("drive/2025", "drive/2026"):
        (synced / folder).mkdir(parents=True)
        shutil.copy(PICTURE, synced / folder / "scan.png")
    for name in OTHERS:  # (enough files for the extracting processes)
        shutil.copy(FORMATS / name, synced / "drive" / name)
    docs = list(scan(synced))
    with Reader(synced, TextStore(tmp_path / "texts"), processes=2) as reader:
        arrived = list(reader.extracting(docs))
        assert sorted(doc.path for doc in arrived) == sorted(doc.path for doc in docs)
        assert reader.extracted == 1 + len(OTHERS)  # the scan once
        for doc in docs:
            if doc.path.endswith(".png"):
                assert LINE in reader.read(doc).text


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("PNG", "unreadable image: image file is truncated"),
     ("JPEG", "unreadable image: image file is truncated ("),
     ("TIFF", "unreadable image: not a PNG, JPEG or TIFF picture (broken?)")],  # (its
    # directory, which Pillow writes after the compressed image, cut off)
)  # fmt: skip
def test_a_picture_cut_short_is_unreadable_with_the_reason(kind: str, reason: str) -> None:
    """Not an empty page, which is what tesseract makes of a TIFF without its directory, nor
    its image library's error lines."""
    buffer = io.BytesIO()
    with Image.open(PICTURE) as picture:
        # (Pillow writes the JPEG and the TIFF, LZW-compressed as a scanner's)
        picture.save(buffer, format=kind, **({"compression": "tiff_lzw"} if kind == "TIFF" else {}))
    data = buffer.getvalue()
    with pytest.raises(NoText) as raised:
        ocr.whole_picture(data[: len(data) * 6 // 10])
    assert str(raised.value).startswith(reason)
    assert ocr.whole_picture(data) == data


def test_pictures_begin_first_on_at_most_half_the_processes() -> None:
    jobs = [("a.docx", "docx", 1), ("b.png", "image", 1), ("c.pdf", "pdf", 1),
            ("d.png", "image", 1), ("e.xls", "xls", 1)]  # fmt: skip
    lanes = Lanes(jobs, most_reading=1)
    assert [lanes.take(), lanes.take(), lanes.take()] == [1, 0, 2]  # b.png, then in order
    lanes.release(1)  # b.png read: the next picture
    assert lanes.take() == 3
    assert lanes.take() == 4
    # Once nothing else is left, pictures take every process.
    lanes = Lanes([("b.png", "image", 1), ("d.png", "image", 1)], most_reading=1)
    assert [lanes.take(), lanes.take()] == [0, 1]
