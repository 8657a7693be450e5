"""Reading documents in the formats a team mirrors: each format, in English and in Korean, gives
its text (every sentence of its source found, the Korean intact), its own title and where its
pages, slides or sheets begin; an HTML export's page chrome is left out; files that hold no text
are told apart with the reason (an image, a scan, an archive, a broken or locked file, a format
nothing here reads), a ``.pdf`` that is really text is text; the mirror's furniture is ignored
by default and by a ``.wikiignore``; and a 600-page PDF is read within a bounded memory.

The documents in tests/data/formats were written from tests/data/bilingual by
scripts/make-documents (real PDF, DOCX, PPTX, XLSX, HWP and HWPX files, a Confluence export's
HTML page, mail, RTF; Word, Excel and PowerPoint 97-2003 and OpenDocument files converted from
them by LibreOffice).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
import zipfile
from pathlib import Path

import fpdf  # (the test extra's: to write the PDF)
import pytest

from wiki_assets.engine.documents import ocr
from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.documents.extract import extract
from wiki_assets.engine.documents.formats import TEXT, format_of
from wiki_assets.engine.documents.ignore import Ignored, IgnoreRules
from wiki_assets.engine.documents.reader import Reader
from wiki_assets.engine.documents.texts import TextStore
from wiki_assets.engine.errors import ConfigurationError, NoText

DATA = Path(__file__).parent / "data"
FORMATS = DATA / "formats"
SOURCES = DATA / "bilingual"
MANIFEST = json.loads((FORMATS / "manifest.json").read_text(encoding="utf-8"))["files"]
WITH_TEXT = [entry for entry in MANIFEST if entry["expect"] == "text" and entry["kind"] != "cp949"]
# The formats that carry a title of their own (a property, a subject, a page's title).
TITLED = {"pdf", "docx", "pptx", "xlsx", "html", "eml", "doc", "xls", "ppt", "odt", "ods", "odp"}


def squeezed(text: str) -> str:
    """Text compared the way a reader would: NFKC, no whitespace, no Markdown marks."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"[\s#|*_`>\-]+", "", text)


def source_units(stem: str) -> list[str]:
    """The sentences and headings of a source document."""
    units = []
    for line in (SOURCES / f"{stem}.md").read_text(encoding="utf-8").splitlines():
        line = line.strip().lstrip("#").strip()
        units += [part for part in re.split(r"(?<=[.!?])\s+", line) if part]
    return units


@pytest.mark.parametrize("entry", WITH_TEXT, ids=[entry["file"] for entry in WITH_TEXT])
def test_each_format_gives_its_whole_text_and_its_title(entry: dict, tmp_path: Path) -> None:
    path = FORMATS / entry["file"]
    kind = format_of(entry["file"], path.read_bytes()[:4096])
    assert kind.extracted and kind.no_text is None
    extracted = extract(path, kind.name, 2_000_000)
    found = squeezed(extracted.text)
    units = source_units(entry["source"])
    if entry["kind"] == "html":
        units = units[1:]  # a Confluence page has its title in its chrome, not its content
    missing = [unit for unit in units if squeezed(unit) not in found]
    assert missing == [], f"{entry['file']}: not in the text: {missing[:3]}"
    if entry["lang"] == "ko":
        assert len(re.findall(r"[\uac00-\ud7a3]", extracted.text)) > 100
    if entry["kind"] in TITLED:
        assert extracted.title == entry["title"]


def test_a_pdf_names_its_pages_a_deck_its_slides_and_a_workbook_its_sheets() -> None:
    pdf = extract(FORMATS / "expense-claims-en.pdf", "pdf", 2_000_000)
    assert [label for _, label in pdf.locations] == ["page 1", "page 2", "page 3", "page 4"]
    lines = pdf.text.split("\n")
    for (first, _), heading in zip(
        pdf.locations, ["Scope", "How to claim", "Limits"], strict=False
    ):
        assert heading in "\n".join(lines[first - 1 : first + 2])
    deck = extract(FORMATS / "office-move-ko.pptx", "pptx", 2_000_000)
    assert [label for _, label in deck.locations] == [f"slide {n}" for n in range(1, 6)]
    notes = [line for line in deck.text.split("\n") if line.startswith("Notes: ")]
    assert len(notes) == 3  # the speaker notes, each on its own slide
    lines = deck.text.split("\n")
    noted = [line for line, _ in deck.locations]
    for note in notes:
        at = lines.index(note) + 1
        slide = max(first for first in noted if first <= at)
        assert lines[slide - 1].startswith("## ")  # a slide's title before its notes
    book = extract(FORMATS / "laptop-refresh-en.xlsx", "xlsx", 2_000_000)
    assert [label for _, label in book.locations] == ["sheet Sections", "sheet Stats"]


def test_an_html_export_keeps_its_content_and_none_of_its_chrome() -> None:
    for name in ("meeting-rooms-en.html", "meeting-rooms-ko.html", "training-budget-en.html"):
        extracted = extract(FORMATS / name, "html", 2_000_000)
        chrome = next(e for e in MANIFEST if e["file"] == name)["chrome_markers"]
        assert [marker for marker in chrome if marker in extracted.text] == [], name
        assert extracted.text.startswith("## ")  # the page's headings, as Markdown
        assert " : " not in (extracted.title or "")  # not "Team Space : Title"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("encrypted-vendor-security-en.pdf", "password-protected"),
        ("corrupt-truncated.pdf", "unreadable PDF file"),
        ("brand.zip", "archive"),
    ],
)
def test_a_file_that_holds_no_text_says_why(name: str, reason: str, tmp_path: Path) -> None:
    path = FORMATS / name
    if name == "brand.zip":  # (no archive in the repository: made here)
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("brand.md", "# Brand\n\nThe logo is blue.\n")
    kind = format_of(name, path.read_bytes()[:4096])
    if kind.no_text is not None:
        assert kind.no_text.startswith(reason)
        return
    with pytest.raises(NoText) as raised:
        extract(path, kind.name, 2_000_000)
    assert str(raised.value).startswith(reason)


