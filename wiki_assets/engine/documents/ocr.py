"""Text read from pictures: scans without a text layer (a PDF's pages rendered by pypdfium2) and
images (PNG, JPEG, TIFF), in Korean and English, by the tesseract program with its Korean data
(Debian's ``tesseract-ocr`` and ``tesseract-ocr-kor``), found on the PATH.

Each page is one run of ``tesseract`` (the picture on its stdin, the text on its stdout): a
process of its own, one thread, with a time limit, so a page it cannot read fails that page
alone. Without tesseract and its Korean data a scan holds no text, with the reason saying that
OCR would read it and how to install it (:data:`WOULD_READ`).
"""

from __future__ import annotations

import functools
import io
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

from wiki_assets.engine import environment
from wiki_assets.engine.errors import NoText

LANGUAGES = ("kor", "eng")
INSTALL = "apt-get install tesseract-ocr tesseract-ocr-kor"
# The end of the reason a scan holds no text when OCR is not installed: `plan` and the run
# count the files whose reason ends so.
WOULD_READ = f"OCR would read it: {INSTALL}"
PAGE_SECONDS = 60.0  # the most one page's OCR may take
MAX_PAGES = 50  # a scanned PDF's pages read by OCR; past them, the rest is left out
DPI = 300  # what a PDF page is rendered at for OCR (tesseract reads best at 300)


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


def read_picture(picture: bytes) -> str:
    """The text in one picture (PNG, JPEG, TIFF…): :class:`NoText` when tesseract cannot
    read it."""
    program = shutil.which("tesseract")
    if program is None or not available():
        raise NoText(f"image: {WOULD_READ}")
    try:
        done = subprocess.run(
            [program, "stdin", "stdout", "-l", "+".join(LANGUAGES)],
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


def pdf_pages(pdf: Any) -> Iterator[tuple[int, str]]:
    """Each page of a pypdfium2 document (at most :data:`MAX_PAGES`) rendered and read by OCR:
    its index and its text."""
    for index in range(min(len(pdf), MAX_PAGES)):
        page = pdf[index]
        try:
            bitmap = page.render(scale=DPI / 72, grayscale=True)
            image = bitmap.to_pil()
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
        finally:
            page.close()
        yield index, read_picture(buffer.getvalue())
