"""A mirror of real formats against the same documents as plain text, on the dispatch benchmark's
two simulated models.

Run ``python -m benchmarks.formats [--docs 2000] [--workers 4]``.

The documents are the dispatch benchmark's (varied copies of the sample, English and Korean,
100-2,000 tokens: ``benchmarks.documents``). The mixed mirror holds the same texts, each saved in
turn as Markdown, PDF, Word, PowerPoint, Excel and a Confluence export's HTML page (a Korean text
goes to Word where no TTF with Hangul is at hand for its PDF: Debian's fonts-nanum has one; a PDF
without it is written in Latin-1, its other characters left out). Both are ingested by the engine on
a fresh wiki, fast and slow servers at ``W`` workers each: the run's docs/s (documents over the
run's own duration, planning and extraction included), when its first request reached a server,
and the plan's share. The mixed mirror runs twice: as the engine runs it (documents past
``EXTRACT_FIRST`` extracted beside the requests, :mod:`wiki_assets.engine.ingestion.arrivals`) and
with every text extracted before the first request; the links both give are compared (a document
prepared before its partner was indexed is not offered it). A table first gives each format's
extraction rate (files/s, one process) on the mirror.

Links by n-grams alone by default. With ``--embedded``, links by meaning come from the shipped
multilingual-e5-small (the embedded embeddings server, at its lower priority), and 14 labelled
English/Korean partners (``tests/data/bilingual``) are added to every mirror. The plain text then
runs three ways, in turn in each round: with links by n-grams alone (no embeddings), as the
engine runs it (embedded beside the requests, the pages asked before the last vector given their
nearest by meaning at the end), and with every document embedded before the first request (as
the engine did before it embedded beside the requests); the mixed mirror twice: as the engine
runs it, and with every text extracted and embedded first. How many labelled partners each run
links (by its model, or by meaning at the end), its first request, the seconds it waited for
embedding and its length against the run with n-grams alone are what links by meaning cost.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from benchmarks.documents import BenchDoc, build_documents
from benchmarks.harness import progress
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.documents.corpus import scan
from wiki_assets.engine.ingestion import plan
from wiki_assets.engine.llm.embedded_embeddings import embedded_embeddings_server
from wiki_assets.engine.related import embed_missing
from wiki_assets.engine.related.embed_missing import EMBED_FIRST
from wiki_assets.engine.wiki.audit import front_matter
from wiki_assets.simulator import PRESETS, SimServer

logging.getLogger("fontTools").setLevel(logging.ERROR)  # its subsetting notes, per PDF

FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")
HANGUL_PDF = FONT.is_file()
CYCLE = ("md", "pdf", "docx", "pptx", "xlsx", "html", "doc", "xls", "ppt", "odt", "zip")
SCAN_EVERY = 50  # one document in this many is a scanned page (a PNG read by OCR); --scan-every
# Formats LibreOffice converts to, from the file written first (a batch per format).
CONVERTED = {"doc": "docx", "xls": "xlsx", "ppt": "pptx", "odt": "docx"}


def _paragraphs(text: str) -> tuple[str, list[str]]:
    lines = [block.strip() for block in text.split("\n\n") if block.strip()]
    return lines[0].lstrip("#").strip(), lines[1:]


def _pdf(title: str, paragraphs: list[str], out: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    if HANGUL_PDF:
        pdf.add_font("Nanum", "", str(FONT))
        pdf.set_font("Nanum", size=11)
    else:  # Latin-1 only: the rest of a text's characters are left out
        pdf.set_font("Helvetica", size=11)
        title = title.encode("latin-1", "ignore").decode("latin-1")
        paragraphs = [p.encode("latin-1", "ignore").decode("latin-1") for p in paragraphs]
    pdf.add_page()
    pdf.multi_cell(0, 7, title, new_x="LMARGIN", new_y="NEXT")
    for paragraph in paragraphs:
        pdf.multi_cell(0, 6, paragraph.lstrip("#").strip(), new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(out))


def _docx(title: str, paragraphs: list[str], out: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading(title, level=0)
    for paragraph in paragraphs:
        if paragraph.startswith("#"):
            document.add_heading(paragraph.lstrip("#").strip(), level=1)
        else:
            document.add_paragraph(paragraph)
    document.save(str(out))


def _pptx(title: str, paragraphs: list[str], out: Path) -> None:
    from pptx import Presentation
    from pptx.util import Pt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = title
    for start in range(0, len(paragraphs), 4):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = f"{title} ({start // 4 + 1})"
        frame = slide.placeholders[1].text_frame
        frame.text = paragraphs[start]
        for paragraph in paragraphs[start + 1 : start + 4]:
            frame.add_paragraph().text = paragraph
        for item in frame.paragraphs:
            item.font.size = Pt(10)
    deck.save(str(out))


def _xlsx(title: str, paragraphs: list[str], out: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Notes"
    book.properties.title = title
    for number, paragraph in enumerate(paragraphs, start=1):
        sheet.append([number, paragraph])
    book.save(str(out))


def _html(title: str, paragraphs: list[str], out: Path) -> None:
    from html import escape

    body = "\n".join(
        f"<h2>{escape(p.lstrip('#').strip())}</h2>" if p.startswith("#") else f"<p>{escape(p)}</p>"
        for p in paragraphs
    )
    out.write_text(
        f"<html><head><title>Team Space : {escape(title)}</title></head><body>"
        '<div id="breadcrumb-section"><a href="index.html">Team Space</a></div>'
        f'<h1 id="title-heading"><span id="title-text">Team Space : {escape(title)}</span></h1>'
        '<div class="page-metadata">Created by Kim Minji on Mar 03, 2026</div>'
        f'<div id="main-content" class="wiki-content">{body}</div>'
        '<div id="footer">Document generated by Confluence</div></body></html>\n',
        encoding="utf-8",
    )


WRITERS: dict[str, Callable[[str, list[str], Path], None]] = {
    "pdf": _pdf,
    "docx": _docx,
    "pptx": _pptx,
    "xlsx": _xlsx,
    "html": _html,
}


FORMATS_NAMED = {"doc", "xls", "ppt", "odt", "png", "md"}  # other endings a page name may have
LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "bilingual"
# The labelled set's English documents first in path order, its Korean ones last: a partner
# the plan defers arrives as far from its other half as a mirror can put it.
LABELLED_FOLDERS = {"en": "a-policies", "ko": "zz-policies"}


def add_labelled(root: Path, collection: str = "bench") -> list[BenchDoc]:
    """The labelled English/Korean set (``tests/data/bilingual``) as Markdown beside the
    documents, English under the first folder and Korean under the last."""
    added = []
    for source in sorted(LABELLED.glob("*.md")):
        language = source.stem.rsplit("-", 1)[-1]
        path = f"{collection}/{LABELLED_FOLDERS[language]}/{source.name}"
        text = source.read_text(encoding="utf-8")
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
        added.append(BenchDoc(path, "", text, 0))
    return added


def labelled_pairs() -> list[frozenset[str]]:
    """The labelled set's pairs (across languages and within one), by file stem."""
    pairs = json.loads((LABELLED / "pairs.json").read_text(encoding="utf-8"))
    return [frozenset(Path(name).stem for name in pair) for pair in pairs["cross"] + pairs["same"]]


