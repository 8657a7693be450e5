"""A Korean team's whole drive, end to end through `wiki-assets ingest`: Word, Excel and
PowerPoint 97-2003 files, OpenDocument, RTF, Outlook mail (its attachments under it, a mail
attached to it too), a Word file with text in its header, footnotes, comments, text boxes and
content controls and a text file saved in CP949 each become a page titled as the document is,
its Korean intact; so does each document inside a zip (its member names in CP949, as Windows
Explorer writes them, and a zip inside it), a tar.gz and a .gz, under the archive's path. An
encrypted file (an OpenDocument one too), a file its reader panics on, an encrypted zip, a zip
bomb and an archive nested too deep are each listed as holding no text, with the reason; so is
a copy cut short of each format (Office 97-2003, OpenDocument, Outlook mail, a zip, a .gz, a
tar.gz and a .tgz, a picture and an image-only PDF), while an RTF, a CP949 text cut in a Hangul
character and a tar cut in its second member still give the text before the cut; the run exits
0; and a member added to an archive is the only document the next run summarizes. A scan in
Korean and English (a PNG and an image-only PDF) is read by OCR where tesseract is installed
(CI installs it), and its page says so; where it is not, `plan` and the run say how many files
OCR would read and how to install it, and the run still exits 0.

Fixtures: tests/data/formats (scripts/make-documents' `drive` step and Apache POI's test-data);
a broken file is a good one cut short.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml

from wiki_assets.engine.documents import ocr
from wiki_assets.engine.documents.corpus import title_hint
from wiki_assets.engine.wiki.audit import front_matter
from wiki_assets.engine.wiki.files import page_for
from wiki_assets.simulator import SimModel, SimServer

FORMATS = Path(__file__).parent / "data" / "formats"
MANIFEST = json.loads((FORMATS / "manifest.json").read_text(encoding="utf-8"))["files"]
OLDER = {"doc", "xls", "ppt", "odt", "ods", "odp", "rtf", "cp949"}
BROKEN = ["password-mfa-ko.doc", "laptop-refresh-ko.xls", "office-move-ko.ppt",
          "password-mfa-en.odt", "laptop-refresh-en.ods", "office-move-en.odp",
          "poi-attachment.msg"]  # fmt: skip
# Archives and scans cut short, each listed with the start of the reason (a tar's: the member
# cut, and the tar itself).
CUT_TAR = "cut short (its end is missing): any files it held after the cut are lost"
BROKEN_NO_TEXT = {
    "회의자료.zip": {"": "unreadable archive: File is not a zip file"},
    "okr-planning-ko.eml.gz": {"": "unreadable archive: Compressed file ended before the end-"},
    "reports.tar.gz": {"/expense-claims-en.pdf": "unreadable: unexpected end of data", "": CUT_TAR},
    "reports.tgz": {"/expense-claims-en.pdf": "unreadable: unexpected end of data", "": CUT_TAR},
    "scan-library-bilingual.pdf": {"": "unreadable PDF file: Failed to load document"},
}
HANGUL = range(0xAC00, 0xD7A4)
MEETING = "회의자료.zip"  # member names in CP949 without the UTF-8 flag, a zip inside
OCR_TITLE = "사내 도서관 이용 안내 / Library Guide"  # a scan's first line, as OCR reads it
WHOLE = {"mail", "word-in-full"}  # Outlook mail; a Word file with text beside its body
ARCHIVE_REASONS = {"password-protected": "password-protected",
                   "zip bomb": "refused: a member expands 1,030 times (the limit is 100"}


def drive(synced: Path) -> tuple[dict[str, dict], dict[str, str]]:
    """The drive: its documents with text (path -> manifest entry), and its files that hold
    none (path -> the start of the reason)."""
    folder = synced / "drive"
    folder.mkdir(parents=True)
    documents, no_text = {}, {}
    for entry in MANIFEST:
        if entry["kind"] in OLDER and entry["expect"] == "text" or entry["expect"] in WHOLE:
            if entry.get("lang", "en") in ("en", "ko"):
                shutil.copy(FORMATS / entry["file"], folder / entry["file"])
                documents[f"drive/{entry['file']}"] = entry
                for name, title in entry.get("attachments", {}).items():  # under its mail
                    documents[f"drive/{entry['file']}/{name}"] = {"title": title}
        elif entry["kind"] in OLDER | {"msg"} and entry["expect"] == "no-text":
            shutil.copy(FORMATS / entry["file"], folder / entry["file"])
            no_text[f"drive/{entry['file']}"] = entry["reason"]
    for name in BROKEN:
        data = (FORMATS / name).read_bytes()
        (folder / f"broken-{name}").write_bytes(data[: len(data) * 4 // 10])
        no_text[f"drive/broken-{name}"] = f"unreadable {name.rsplit('.', 1)[1].upper()} file: "
    for name, listed in BROKEN_NO_TEXT.items():
        data = (FORMATS / name.replace(".tgz", ".tar.gz")).read_bytes()
        (folder / f"broken-{name}").write_bytes(data[: len(data) * 4 // 10])
        no_text.update({f"drive/broken-{name}{inside}": why for inside, why in listed.items()})
    documents.update(broken_with_text(folder))
    no_text["drive/broken-reports.tar/data-retention-en.csv"] = "unreadable: unexpected end of data"
    no_text["drive/broken-reports.tar"] = CUT_TAR
    picture = (FORMATS / "scan-library-bilingual.png").read_bytes()
    (folder / "broken-scan.png").write_bytes(picture[: len(picture) * 4 // 10])
    no_text["drive/broken-scan.png"] = (
        "unreadable image: image file is truncated" if ocr.available() else "image"
    )
    titles = {entry["source"]: entry["title"] for entry in MANIFEST if "title" in entry
              and "source" in entry}  # fmt: skip
    for entry in MANIFEST:
        if entry["expect"] == "archive":  # a folder: each member a document under its path
            shutil.copy(FORMATS / entry["file"], folder / entry["file"])
            for member, source in entry["members"].items():
                path = f"drive/{entry['file']}/{member}"
                title = title_hint(path) if member.endswith(".csv") else titles[source]
                documents[path] = {"title": title, "lang": source.rsplit("-", 1)[1]}
            for member in entry.get("too_deep", []):
                no_text[f"drive/{entry['file']}/{member}"] = "an archive inside an archive"
        elif entry["kind"] in ("zip", "tar.gz", "gz") and entry["expect"] == "no-text":
            shutil.copy(FORMATS / entry["file"], folder / entry["file"])
            no_text[f"drive/{entry['file']}"] = ARCHIVE_REASONS[entry["reason"]]
    for entry in MANIFEST:
        if entry["expect"] == "ocr":  # a scan in Korean and English: a PNG, an image-only PDF
            shutil.copy(FORMATS / entry["file"], folder / entry["file"])
            path = f"drive/{entry['file']}"
            if ocr.available():
                documents[path] = {"title": OCR_TITLE, "lang": "ko", "ocr": True}
            else:
                no_text[path] = "image" if path.endswith(".png") else "no text layer"
    return documents, no_text


def broken_with_text(folder: Path) -> dict[str, dict]:
    """Files cut short whose text before the cut is still read: a tar cut in its second member
    (the first is whole), a CP949 text cut in the middle of a Hangul character and an RTF cut
    in its body. Each becomes a page (the tar's second member: no text, with the reason)."""
    tar = gzip.decompress((FORMATS / "reports.tar.gz").read_bytes())
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        cut = archive.getmember("data-retention-en.csv").offset_data + 100
    (folder / "broken-reports.tar").write_bytes(tar[:cut])
    text = (FORMATS / "library-ko.cp949.txt").read_bytes()
    hangul = max(at for at in range(len(text) - 1) if text[at] >= 0xB0 and text[at - 1] < 0x80)
    (folder / "broken-library-ko.cp949.txt").write_bytes(text[: hangul + 1])  # its first byte
    rtf = (FORMATS / "shuttle-parking-ko.rtf").read_bytes()
    (folder / "broken-shuttle-parking-ko.rtf").write_bytes(rtf[: len(rtf) * 6 // 10])
    title = {entry["file"]: entry["title"] for entry in MANIFEST if "title" in entry}.get
    return {
        "drive/broken-reports.tar/expense-claims-en.pdf": {"title": title("expense-claims-en.pdf")},
        "drive/broken-library-ko.cp949.txt": {"title": title("library-ko.cp949.txt"), "lang": "ko"},
        "drive/broken-shuttle-parking-ko.rtf": {"title": title("shuttle-parking-ko.rtf"),
                                                "lang": "ko"},
    }  # fmt: skip


def ingest(synced: Path, wiki: Path, home: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(synced),
         "--wiki", str(wiki), "--config", str(config), "--json"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "DAGSTER_HOME": str(home)},
    )  # fmt: skip


def test_a_drive_of_older_files_becomes_pages_and_the_run_exits_0(tmp_path: Path) -> None:
    synced, wiki, home = tmp_path / "synced", tmp_path / "wiki", tmp_path / "home"
    home.mkdir()
    documents, no_text = drive(synced)
    with SimServer(SimModel(model="quoting", behaviour="faithful", instant=True)) as server:
        model = {"name": "quoting", "base_url": server.base_url, "model": "quoting"}
        config = tmp_path / "wiki_assets.yaml"
        config.write_text(yaml.safe_dump({
            "resources": {"summarizer": {"config": {"models": [model]}}},
            "ops": {"wiki_pages": {"config": {"flush_seconds": 0.5}}},
        }))  # fmt: skip
        done = ingest(synced, wiki, home, config)
        # A member added to the meeting zip (by Info-ZIP's zip, as a person would): only it
        # is summarized again, the members that did not change are not.
        (tmp_path / "결정사항.md").write_text("# 결정사항\n\n다음 회의는 4월 2일입니다.\n")
        subprocess.run(["zip", "-q", str(synced / "drive" / MEETING), "결정사항.md"],
                       cwd=tmp_path, check=True)  # fmt: skip
        again = ingest(synced, wiki, home, config)
    assert done.returncode == 0, done.stderr[-3000:]
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["count"] == 1
    added = (wiki / page_for(f"drive/{MEETING}/결정사항.md")).read_text(encoding="utf-8")
    assert f"/{MEETING}>)" in added  # its page links the archive a person can open
    report = json.loads(done.stdout)
    assert report["failed"] == [] and report["count"] == len(documents)
    listed = {item["path"]: item["reason"] for item in report["no_text"]}
    assert set(listed) == set(no_text)
    for path, reason in no_text.items():
        assert listed[path].startswith(reason), (path, listed[path])
    for path, entry in documents.items():
        text = (wiki / page_for(path)).read_text(encoding="utf-8")
        meta = front_matter(text)
        assert meta["title"] == entry["title"], path
        assert meta["points_total"] > 0 and meta["points_verified"] == meta["points_total"], path
        if entry.get("lang") == "ko":
            assert sum(ord(char) in HANGUL for char in text) > 40, path  # its key points
        assert ("text read by OCR" in text) == bool(entry.get("ocr")), path
    if not ocr.available():  # the run says how many files OCR would read, and how to install it
        # (the scan's PNG and PDF, and the PNG cut short: it is not opened without OCR)
        assert f"OCR would read 3 files (scans and images): {ocr.INSTALL}" in done.stderr


def test_without_tesseract_plan_and_the_run_say_what_ocr_would_read(tmp_path: Path) -> None:
    synced, wiki, home = tmp_path / "synced", tmp_path / "wiki", tmp_path / "home"
    (synced / "drive").mkdir(parents=True)
    home.mkdir()
    for entry in MANIFEST:
        if entry["expect"] == "ocr":
            shutil.copy(FORMATS / entry["file"], synced / "drive" / entry["file"])
    (synced / "drive" / "notes.md").write_text("# Notes\n\nThe scans are in this folder.\n")
    bare = tmp_path / "bin"  # a PATH without tesseract
    bare.mkdir()
    environment = {**os.environ, "DAGSTER_HOME": str(home), "PATH": str(bare)}
    with SimServer(SimModel(model="quoting", behaviour="faithful", instant=True)) as server:
        model = {"name": "quoting", "base_url": server.base_url, "model": "quoting"}
        config = tmp_path / "wiki_assets.yaml"
        config.write_text(yaml.safe_dump({
            "resources": {"summarizer": {"config": {"models": [model]}}},
            "ops": {"wiki_pages": {"config": {"flush_seconds": 0.5}}},
        }))  # fmt: skip
        arguments = ["--synced", str(synced), "--wiki", str(wiki), "--config", str(config)]
        planned = subprocess.run(
            [sys.executable, "-m", "wiki_assets.cli", "plan", *arguments],
            capture_output=True, text=True, timeout=300, env=environment,
        )  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "wiki_assets.cli", "ingest", *arguments, "--json"],
            capture_output=True, text=True, timeout=300, env=environment,
        )  # fmt: skip
        replanned = subprocess.run(
            [sys.executable, "-m", "wiki_assets.cli", "plan", *arguments],
            capture_output=True, text=True, timeout=300, env=environment,
        )  # fmt: skip
    assert planned.returncode == 0, planned.stderr[-2000:]
    # Before any run, the image is known by its name; the PDF is a scan once a run opened it.
    assert f"plan: OCR would read 1 of them (scans, images): {ocr.INSTALL}" in planned.stdout
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["count"] == 1 and report["failed"] == []
    assert f"OCR would read 2 files (scans and images): {ocr.INSTALL}" in done.stderr
    assert f"plan: OCR would read 2 of them (scans, images): {ocr.INSTALL}" in replanned.stdout
