#!/usr/bin/env python3
# ruff: noqa: E501  (Markdown table rows and shell lines read better whole)
"""Document-to-text converters side by side, on a mirror written by scripts/make-documents: the
all-in-one converters (kreuzberg, markitdown) and one library per format (what the engine uses).
The table is in docs/benchmarks.md ("Reading documents").

Not the project's install: the candidates want a virtual environment of their own.

    python3 -m venv /tmp/conv && /tmp/conv/bin/pip install kreuzberg==4.10.4 'markitdown[all]==0.1.9' \
        pypdfium2 pypdf python-docx python-pptx openpyxl extract-hwp==0.2.1 hwp-hwpx-parser==1.0.0 \
        hwp-converter-ai==0.2.0 selectolax lxml trafilatura==2.3.1 lxml_html_clean html-to-markdown
    /tmp/conv/bin/python benchmarks/converters.py small tests/data/formats [--out results] [--reps 3]
    /tmp/conv/bin/python benchmarks/converters.py big BIG_DIR [--out results] [--reps 3]
    /tmp/conv/bin/python benchmarks/converters.py tables [--out results]   # results/*.json -> .md
    (internal: benchmarks/converters.py worker CONVERTER FILE [--reps N], one fresh process)

BIG_DIR holds a 600-page PDF (big-600p.pdf) and a 50,000-row workbook (big-50000x10.xlsx).

Every (converter, file) pair runs in a fresh subprocess (`worker`): it imports the library
(timed separately), extracts the file REPS times (median wall time reported), and reports
ru_maxrss of that process (peak RSS, includes the interpreter and the library's import).
The parent scores the extraction against the source markdown named in manifest.json.
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent


# =========================================================================== converters
# Each returns dict(text=str, parts=list[str] | None, part_kind=str, title=str | None, extra=dict)
# and raises on failure. Imports happen in setup functions so import time is measured apart.


def _kz_cfg(**kw):
    from kreuzberg import ExtractionConfig, PageConfig

    return ExtractionConfig(use_cache=False, pages=PageConfig(extract_pages=True), **kw)


def kreuzberg_generic(path, **kw):
    import kreuzberg

    r = kreuzberg.extract_file_sync(path, config=_kz_cfg(**kw))
    md = dict(r.metadata)
    parts = [p["content"] for p in r.pages] if r.pages else None
    extra = {
        "mime": r.mime_type,
        "format_type": md.get("format_type"),
        "n_pages_field": None if r.pages is None else len(r.pages),
        "page_count_meta": md.get("page_count"),
        "slide_count": md.get("slide_count"),
        "is_encrypted": md.get("is_encrypted"),
        "warnings": [str(w.message)[:200] for w in r.processing_warnings],
        "n_tables": len(r.tables),
    }
    title = md.get("title") or md.get("subject")
    return dict(text=r.content, parts=parts, part_kind="page", title=title, extra=extra)


def conv_kreuzberg(path):
    return kreuzberg_generic(path)


def conv_kreuzberg_md(path):
    return kreuzberg_generic(path, output_format="markdown")


def conv_kreuzberg_htmlpre(path):
    return kreuzberg_generic(
        path,
        html_options={
            "preprocessing": {"enabled": True, "preset": "aggressive", "remove_navigation": True}
        },
    )


def conv_markitdown(path):
    from markitdown import MarkItDown

    r = MarkItDown(enable_plugins=False).convert(path)
    return dict(text=r.text_content or "", parts=None, part_kind="", title=r.title, extra={})


def conv_pypdfium2(path):
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        parts = []
        for i in range(len(pdf)):
            page = pdf[i]
            tp = page.get_textpage()
            parts.append(tp.get_text_bounded())
            tp.close()
            page.close()
        title = pdf.get_metadata_dict().get("Title") or None
    finally:
        pdf.close()
    return dict(text="\n\f".join(parts), parts=parts, part_kind="page", title=title, extra={})


def conv_pypdf(path):
    from pypdf import PdfReader

    r = PdfReader(path)
    if r.is_encrypted:
        from pypdf.errors import FileNotDecryptedError

        raise FileNotDecryptedError("is_encrypted=True (no password given)")
    parts = [p.extract_text() or "" for p in r.pages]
    title = r.metadata.title if r.metadata else None
    return dict(text="\n\f".join(parts), parts=parts, part_kind="page", title=title, extra={})


def conv_python_docx(path):
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    d = docx.Document(path)
    out = []
    for block in d.element.body.iterchildren():
        tag = block.tag.rsplit("}", 1)[-1]
        if tag == "p":
            p = Paragraph(block, d)
            t = p.text.strip()
            if not t:
                continue
            st = (p.style.name or "") if p.style is not None else ""
            if st == "Title":
                out.append("# " + t)
            elif st.startswith("Heading"):
                lvl = st.split()[-1]
                out.append("#" * (int(lvl) + 1 if lvl.isdigit() else 2) + " " + t)
            else:
                out.append(t)
        elif tag == "tbl":
            tb = Table(block, d)
            rows = [[c.text.strip().replace("\n", " ") for c in r.cells] for r in tb.rows]
            if rows:
                out.append("| " + " | ".join(rows[0]) + " |")
                out.append("|" + " --- |" * len(rows[0]))
                out.extend("| " + " | ".join(r) + " |" for r in rows[1:])
    return dict(
        text="\n\n".join(out),
        parts=None,
        part_kind="",
        title=d.core_properties.title or None,
        extra={},
    )


def conv_python_pptx(path):
    from pptx import Presentation

    prs = Presentation(path)
    parts = []
    for s in prs.slides:
        lines = []
        title_shape = s.shapes.title
        if title_shape is not None and title_shape.has_text_frame:
            lines.append("## " + title_shape.text_frame.text.strip())
        for sh in s.shapes:
            if title_shape is not None and sh.shape_id == title_shape.shape_id:
                continue
            if sh.has_text_frame:
                lines.extend(p.text for p in sh.text_frame.paragraphs if p.text.strip())
            elif getattr(sh, "has_table", False) and sh.has_table:
                for r in sh.table.rows:
                    lines.append("| " + " | ".join(c.text for c in r.cells) + " |")
        if s.has_notes_slide:
            n = s.notes_slide.notes_text_frame.text.strip()
            if n:
                lines.append("Notes: " + n)
        parts.append("\n".join(lines))
    return dict(
        text="\n\n".join(parts),
        parts=parts,
        part_kind="slide",
        title=prs.core_properties.title or None,
        extra={},
    )


def conv_openpyxl(path):
    import openpyxl

    wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    parts = []
    for ws in wb.worksheets:
        rows = [
            "\t".join("" if v is None else str(v) for v in r)
            for r in ws.iter_rows(values_only=True)
        ]
        parts.append(f"## {ws.title}\n" + "\n".join(rows))
    title = wb.properties.title
    wb.close()
    return dict(text="\n\n".join(parts), parts=parts, part_kind="sheet", title=title, extra={})


def conv_csv(path):
    import csv

    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    return dict(
        text="\n".join("\t".join(r) for r in rows), parts=None, part_kind="", title=None, extra={}
    )


def conv_email(path):
    import email
    import email.policy

    with open(path, "rb") as f:
        m = email.message_from_binary_file(f, policy=email.policy.default)
    body = m.get_body(("plain", "html"))
    return dict(
        text=body.get_content() if body else "",
        parts=None,
        part_kind="",
        title=m["subject"],
        extra={},
    )


def conv_extract_hwp(path):
    from extract_hwp import extract_text_from_hwp, is_hwp_file_password_protected

    if is_hwp_file_password_protected(path):
        raise PermissionError("password protected")
    text, err = extract_text_from_hwp(path)
    if err is not None:
        raise RuntimeError(f"extract_hwp error: {err}")
    return dict(text=text or "", parts=None, part_kind="", title=None, extra={})


def conv_hwp_hwpx_parser(path):
    from hwp_hwpx_parser import Reader

    with Reader(path) as r:
        if not r.is_valid:
            raise ValueError("Reader.is_valid is False")
        if r.is_encrypted:
            raise PermissionError("Reader.is_encrypted")
        text = r.extract_text()
        tables = r.get_tables_as_markdown() if r.tables else ""
    return dict(
        text=text + ("\n\n" + tables if tables else ""),
        parts=None,
        part_kind="",
        title=None,
        extra={"file_type": str(r.file_type)},
    )


def conv_hwp_converter_ai(path):
    from hwp_converter_ai import HwpParser, HwpxParser

    p = Path(path)  # the parsers need a Path, a str raises AttributeError
    ir = HwpxParser().parse(p) if p.suffix.lower() == ".hwpx" else HwpParser.parse(p)
    return dict(text=ir.to_markdown(), parts=None, part_kind="", title=None, extra={})


def _html(path):
    return Path(path).read_text(encoding="utf-8", errors="replace")


def _confluence_title(t):
    return t.split(" : ", 1)[1].strip() if t and " : " in t else t


def conv_selectolax_main(path):
    from selectolax.lexbor import (
        LexborHTMLParser as HTMLParser,
    )  # selectolax.parser (Modest) raises ImportError in 1.0

    tree = HTMLParser(_html(path))
    node = tree.css_first("#main-content")
    if node is None:
        node = tree.body
    tnode = tree.css_first("#title-text") or tree.css_first("title")
    title = _confluence_title(tnode.text(strip=True)) if tnode else None
    for bad in node.css("script, style"):
        bad.decompose()
    return dict(
        text=node.text(separator="\n", strip=True), parts=None, part_kind="", title=title, extra={}
    )


def conv_lxml_main(path):
    import lxml.html

    doc = lxml.html.fromstring(_html(path))
    found = doc.xpath('//*[@id="main-content"]')
    node = found[0] if found else doc.body
    t = doc.xpath('string(//*[@id="title-text"])') or doc.findtext(".//title")
    lines = [s.strip() for s in node.itertext() if s.strip()]
    return dict(
        text="\n".join(lines),
        parts=None,
        part_kind="",
        title=_confluence_title(t.strip()) if t else None,
        extra={},
    )


def conv_selectolax_h2m(path):
    """#main-content (selectolax) -> markdown (html-to-markdown)."""
    import html_to_markdown as h2m
    from selectolax.lexbor import (
        LexborHTMLParser as HTMLParser,
    )  # selectolax.parser (Modest) raises ImportError in 1.0

    tree = HTMLParser(_html(path))
    node = tree.css_first("#main-content") or tree.body
    tnode = tree.css_first("#title-text") or tree.css_first("title")
    title = _confluence_title(tnode.text(strip=True)) if tnode else None
    r = h2m.convert(node.html, h2m.ConversionOptions(extract_metadata=False))
    return dict(text=r.content, parts=None, part_kind="", title=title, extra={})