def test_a_pdf_that_is_really_text_is_text_and_a_binary_of_no_known_kind_is_listed() -> None:
    assert format_of("notes.pdf", b"# Notes\n\nThese are plain notes.\n").name == TEXT
    assert format_of("report.pdf", b"%PDF-1.7\n%\xe2\xe3").name == "pdf"
    assert format_of("data.xyz", b"\x00\x01\x02binary").no_text == "unsupported format: .xyz"
    assert format_of("config.yaml", b"key: value\n").name == TEXT
    assert format_of("logo.png.txt", b"\x89PNG\r\n\x1a\n\x00").name == TEXT  # fails as text


def test_the_reader_keeps_each_text_once_by_content(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    synced.mkdir()
    locked = "encrypted-vendor-security-en.pdf"
    for name in ("expense-claims-ko.pdf", "office-move-en.pptx", locked):
        (synced / name).write_bytes((FORMATS / name).read_bytes())
    store = TextStore(tmp_path / "texts")
    docs = {doc.path: doc for doc in scan(synced)}
    with Reader(synced, store) as reader:
        reader.extract_ahead(list(docs.values()))
        pdf = reader.read(docs["expense-claims-ko.pdf"])
        assert reader.extracted == 3
        assert pdf.extractor == "pdf/3" and pdf.title == "경비 청구 안내"
        assert pdf.where(1) == "page 1" and pdf.where(len(pdf.text.split("\n"))) == "page 4"
        # What the model saw, for a reader of the wiki's state.
        kept = store.text_path(docs["expense-claims-ko.pdf"].content_hash)
        assert kept.read_text(encoding="utf-8") == pdf.text
        with pytest.raises(NoText, match="password-protected"):
            reader.read(docs["encrypted-vendor-security-en.pdf"])
    with Reader(synced, store) as again:
        again.extract_ahead(list(docs.values()))
        assert again.read(docs["office-move-en.pptx"]).locations[1] == (4, "slide 2")
        assert again.extracted == 0, "each content is extracted once"


def test_furniture_is_ignored_by_default_and_a_team_ignores_more(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    for name in (
        "space/page.html", "space/index.html", "space/styles/site.css",
        "space/images/icons/bullet.gif", "drive/~$report.docx", "drive/report.docx.bak",
        "drive/notes.md", "drive/drafts/wip.md", "drive/keep/index.html",
    ):  # fmt: skip
        path = synced / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("<html><body><p>x</p></body></html>\n" if name.endswith("html") else "x\n")
    ignored: list[Ignored] = []
    documents = sorted(doc.path for doc in scan(synced, ignored=ignored))
    rules = {found.path: found.rule for found in ignored}
    assert rules == {
        "drive/keep/index.html": "default: index.html",
        "drive/report.docx.bak": "default: *.bak",
        "drive/~$report.docx": "default: ~$*",
        "space/images/icons/bullet.gif": "default: **/images/icons/",
        "space/index.html": "default: index.html",
        "space/styles/site.css": "default: *.css",
    }
    assert documents == ["drive/drafts/wip.md", "drive/notes.md", "space/page.html"]
    (synced / ".wikiignore").write_text("# not ours\ndrafts/\n!**/keep/index.html\n")
    ignored = []
    documents = sorted(doc.path for doc in scan(synced, ignored=ignored))
    assert documents == ["drive/keep/index.html", "drive/notes.md", "space/page.html"]
    assert {found.path: found.rule for found in ignored}["drive/drafts/wip.md"] == (
        ".wikiignore:2: drafts/"
    )


def test_an_unreadable_wikiignore_names_itself(tmp_path: Path) -> None:
    (tmp_path / ".wikiignore").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ConfigurationError, match=r"\.wikiignore"):
        IgnoreRules.of(tmp_path)


def test_a_600_page_pdf_is_read_within_a_bounded_memory(tmp_path: Path) -> None:
    """pypdfium2 reads a page at a time: the extracting process's peak stays far below what
    holding the document would take, and the text is whole."""
    pdf = fpdf.FPDF()
    pdf.set_auto_page_break(False)
    pdf.set_font("Helvetica", size=8)
    for page in range(600):
        pdf.add_page()
        for line in range(50):
            pdf.set_xy(10, 10 + line * 5)
            pdf.cell(0, 5, f"Page {page + 1} line {line + 1}: the quarterly figures are final.")
    path = tmp_path / "big.pdf"
    pdf.output(str(path))
    # The process's own peak (VmHWM: ru_maxrss would carry over its parent's from the fork).
    code = (
        "import re, sys; from pathlib import Path;"
        "from wiki_assets.engine.documents.extract import extract;"
        "e = extract(Path(sys.argv[1]), 'pdf', 10_000_000);"
        "peak = re.search(r'VmHWM:\\s+(\\d+)', Path('/proc/self/status').read_text()).group(1);"
        "print(len(e.locations), len(e.text), peak)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    pages, chars, peak_kb = map(int, done.stdout.split())
    print(f"600-page PDF: {chars} characters, peak {peak_kb / 1024:.0f} MB")
    assert pages == 600 and chars > 1_500_000
    assert peak_kb < 100 * 1024


def test_a_large_workbook_is_read_row_by_row_and_stops_at_the_limit(tmp_path: Path) -> None:
    """50,000 rows hold more text than a document may: extraction stops as soon as it passes
    the limit (the rows are streamed, never all held), and says why."""
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Data")
    for row in range(50_000):
        sheet.append([row, f"row-{row}", row * 1.5, "quarterly", "figures", row % 97, "ok"])
    path = tmp_path / "big.xlsx"
    book.save(str(path))
    code = (
        "import re, sys; from pathlib import Path;"
        "from wiki_assets.engine.documents.extract import extract;"
        "from wiki_assets.engine.errors import DocumentError\n"
        "try:\n extract(Path(sys.argv[1]), 'xlsx', 1_000_000)\n"
        "except DocumentError as error:\n print(error)\n"
        "print(re.search(r'VmHWM:\\s+(\\d+)', Path('/proc/self/status').read_text()).group(1))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    reason, peak_kb = done.stdout.strip().split("\n")
    print(f"50,000-row workbook: {reason}; peak {int(peak_kb) / 1024:.0f} MB")
    assert reason == "too large: extracted text over 1000000 bytes"
    assert int(peak_kb) < 100 * 1024


def test_a_word_file_is_read_whole() -> None:
    """Content controls, a text box (once: not again from the copy Word keeps for old readers),
    the header and footer, a footnote and a comment: python-docx's paragraphs hold none of
    them but the body's own."""
    entry = next(e for e in MANIFEST if e["expect"] == "word-in-full")
    extracted = extract(FORMATS / entry["file"], "docx", 2_000_000)
    assert extracted.title == entry["title"]
    for part, text in entry["holds"].items():
        assert extracted.text.count(text) == 1, part
    import docx

    plain = "\n".join(p.text for p in docx.Document(str(FORMATS / entry["file"])).paragraphs)
    assert [part for part, text in entry["holds"].items() if text in plain] == ["body"]


@pytest.mark.parametrize("name", ["scan-library-bilingual.png", "scan-library-bilingual.pdf"])
def test_a_scan_is_read_by_ocr_in_korean_and_english(name: str) -> None:
    """With tesseract and its Korean data (CI installs them: scripts/test-tools), a picture
    and a PDF without a text layer are read by OCR, and say so; without them, each holds no
    text with the reason saying that OCR would read it and how to install it."""
    entry = next(e for e in MANIFEST if e["file"] == name)
    path = FORMATS / name
    kind = format_of(name, path.read_bytes()[:4096])
    if not ocr.available():
        reason = kind.no_text
        if reason is None:
            with pytest.raises(NoText) as raised:
                extract(path, kind.name, 2_000_000)
            reason = str(raised.value)
        assert reason.endswith(f"OCR would read it: {ocr.INSTALL}")
        return
    extracted = extract(path, kind.name, 2_000_000)
    assert extracted.ocr
    lines = [line.strip() for line in extracted.text.splitlines() if line.strip()]
    # Every line of the scan, but for the one whose "층" OCR takes for an "S".
    for line in entry["lines"]:
        if "층" not in line:
            assert line in lines, (line, lines)
    if kind.name == "pdf":
        assert [label for _, label in extracted.locations] == ["page 1"]


@pytest.mark.parametrize(("name", "kind"), [("data-retention-ko.csv", "csv"),
                                            ("meeting-rooms-ko.html", "html")])  # fmt: skip
def test_a_cp949_table_or_page_cut_in_a_character_keeps_its_text(
    name: str, kind: str, tmp_path: Path
) -> None:
    """Saved by Korean Windows (CP949) and cut short in the middle of a Hangul syllable's two
    bytes: the text before the cut is read, in Hangul, with the lost character shown."""
    text = (FORMATS / name).read_text(encoding="utf-8")
    # The last Hangul syllable in the file's first two thirds, with every text before it.
    at = max(i for i, char in enumerate(text[: len(text) * 2 // 3]) if "가" <= char <= "힣")
    kept = text[:at]
    cut = tmp_path / name
    cut.write_bytes(kept.encode("cp949") + text[at].encode("cp949")[:1])
    extracted = extract(cut, kind, 2_000_000)
    last_line = [line for line in kept.splitlines() if re.search("[가-힣]", line)][-2]
    words = re.findall("[가-힣]+", last_line)
    assert words and all(word in extracted.text for word in words)
    assert "\ufffd" in extracted.text