def _zip(doc: BenchDoc, out: Path) -> None:
    """The text as a Markdown file inside a zip (a folder of the mirror)."""
    import zipfile

    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(Path(doc.path).with_suffix(".md").name, doc.text)


def _scan(title: str, paragraphs: list[str], out: Path) -> None:
    """A scanned page: the text's first lines as a picture (NanumGothic, 300 DPI's size)."""
    import textwrap

    from PIL import Image, ImageDraw, ImageFont

    lines = [title] + [row for p in paragraphs for row in textwrap.wrap(p, 60)][:24]
    image = Image.new("L", (1800, 120 + 64 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(str(FONT), 34)
    for number, line in enumerate(lines):
        draw.text((80, 60 + 64 * number), line, font=face, fill=0)
    image.save(out, format="PNG")


def build_mirror(
    root: Path, docs: Sequence[BenchDoc], scan_every: int = SCAN_EVERY
) -> dict[str, int]:
    """The same texts in turn as Markdown, PDF, Word, PowerPoint, Excel, HTML, Word, Excel and
    PowerPoint 97-2003, OpenDocument text (converted by LibreOffice, a batch per format), a
    Markdown file in a zip, and (one in ``scan_every``) a scanned page; per format, how
    many."""
    import shutil
    import subprocess

    formats: dict[str, int] = {}
    batches: dict[str, list[Path]] = {}
    office = shutil.which("soffice")
    for index, doc in enumerate(docs):
        kind = CYCLE[index % len(CYCLE)]
        if scan_every and index % scan_every == scan_every - 1 and HANGUL_PDF:
            kind = "png"
        korean = any("\uac00" <= char <= "\ud7a3" for char in doc.text[:400])
        if kind == "pdf" and korean and not HANGUL_PDF or kind in CONVERTED and not office:
            kind = "docx"
        stem = Path(doc.path).with_suffix("")
        out = root / f"{stem}.{kind}"
        out.parent.mkdir(parents=True, exist_ok=True)
        if kind == "md":
            out.write_text(doc.text, encoding="utf-8")
        elif kind == "zip":
            _zip(doc, out)
        elif kind == "png":
            _scan(*_paragraphs(doc.text), out)
        elif kind in CONVERTED:
            first = out.with_name(f"{stem.name}.{CONVERTED[kind]}")
            WRITERS[CONVERTED[kind]](*_paragraphs(doc.text), first)
            batches.setdefault(kind, []).append(first)
        else:
            WRITERS[kind](*_paragraphs(doc.text), out)
        formats[kind] = formats.get(kind, 0) + 1
    for kind, files in batches.items():
        for folder in {file.parent for file in files}:
            inside = [str(file) for file in files if file.parent == folder]
            subprocess.run([str(office), "--headless", "--convert-to", kind, "--outdir",
                            str(folder), *inside], check=True, capture_output=True)  # fmt: skip
            for file in inside:
                Path(file).unlink()
    return formats


def extraction_rates(root: Path) -> list[tuple[str, int, float, float]]:
    """(format, files, files/s, peak MB) extracting the mirror's files of each format in a
    process of its own, one file at a time (a zip's members by their own format)."""
    import subprocess

    rates = []
    for name in sorted({doc.format.name for doc in scan(root) if doc.format.extracted}):
        done = subprocess.run([sys.executable, "-m", "benchmarks.format_rate", name, str(root)],
                              check=True, capture_output=True, text=True)  # fmt: skip
        files, per_s, peak = done.stdout.split()
        rates.append((name, int(files), float(per_s), float(peak)))
    return rates


@dataclasses.dataclass
class Run:
    label: str
    docs: int
    duration_s: float
    first_request_s: float
    failed: int
    links: set[frozenset[str]]
    waited_s: float = 0.0  # for embedding: before the first request, and at the end
    by_meaning: int = 0  # links by meaning added at the end

    @property
    def rate(self) -> float:
        return self.docs / self.duration_s


def link_pairs(wiki: Path) -> set[frozenset[str]]:
    """The wiki's links, each a pair of documents (a link is on both pages, with its backlink),
    named without their format: the same in the plain and the mixed wikis."""

    def name(page: str) -> str:
        stem = page.removesuffix(".md")
        if ".zip/" in stem:  # a zip's Markdown file: named as the zip
            return stem.split(".zip/", 1)[0]
        kind = stem.rsplit(".", 1)[-1]
        return stem.rsplit(".", 1)[0] if kind in WRITERS or kind in FORMATS_NAMED else stem

    pairs = set()
    for page in (wiki / "bench").rglob("*.md"):
        meta = front_matter(page.read_text(encoding="utf-8"))
        here = name(page.relative_to(wiki).as_posix())
        related = [*(meta.get("related") or []), *(meta.get("related_by_meaning") or [])]
        pairs.update(frozenset((here, name(str(other)))) for other in related)
    return pairs


def run(
    label: str,
    synced: Path,
    wiki: Path,
    servers: Sequence[SimServer],
    workers: int,
    embeddings: EmbeddingsEndpoint | None,
) -> Run:
    for server in servers:
        server.reset_stats()
    endpoints = [
        Endpoint(name=server.sim.model, base_url=server.base_url, model=server.sim.model)
        for server in servers
    ]
    progress(f"{label}: ingesting")
    started = time.monotonic()
    report = ingest(
        corpus=Corpus(synced, ["bench"]),
        wiki_root=wiki,
        fleet=Fleet(endpoints, embeddings=embeddings),
        dials=Dials(workers_per_model=workers, flagged_pages="keep", flush_seconds=5),
    )
    firsts = [s.snapshot().first_request_at for s in servers]
    first = min(at for at in firsts if at is not None) - started
    progress(
        f"{label}: {report.count} docs in {report.duration_s:.1f} s, first request {first:.1f} s, "
        f"waited {report.embedding_wait_s:.1f} s for embedding"
    )
    return Run(
        label, report.count, report.duration_s, first, len(report.failed), link_pairs(wiki),
        report.embedding_wait_s, report.links_by_meaning,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.formats", description=__doc__)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each (the median counts)")
    parser.add_argument("--scan-every", type=int, default=SCAN_EVERY,
                        help="one document in this many is a scanned page (0: none)")  # fmt: skip
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="link candidates by meaning too, from the embedded e5 (the 'local' extra)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="wiki-assets-formats-") as folder:
        tmp = Path(folder)
        progress(f"writing {args.docs} documents, and the same as a mixed mirror")
        docs = build_documents(tmp / "plain", args.docs, collection="bench")
        docs += add_labelled(tmp / "plain")
        formats = build_mirror(tmp / "mixed", docs, args.scan_every)
        rates = extraction_rates(tmp / "mixed")
        fast = dataclasses.replace(PRESETS["fast"], model="fast")
        slow = dataclasses.replace(PRESETS["slow"], model="slow")
        # label -> (synced root, documents extracted first, documents embedded first, meaning)
        first, beside = sys.maxsize, plan.EXTRACT_FIRST
        if args.embedded:
            variants = {
                "plain text, links by n-grams alone": (tmp / "plain", beside, 0, False),
                "plain text": (tmp / "plain", beside, EMBED_FIRST, True),
                "plain text, every text embedded first": (tmp / "plain", beside, first, True),
                "mixed mirror": (tmp / "mixed", beside, EMBED_FIRST, True),
                "mixed, every text extracted and embedded first": (
                    tmp / "mixed",
                    first,
                    first,
                    True,
                ),
            }
        else:
            variants = {
                "plain text": (tmp / "plain", beside, EMBED_FIRST, False),
                "mixed mirror": (tmp / "mixed", beside, EMBED_FIRST, False),
                "mixed, extracted first": (tmp / "mixed", first, EMBED_FIRST, False),
            }
        runs: dict[str, list[Run]] = {label: [] for label in variants}
        with contextlib.ExitStack() as servers:
            one, two = (
                servers.enter_context(SimServer(fast)),
                servers.enter_context(SimServer(slow)),
            )
            e5 = servers.enter_context(embedded_embeddings_server()) if args.embedded else None
            for round_ in range(args.rounds):
                for label, (synced, extract_first, embed_first, meaning) in variants.items():
                    wiki = tmp / f"wiki-{label.replace(' ', '-').replace(',', '')}-{round_}"
                    with extracting_first(extract_first), embedding_first(embed_first):
                        embeddings = e5.endpoint if e5 and meaning else None
                        runs[label].append(
                            run(label, synced, wiki, (one, two), args.workers, embeddings)
                        )
    print(f"\n{args.docs} documents: " + ", ".join(f"{n} {kind}" for kind, n in formats.items()))
    print("\n| format | files | extracted per second (one process) | peak MB |")
    print("|---|---:|---:|---:|")
    for name, files, per_s, peak in rates:
        print(f"| {name} | {files} | {per_s:,.1f} | {peak:.0f} |")
    _table(runs, args.rounds, args.embedded)
    return 0


def _table(runs: dict[str, list[Run]], rounds: int, embedded: bool) -> None:
    """The runs' figures (medians of the rounds), each run's links, and with links by meaning
    each plain-text run's length against the run with n-grams alone of its round."""
    pairs = labelled_pairs()
    print(
        f"\n| documents | docs/s (median of {rounds}) | first request after | waited for "
        f"embedding | labelled partners linked (of {len(pairs)}) | links in all "
        "(by meaning at the end) | failed |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, done in runs.items():
        stems = [{frozenset(Path(name).name for name in link) for link in r.links} for r in done]
        linked = [sum(1 for pair in pairs if pair in found) for found in stems]
        print(
            f"| {label} | {statistics.median(r.rate for r in done):.2f} | "
            f"{statistics.median(r.first_request_s for r in done):.1f} s | "
            f"{statistics.median(r.waited_s for r in done):.1f} s | "
            f"{' · '.join(map(str, linked))} | "
            f"{' · '.join(f'{len(r.links)} ({r.by_meaning})' for r in done)} | "
            f"{max(r.failed for r in done)} |"
        )
    if "mixed mirror" in runs and "plain text" in runs:
        mixed = statistics.median(r.rate for r in runs["mixed mirror"])
        print(
            f"\nmixed / plain: {mixed / statistics.median(r.rate for r in runs['plain text']):.3f}"
        )
    if embedded:
        alone = runs["plain text, links by n-grams alone"]
        for label in ("plain text", "plain text, every text embedded first"):
            ratios = [r.duration_s / a.duration_s for r, a in zip(runs[label], alone, strict=True)]
            shown = " · ".join(f"{ratio:.3f}" for ratio in ratios)
            print(
                f"\n{label}: run's seconds / n-grams alone's, round by round: {shown} "
                f"(median {statistics.median(ratios):.3f})"
            )


@contextlib.contextmanager
def embedding_first(limit: int) -> Iterator[None]:
    """The plan embeds up to ``limit`` documents before the first request (past it, beside)."""
    saved, embed_missing.EMBED_FIRST = embed_missing.EMBED_FIRST, limit
    try:
        yield
    finally:
        embed_missing.EMBED_FIRST = saved


@contextlib.contextmanager
def extracting_first(limit: int) -> Iterator[None]:
    """The plan extracts up to ``limit`` deferred documents before the first request."""
    saved, plan.EXTRACT_FIRST = plan.EXTRACT_FIRST, limit
    try:
        yield
    finally:
        plan.EXTRACT_FIRST = saved


if __name__ == "__main__":
    sys.exit(main())