def conv_trafilatura(path):
    import trafilatura

    html = _html(path)
    text = trafilatura.extract(
        html,
        output_format="markdown",
        include_tables=True,
        include_comments=False,
        with_metadata=False,
    )
    meta = trafilatura.extract_metadata(html)
    return dict(
        text=text or "", parts=None, part_kind="", title=meta.title if meta else None, extra={}
    )


def conv_html_to_markdown(path):
    import html_to_markdown as h2m

    r = h2m.convert(_html(path))
    return dict(text=r.content, parts=None, part_kind="", title=None, extra={})


def conv_html_to_markdown_pre(path):
    import html_to_markdown as h2m

    o = h2m.ConversionOptions(
        preprocessing=h2m.PreprocessingOptions(
            enabled=True, preset="aggressive", remove_navigation=True
        )
    )
    r = h2m.convert(_html(path), o)
    return dict(text=r.content, parts=None, part_kind="", title=None, extra={})


def conv_pypdfium2_stream(path):
    n = big_pdf_stream_pypdfium2(path)
    return dict(text="", parts=None, part_kind="", title=None, extra={"n_chars": n})


def conv_noop(path):
    return dict(text="", parts=None, part_kind="", title=None, extra={})


CONVERTERS = {
    "kreuzberg": (conv_kreuzberg, "kreuzberg"),
    "kreuzberg-md": (conv_kreuzberg_md, "kreuzberg"),
    "kreuzberg-htmlpre": (conv_kreuzberg_htmlpre, "kreuzberg"),
    "markitdown": (conv_markitdown, "markitdown"),
    "pypdfium2": (conv_pypdfium2, "pypdfium2"),
    "pypdf": (conv_pypdf, "pypdf"),
    "python-docx": (conv_python_docx, "docx"),
    "python-pptx": (conv_python_pptx, "pptx"),
    "openpyxl": (conv_openpyxl, "openpyxl"),
    "csv-stdlib": (conv_csv, "csv"),
    "email-stdlib": (conv_email, "email"),
    "extract-hwp": (conv_extract_hwp, "extract_hwp"),
    "hwp-hwpx-parser": (conv_hwp_hwpx_parser, "hwp_hwpx_parser"),
    "hwp-converter-ai": (conv_hwp_converter_ai, "hwp_converter_ai"),
    "selectolax#main": (conv_selectolax_main, "selectolax.lexbor"),
    "lxml#main": (conv_lxml_main, "lxml.html"),
    "selectolax#main+h2m": (conv_selectolax_h2m, "selectolax.lexbor html_to_markdown"),
    "trafilatura": (conv_trafilatura, "trafilatura"),
    "html-to-markdown": (conv_html_to_markdown, "html_to_markdown"),
    "html-to-markdown-pre": (conv_html_to_markdown_pre, "html_to_markdown"),
    "pypdfium2-stream": (conv_pypdfium2_stream, "pypdfium2"),
    "noop": (conv_noop, ""),
}

