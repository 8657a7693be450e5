"""A drive's older files: Outlook mail gives its subject and body (Chinese intact), and a Word,
Excel or PowerPoint 97-2003 file, an OpenDocument file or a .docx, .pptx or .xlsx that is
encrypted is "password-protected"; a broken file of each of these formats holds no text, with
the reader's reason. A reader that panics, crashes or hangs runs in an extracting process: it
fails that file alone, with its reason, within the time limit, and the next file is read by a
process started in its place.

Fixtures: tests/data/formats (the mail, the encrypted 97-2003 files and the .xls kreuzberg
panics on come from Apache POI's test-data, Apache License 2.0; the others were converted by
LibreOffice from scripts/make-documents' files, and the encrypted OpenDocument and .docx are
written by its `drive` step, by LibreOffice and msoffcrypto-tool). A broken file is a good one
cut short.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from msoffcrypto.format.ooxml import OOXMLFile

from wiki_assets.engine.documents.extract import extract
from wiki_assets.engine.documents.extractors import MODULE, ExtractorPool
from wiki_assets.engine.errors import NoText

FORMATS = Path(__file__).parent / "data" / "formats"
MANIFEST = json.loads((FORMATS / "manifest.json").read_text(encoding="utf-8"))["files"]
MAIL = [entry for entry in MANIFEST if entry["expect"] == "mail"]
LOCKED = [entry for entry in MANIFEST if entry.get("reason") == "password-protected"
          and entry["kind"] in ("doc", "xls", "ppt", "odt", "ods", "odp", "docx")]  # fmt: skip
# One good file of each format, cut short.
WHOLE = ["password-mfa-ko.doc", "laptop-refresh-ko.xls", "office-move-ko.ppt",
         "password-mfa-en.odt", "laptop-refresh-en.ods", "office-move-en.odp",
         "poi-attachment.msg"]  # fmt: skip


@pytest.mark.parametrize("entry", MAIL, ids=[entry["file"] for entry in MAIL])
def test_outlook_mail_gives_its_subject_and_body(entry: dict) -> None:
    extracted = extract(FORMATS / entry["file"], "msg", 2_000_000)
    assert extracted.title == entry["title"]
    for text in entry["holds"]:
        assert text in extracted.text


@pytest.mark.parametrize("entry", LOCKED, ids=[entry["file"] for entry in LOCKED])
def test_an_encrypted_office_file_is_password_protected(entry: dict) -> None:
    """Word, Excel and PowerPoint 97-2003, OpenDocument and Office's XML formats, each saved
    with a password: the reason is the encryption, not a broken file."""
    with pytest.raises(NoText, match="^password-protected$"):
        extract(FORMATS / entry["file"], entry["kind"], 2_000_000)


@pytest.mark.parametrize("name", ["office-move-en.pptx", "laptop-refresh-en.xlsx"])
def test_an_encrypted_deck_or_workbook_is_password_protected(name: str, tmp_path: Path) -> None:
    """As the encrypted .docx: saved with a password here by msoffcrypto-tool."""
    locked = tmp_path / f"locked-{name}"
    with open(FORMATS / name, "rb") as plain, open(locked, "wb") as out:
        OOXMLFile(plain).encrypt("secret", out)
    with pytest.raises(NoText, match="^password-protected$"):
        extract(locked, name.rsplit(".", 1)[1], 2_000_000)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("password-mfa-en.docx", "Word"), ("office-move-en.pptx", "PowerPoint"),
     ("laptop-refresh-en.xlsx", "Excel")],
)  # fmt: skip
def test_a_broken_office_xml_file_is_unreadable_not_password_protected(
    name: str, kind: str, tmp_path: Path
) -> None:
    """Cut short, its zip's directory is lost: the reason says so (python-docx's own words
    would be "Package not found at" a file that is there)."""
    data = (FORMATS / name).read_bytes()
    broken = tmp_path / f"broken-{name}"
    broken.write_bytes(data[: len(data) * 4 // 10])
    with pytest.raises(NoText) as raised:
        extract(broken, name.rsplit(".", 1)[1], 2_000_000)
    assert str(raised.value) == f"unreadable {kind} file: File is not a zip file"


@pytest.mark.parametrize("name", WHOLE)
def test_a_broken_file_of_each_format_holds_no_text_with_the_readers_reason(
    name: str, tmp_path: Path
) -> None:
    data = (FORMATS / name).read_bytes()
    broken = tmp_path / f"broken-{name}"
    broken.write_bytes(data[: len(data) * 4 // 10])
    kind = name.rsplit(".", 1)[1]
    with ExtractorPool(1) as pool:
        [(text, no_text, failure)] = pool.map([(str(broken), kind, 2_000_000)])
    assert text is None and failure is None
    assert no_text is not None and no_text.startswith(f"unreadable {kind.upper()} file: ")
    assert len(no_text) > len(f"unreadable {kind.upper()} file: ") + 10  # the reader's reason


def test_a_panicking_reader_fails_its_file_alone_and_the_next_is_read() -> None:
    panics = str(FORMATS / "poi-fuzzed-panics.xls")
    good = str(FORMATS / "laptop-refresh-ko.xls")
    with ExtractorPool(1) as pool:
        outcomes = pool.map([(panics, "xls", 2_000_000), (good, "xls", 2_000_000)])
    (text, no_text, failure), (read, _, _) = outcomes
    assert text is None and failure is None
    assert no_text == "unreadable XLS file: range end index 64 out of range for slice of length 1"
    assert read is not None and "노트북" in read.text


def test_a_reader_that_runs_over_its_time_limit_is_killed_and_the_next_file_is_read() -> None:
    good = str(FORMATS / "laptop-refresh-ko.xls")
    with ExtractorPool(1, time_limit_s=0.001) as pool:
        [(text, no_text, failure)] = pool.map([(good, "xls", 2_000_000)])
        assert text is None and failure is None
        assert no_text == "unreadable XLS file: its reader ran over 0.001 s"
        pool.time_limit_s = None  # the format's own limit again
        [(read, _, _)] = pool.map([(good, "xls", 2_000_000)])
    assert read is not None and "노트북" in read.text


def test_a_reader_that_crashes_fails_its_file_alone_and_a_new_process_reads_the_next() -> None:
    good = str(FORMATS / "laptop-refresh-ko.xls")
    with ExtractorPool(1) as pool:
        [(first, _, _)] = pool.map([(good, "xls", 2_000_000)])
        [pid] = _children()
        os.kill(pid, signal.SIGKILL)  # the process dies, as a converter's crash kills it
        [(text, no_text, failure)] = pool.map([(good, "xls", 2_000_000)])
        [(read, _, _)] = pool.map([(good, "xls", 2_000_000)])
        assert _children() != [pid]
    assert first is not None
    assert text is None and failure is None
    assert no_text == "unreadable XLS file: its reader crashed (exit code -9)"
    assert read is not None and "노트북" in read.text


def _children() -> list[int]:
    """The extracting processes this test process started (and has not reaped)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and MODULE in command:
            found.append(int(entry.name))
    return found
