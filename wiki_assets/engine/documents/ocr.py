"""Text read from pictures: scans without a text layer (a PDF's pages) and images (PNG, JPEG,
TIFF), in Korean and English, by the tesseract program with its Korean data (Debian's
``tesseract-ocr`` and ``tesseract-ocr-kor``), found on the PATH.

Each picture is one run of ``tesseract`` (the picture on its stdin, the text on its stdout): a
process of its own, one thread, with a time limit, so a page it cannot read is left out alone.
A scanner's PDF page is one image: tesseract reads that image at its own resolution (rendering
the page at a finer one adds pixels to read, not detail); any other page is rendered, at most
:data:`MAX_DPI`. Without tesseract and its Korean data a scan holds no text, with the reason
saying that OCR would read it and how to install it (:data:`WOULD_READ`).
"""

from __future__ import annotations

import functools
import io
import shutil
import subprocess
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from wiki_assets.engine import environment
from wiki_assets.engine.errors import NoText

LANGUAGES = ("kor", "eng")
INSTALL = "apt-get install tesseract-ocr tesseract-ocr-kor"
# The end of the reason a scan holds no text when OCR is not installed: `plan` and the run
# count the files whose reason ends so.
WOULD_READ = f"OCR would read it: {INSTALL}"
PAGE_SECONDS = 60.0  # the most tesseract may take over one page
# The most one page may take in an extracting process, from when its OCR begins (extractors.py):
# tesseract's limit, and the page's rendering.
PAGE_LIMIT_S = PAGE_SECONDS + 30.0
MAX_PAGES = 50  # a scanned PDF's pages read by OCR; past them, the rest is left out
MAX_DPI = 300  # the finest a page is read at (tesseract reads best at about 300)
# How tesseract finds the lines: as one column of text of varying sizes. Its default (automatic
# layout) breaks a widely spaced Korean line into pieces and drops words; it reads two columns
# across no better (docs/benchmarks.md compares them), at the same cost.
LAYOUT = ("--psm", "4")


def _nothing(page: int) -> None:
    return None


# Called as each page's OCR begins (its number): the extracting process tells the run, which
# then gives that page its own time limit (extractors.py).
page_begins: Callable[[int], None] = _nothing


@functools.cache
def available() -> bool:
    """Whether tesseract is on the PATH with the Korean and English data."""
    program = shutil.which("tesseract")
    if program is None:
        return False
    try:
        listed = subprocess.run(
            [program, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    languages = set(listed.stdout.split())
    return all(language in languages for language in LANGUAGES)


def could_read(reason: str | None) -> bool:
    """Whether OCR, now installed, would read a file recorded as holding no text for
    ``reason`` (a scan or an image, seen when OCR was not installed)."""
    return bool(reason) and available() and str(reason).endswith(WOULD_READ)


def read_picture(picture: bytes, dpi: int | None = None, page: int = 1) -> str:
    """The text in one picture (PNG, JPEG, TIFF, PGM…), at ``dpi`` if known (else tesseract
    estimates it from the text's height): :class:`NoText` when tesseract cannot read it."""
    program = shutil.which("tesseract")
    if program is None or not available():
        raise NoText(f"image: {WOULD_READ}")
    page_begins(page)
    options = ["--dpi", str(dpi)] if dpi else []
    try:
        done = subprocess.run(
            [program, "stdin", "stdout", "-l", "+".join(LANGUAGES), *LAYOUT, *options],
            input=picture,
            capture_output=True,
            timeout=PAGE_SECONDS,
            check=False,
            env=environment.ocr_environment(),
        )
    except subprocess.TimeoutExpired:
        raise NoText(f"unreadable by OCR: over {PAGE_SECONDS:.0f} s a page") from None
    if done.returncode != 0:
        error = " ".join(done.stderr.decode(errors="replace").split())[-200:]
        raise NoText(f"unreadable by OCR: {error or f'exit code {done.returncode}'}")
    return done.stdout.decode("utf-8", errors="replace")


def whole_picture(picture: bytes) -> bytes:
    """``picture`` (a PNG, JPEG or TIFF file), once Pillow has decoded all of it: a file cut
    short or no picture at all is :class:`NoText` with the reason, which tesseract would give
    as its image library's error lines, or as an empty page (a TIFF without its directory)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (a broken file's warnings: its error says why)
            with Image.open(io.BytesIO(picture)) as image:
                image.load()
    except UnidentifiedImageError:
        raise NoText("unreadable image: not a PNG, JPEG or TIFF picture (broken?)") from None
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise NoText(f"unreadable image: {reason}") from None
    return picture


def pdf_pages(pdf: Any) -> Iterator[tuple[int, str]]:
    """Each page of a pypdfium2 document (at most :data:`MAX_PAGES`) read by OCR: its index
    and its text. A page OCR cannot read is left out; when none can be read,
    :class:`NoText` with the first page's reason."""
    failed: NoText | None = None
    read = 0
    for index in range(min(len(pdf), MAX_PAGES)):
        page = pdf[index]
        try:
            picture, dpi = page_picture(page)
        finally:
            page.close()
        try:
            text = read_picture(picture, dpi, page=index + 1)
        except NoText as error:
            failed = failed or error
            continue
        read += 1
        yield index, text
    if not read and failed is not None:
        raise failed


def page_picture(page: Any) -> tuple[bytes, int]:
    """A PDF page as a grayscale picture for tesseract (PGM: nothing to compress) and its
    resolution: the page's one image as it is stored, when the page is nothing else, drawn
    upright and no finer than :data:`MAX_DPI`; else the page rendered at :data:`MAX_DPI`."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    objects = list(page.get_objects(max_depth=1))
    if len(objects) == 1 and objects[0].type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
        image = objects[0]
        a, b, c, d, _, _ = image.get_matrix().get()
        width, _ = image.get_px_size()
        dpi = round(width / (a / 72)) if a > 0 else 0
        if b == c == 0 and d > 0 and page.get_rotation() == 0 and 0 < dpi <= MAX_DPI:
            try:
                return _pgm(image.get_bitmap(render=False).to_pil()), dpi
            except pdfium.PdfiumError:
                pass  # a filter pdfium cannot decode alone: the page is rendered
    bitmap = page.render(scale=MAX_DPI / 72, grayscale=True)
    return _pgm(bitmap.to_pil()), MAX_DPI


def _pgm(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.convert("L").save(buffer, format="PPM")
    return buffer.getvalue()