BY_KIND = {
    "pdf": ["kreuzberg", "kreuzberg-md", "markitdown", "pypdfium2", "pypdf"],
    "docx": ["kreuzberg", "kreuzberg-md", "markitdown", "python-docx"],
    "pptx": ["kreuzberg", "kreuzberg-md", "markitdown", "python-pptx"],
    "xlsx": ["kreuzberg", "kreuzberg-md", "markitdown", "openpyxl"],
    "csv": ["kreuzberg", "markitdown", "csv-stdlib"],
    "html": [
        "kreuzberg",
        "kreuzberg-md",
        "kreuzberg-htmlpre",
        "markitdown",
        "selectolax#main",
        "lxml#main",
        "selectolax#main+h2m",
        "trafilatura",
        "html-to-markdown",
        "html-to-markdown-pre",
    ],
    "hwpx": ["kreuzberg", "markitdown", "extract-hwp", "hwp-hwpx-parser", "hwp-converter-ai"],
    "hwp": ["kreuzberg", "markitdown", "extract-hwp", "hwp-hwpx-parser", "hwp-converter-ai"],
    "eml": ["kreuzberg", "markitdown", "email-stdlib"],
    "rtf": ["kreuzberg", "markitdown"],
    "image": ["kreuzberg", "markitdown"],
    "scanned-pdf": ["kreuzberg", "markitdown", "pypdfium2", "pypdf"],
    "archive": ["kreuzberg", "markitdown"],
    "font": ["kreuzberg", "markitdown"],
    "corrupt": ["kreuzberg", "markitdown", "pypdfium2", "pypdf"],
    "encrypted": ["kreuzberg", "markitdown", "pypdfium2", "pypdf"],
}


# =========================================================================== worker
def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(name, path, reps):
    fn, mods = CONVERTERS[name]
    base_rss = rss_mb()
    t0 = time.perf_counter()
    import importlib

    for m in mods.split():
        importlib.import_module(m)
    import_s = time.perf_counter() - t0
    rss_after_import = rss_mb()
    times, res, err = [], None, None
    for _ in range(reps):
        t = time.perf_counter()
        try:
            res = fn(path)
            err = None
        except BaseException as e:  # noqa: BLE001 - we report every failure
            err = {"type": f"{type(e).__module__}.{type(e).__name__}", "msg": str(e)[:400]}
            res = None
        times.append(time.perf_counter() - t)
    out = {
        "converter": name,
        "file": path,
        "import_s": import_s,
        "times_s": times,
        "median_s": statistics.median(times),
        "rss_start_mb": base_rss,
        "rss_after_import_mb": rss_after_import,
        "peak_rss_mb": rss_mb(),
        "error": err,
    }
    if res is not None:
        out.update(res)
    sys.stdout.write("\n@@RESULT@@" + json.dumps(out, ensure_ascii=False))


def run_worker(name, path, reps, timeout=900):
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "worker",
        name,
        str(path),
        "--reps",
        str(reps),
    ]
    t = time.perf_counter()
    p = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    wall = time.perf_counter() - t
    if "@@RESULT@@" not in p.stdout:
        return {
            "converter": name,
            "file": str(path),
            "error": {"type": "worker-crash", "msg": f"rc={p.returncode} {p.stderr[-400:]}"},
            "process_wall_s": wall,
        }
    out = json.loads(p.stdout.split("@@RESULT@@", 1)[1])
    out["process_wall_s"] = wall
    out["stderr_tail"] = p.stderr[-300:]
    return out


# =========================================================================== scoring
def norm(s: str) -> str:
    s = unicodedata.normalize("NFKC", s)
    s = s.replace("\\", "")
    return re.sub(r"[\s*_#|>`\"'’‘“”]", "", s)


def words(s: str) -> list[str]:
    s = unicodedata.normalize("NFKC", s)
    return [w for w in re.findall(r"[\w][\w\-,.:;%/]*", s) if w]


def hangul(s: str) -> int:
    return sum(1 for ch in s if "\uac00" <= ch <= "\ud7a3")


def parse_md(text):
    sys.path.insert(0, str(HERE))
    from make_mirror import parse_md as p

    return p(text)


def split_sentences(par):
    return [x for x in re.split(r"(?<=[.!?])\s+", par.strip()) if x]


def score(entry: dict, res: dict, chrome: list[str]) -> dict:
    text = res.get("text") or ""
    q = {"chars": len(text)}
    src_path = entry.get("source_path")
    if not src_path or res.get("error"):
        return q
    md = Path(src_path).read_text(encoding="utf-8")
    doc = parse_md(md)
    kind = entry["kind"]
    units = []
    if kind != "html":  # Confluence body has no H1: title only in the chrome
        units.append(doc["title"])
    heads = [s["heading"] for s in doc["sections"]]
    units += heads
    sents = [x for s in doc["sections"] for p in s["paras"] for x in split_sentences(p)]
    units += sents
    units = [u for u in units if u.strip()]
    nt = norm(text)
    found = [u for u in units if norm(u) in nt]
    q["units"] = f"{len(found)}/{len(units)}"
    q["unit_cov"] = round(len(found) / len(units), 3)
    sw = set(words(" ".join(units)))
    tw = set(words(text))
    # a word counts as found if it is a token of the output or (Korean/ punctuation joins) a substring
    fw = [w for w in sw if w in tw or norm(w) in nt]
    q["word_cov"] = round(len(fw) / max(1, len(sw)), 3)
    q["missing"] = [u[:60] for u in units if u not in found][:4]
    if entry.get("lang") == "ko":
        q["hangul_ratio"] = round(hangul(text) / max(1, hangul(" ".join(units))), 3)
    # headings: as markdown headings / on a line of their own
    lines = [ln.strip() for ln in text.splitlines()]
    nl = {norm(ln.lstrip("#").strip()) for ln in lines}
    mdh = {norm(ln.lstrip("#").strip()) for ln in lines if re.match(r"^#{1,6}\s", ln)}
    q["heading_lines"] = f"{sum(norm(h) in nl for h in heads)}/{len(heads)}"
    q["md_headings"] = f"{sum(norm(h) in mdh for h in heads)}/{len(heads)}"
    # title metadata
    t = res.get("title")
    q["title"] = t
    q["title_ok"] = bool(t) and (norm(doc["title"]) in norm(str(t)))
    if kind == "docx":
        rows = [ln for ln in lines if ln.startswith("|")]
        tabled = entry.get("table_cells", [])
        q["table_md_rows"] = sum(any(norm(h) in norm(r) for r in rows) for h in tabled)
        q["table_text"] = sum(norm(h) in nt for h in tabled)
    if kind == "pptx":
        notes = [n for n in entry.get("notes", []) if n]
        q["notes_found"] = f"{sum(norm(n) in nt for n in notes)}/{len(notes)}"
        # right slide? note i must lie between slide title i and slide title i+1
        titles = entry.get("slide_titles", [])[1:]
        ok = 0
        for i, n in enumerate(entry.get("notes", [])):
            a = nt.find(norm(titles[i]))
            b = nt.find(norm(titles[i + 1])) if i + 1 < len(titles) else len(nt)
            c = nt.find(norm(n))
            ok += a >= 0 and c >= 0 and a < c and (b < 0 or c < b)
        q["notes_in_own_slide"] = f"{ok}/{len(notes)}"
        if res.get("parts") is not None:
            q["parts"] = len(res["parts"])
            q["parts_nonempty"] = sum(1 for p in res["parts"] if p.strip())
    if kind == "pdf":
        parts = res.get("parts")
        q["parts"] = None if parts is None else len(parts)
        if parts:
            ph = entry.get("page_headings", [])
            q["page_has_own_heading"] = (
                f"{sum(1 for i, h in enumerate(ph) if i < len(parts) and norm(h) in norm(parts[i]))}/{len(ph)}"
            )
    if kind in ("xlsx",) and res.get("parts") is not None:
        q["parts"] = len(res["parts"])
        q["parts_nonempty"] = sum(1 for p in res["parts"] if p.strip())
    if kind == "html":
        q["chrome_left"] = [c for c in chrome if c.lower() in text.lower()]
        q["chrome_left_n"] = f"{len(q['chrome_left'])}/{len(chrome)}"
    return q


def outcome(res):
    if res.get("error"):
        return "ERR " + res["error"]["type"].split(".")[-1]
    n = len((res.get("text") or "").strip())
    return "empty" if n == 0 else "ok"


# =========================================================================== drivers
def cmd_small(mirror: Path, out: Path, reps: int, only: set[str] | None):
    man = json.loads((mirror / "manifest.json").read_text(encoding="utf-8"))
    srcdir = Path(
        man.get("sources") or Path(__file__).resolve().parents[1] / "tests/data/bilingual"
    )
    sys.path.insert(0, str(HERE))
    from make_mirror import CHROME_MARKERS

    results = []
    base = run_worker("noop", str(mirror / "manifest.json"), 1)
    results.append({"entry": {"file": "-", "kind": "baseline"}, "res": base, "q": {}})
    print(
        f"baseline python process: peak RSS {base['peak_rss_mb']:.1f} MB, wall {base['process_wall_s']:.2f}s"
    )
    for e in man["files"]:
        if e.get("source"):
            e["source_path"] = str(srcdir / (e["source"] + ".md"))
        for c in BY_KIND[e["kind"]]:
            if only and c not in only:
                continue
            r = run_worker(c, str(mirror / e["file"]), reps)
            q = score(e, r, CHROME_MARKERS)
            results.append({"entry": e, "res": r, "q": q})
            print(
                f"{e['file']:38} {c:22} {outcome(r):28} {1000 * r.get('median_s', 0):8.1f} ms "
                f"{r.get('peak_rss_mb', 0):6.1f} MB  {q.get('units', '')} {q.get('chrome_left_n', '')}"
                + (f"  {r['error']['msg'][:90]}" if r.get("error") else ""),
                flush=True,
            )
    out.mkdir(parents=True, exist_ok=True)
    (out / "small.json").write_text(
        json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8"
    )


def big_pdf_stream_pypdfium2(path):
    """Page-at-a-time: only the running character count is kept (bounded memory)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    n = 0
    for i in range(len(pdf)):
        page = pdf[i]
        tp = page.get_textpage()
        n += len(tp.get_text_bounded())
        tp.close()
        page.close()
    pdf.close()
    return n


def cmd_big(big: Path, out: Path, reps: int):
    jobs = []
    for f in sorted(big.glob("big-*.pdf")):
        for c in ["kreuzberg", "pypdfium2", "pypdfium2-stream", "pypdf", "markitdown"]:
            jobs.append((c, f))
    for f in sorted(big.glob("big-*.xlsx")):
        for c in ["kreuzberg", "openpyxl", "markitdown"]:
            jobs.append((c, f))
    results = []
    for c, f in jobs:
        runs = []
        for i in range(reps):
            r = run_worker(c, str(f), 1, timeout=600)
            text = r.pop("text", "") or ""
            parts = r.pop("parts", None)
            r["chars"] = len(text) or (r.get("extra") or {}).get("n_chars", 0)
            r["n_parts"] = None if parts is None else len(parts)
            if f.suffix == ".pdf":  # completeness: unique 'Page N / M' markers found
                r["page_markers"] = len(set(re.findall(r"Page (\d+) / \d+", text)))
            runs.append(r)
            print(
                f"{f.name:22} {c:12} run{i + 1} {outcome({'error': r.get('error'), 'text': 'x' if r['chars'] else ''}):14}"
                f" {r.get('median_s', 0):7.2f} s {r.get('peak_rss_mb', 0):7.1f} MB chars={r['chars']}"
                f" parts={r['n_parts']}"
                + (f" markers={r.get('page_markers')}" if "page_markers" in r else "")
                + (f" {r['error']['msg'][:100]}" if r.get("error") else ""),
                flush=True,
            )
            if r.get("error") or r.get("median_s", 0) > 120:
                break  # a failure or a very slow option is not repeated
        results.append(
            {
                "converter": c,
                "file": f.name,
                "runs": runs,
                "median_s": statistics.median(x.get("median_s", float("nan")) for x in runs),
                "median_peak_mb": statistics.median(
                    x.get("peak_rss_mb", float("nan")) for x in runs
                ),
            }
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / "big.json").write_text(
        json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8"
    )


def cmd_tables(out: Path):
    res = json.loads((out / "small.json").read_text(encoding="utf-8"))
    sys.path.insert(0, str(HERE))
    from make_mirror import CHROME_MARKERS

    for row in res[1:]:  # re-score from the stored extraction (scoring changes need no re-run)
        row["q"] = score(row["entry"], row["res"], CHROME_MARKERS)
    L = []
    base = res[0]["res"]
    L.append(f"Baseline (python + json only): peak RSS {base['peak_rss_mb']:.1f} MB\n")
    # detail table
    L.append(
        "| file | kind | lang | converter | result | ms/file (median of 3) | import s | peak RSS MB | units found | word cov | hangul ratio | heading lines | md headings | title ok | format-specific |"
    )
    L.append("|---|---|---|---|---|---:|---:|---:|---|---:|---:|---|---|---|---|")
    for row in res[1:]:
        e, r, q = row["entry"], row["res"], row["q"]
        spec = []
        for k in (
            "parts",
            "parts_nonempty",
            "page_has_own_heading",
            "notes_found",
            "notes_in_own_slide",
            "table_md_rows",
            "table_text",
            "chrome_left_n",
        ):
            if k in q and q[k] is not None:
                spec.append(f"{k}={q[k]}")
        if r.get("error"):
            spec.append(
                f"`{r['error']['type'].split('.')[-1]}: {r['error']['msg'][:110]}`".replace(
                    "|", "/"
                ).replace("\n", " ")
            )
        elif e["kind"] in ("image", "scanned-pdf", "archive", "font"):
            spec.append(f"chars={q.get('chars')}")
            if r.get("extra", {}).get("warnings"):
                spec.append(
                    "warnings: " + "; ".join(r["extra"]["warnings"])[:120].replace("|", "/")
                )
        L.append(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                e["file"],
                e["kind"],
                e.get("lang", ""),
                r["converter"],
                outcome(r),
                f"{1000 * r['median_s']:.1f}" if "median_s" in r else "",
                f"{r.get('import_s', 0):.2f}",
                f"{r.get('peak_rss_mb', 0):.0f}",
                q.get("units", ""),
                q.get("word_cov", ""),
                q.get("hangul_ratio", ""),
                q.get("heading_lines", ""),
                q.get("md_headings", ""),
                ""
                if "title_ok" not in q
                else ("yes" if q["title_ok"] else f"no ({q.get('title')!s:.30})"),
                "; ".join(spec),
            )
        )
    # summary per kind x converter
    L.append(
        "\n\n| kind | converter | files ok | median ms/file | max peak RSS MB | mean unit coverage | notes |"
    )
    L.append("|---|---|---|---:|---:|---:|---|")
    agg = {}
    for row in res[1:]:
        e, r, q = row["entry"], row["res"], row["q"]
        a = agg.setdefault(
            (e["kind"], r["converter"]),
            {"n": 0, "ok": 0, "ms": [], "rss": [], "cov": [], "chrome": []},
        )
        a["n"] += 1
        a["ok"] += outcome(r) == "ok"
        if "median_s" in r:
            a["ms"].append(1000 * r["median_s"])
        a["rss"].append(r.get("peak_rss_mb", 0))
        if "unit_cov" in q:
            a["cov"].append(q["unit_cov"])
        if "chrome_left" in q:
            a["chrome"].append(len(q["chrome_left"]))
    for (k, c), a in agg.items():
        L.append(
            f"| {k} | {c} | {a['ok']}/{a['n']} | {statistics.median(a['ms']) if a['ms'] else float('nan'):.1f} | "
            f"{max(a['rss']):.0f} | {statistics.mean(a['cov']) if a['cov'] else float('nan'):.2f} | "
            + (f"chrome markers left: {a['chrome']}" if a["chrome"] else "")
            + " |"
        )
    if (out / "big.json").exists():
        big = json.loads((out / "big.json").read_text(encoding="utf-8"))
        L.append(
            "\n\n| file | converter | runs | median s | median peak RSS MB | chars | parts | page markers | error |"
        )
        L.append("|---|---|---:|---:|---:|---:|---:|---:|---|")
        for b in big:
            r0 = b["runs"][0]
            L.append(
                f"| {b['file']} | {b['converter']} | {len(b['runs'])} | {b['median_s']:.2f} | {b['median_peak_mb']:.0f} | "
                f"{r0.get('chars')} | {r0.get('n_parts')} | {r0.get('page_markers', '')} | "
                f"{(r0['error']['type'] + ': ' + r0['error']['msg'][:80]) if r0.get('error') else ''} |"
            )
    (out / "tables.md").write_text("\n".join(L) + "\n", encoding="utf-8")
    print("\n".join(L))


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    reps = 3
    if "--reps" in a:
        i = a.index("--reps")
        reps = int(a[i + 1])
        del a[i : i + 2]
    out = Path("results")
    if "--out" in a:
        i = a.index("--out")
        out = Path(a[i + 1])
        del a[i : i + 2]
    only = None
    if "--only" in a:
        i = a.index("--only")
        only = set(a[i + 1].split(","))
        del a[i : i + 2]
    if a[0] == "worker":
        worker(a[1], a[2], reps)
    elif a[0] == "small":
        cmd_small(Path(a[1]), out, reps, only)
    elif a[0] == "big":
        cmd_big(Path(a[1]), out, reps)
    elif a[0] == "tables":
        cmd_tables(out)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
