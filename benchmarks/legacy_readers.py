"""Readers of a drive's older formats side by side: kreuzberg (what the engine uses for Word,
Excel and PowerPoint 97-2003, RTF and Outlook mail) against one library or program per format:
xlrd (.xls), extract-msg (.msg), striprtf (.rtf), odfpy (OpenDocument, what the engine uses),
and Debian's antiword and catdoc (catppt) where installed. The table is in docs/benchmarks.md
("Older formats").

Not the project's install: the other candidates want ``pip install xlrd extract-msg striprtf``
and ``apt-get install antiword catdoc``.

    python -m benchmarks.legacy_readers FOLDER [FOLDER…]

A file counts as read when at least 20 characters came out. Every file is read in this process
(a Rust panic is caught: it is a BaseException), the programs in a process each.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

Reader = Callable[[Path], str]


def _kreuzberg(path: Path) -> str:
    from wiki_assets.engine.documents.extract import extract

    return extract(path, path.suffix.lower().lstrip("."), 50_000_000).text


def _xlrd(path: Path) -> str:
    import xlrd

    book = xlrd.open_workbook(str(path), on_demand=True)
    rows = []
    for sheet in book.sheets():
        rows += [" ".join(str(v) for v in sheet.row_values(r)) for r in range(sheet.nrows)]
    return "\n".join(rows)


def _extract_msg(path: Path) -> str:
    import extract_msg

    message = extract_msg.openMsg(str(path))
    try:
        return f"{message.subject or ''}\n{message.body or ''}"
    finally:
        message.close()


def _striprtf(path: Path) -> str:
    from striprtf.striprtf import rtf_to_text

    return str(rtf_to_text(path.read_text(encoding="latin-1")))


def _program(*command: str) -> Reader:
    def read(path: Path) -> str:
        done = subprocess.run([*command, str(path)], capture_output=True, timeout=60)
        return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else ""

    return read


CANDIDATES: dict[str, list[tuple[str, Reader]]] = {
    ".doc": [("kreuzberg", _kreuzberg), ("antiword", _program("antiword", "-m", "UTF-8.txt"))],
    ".xls": [("kreuzberg", _kreuzberg), ("xlrd", _xlrd), ("xls2csv", _program("xls2csv"))],
    ".ppt": [("kreuzberg", _kreuzberg), ("catppt", _program("catppt"))],
    ".msg": [("kreuzberg", _kreuzberg), ("extract-msg", _extract_msg)],
    ".rtf": [("kreuzberg", _kreuzberg), ("striprtf", _striprtf)],
}


def read_all(files: Sequence[Path], reader: Reader) -> tuple[int, float, int]:
    """(files read, seconds in all, files the reader raised a panic or an error on)."""
    read = errors = 0
    started = time.perf_counter()
    for path in files:
        try:
            text = reader(path)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException:  # noqa: B036 (a reader's own error, or a Rust panic)
            errors += 1
            continue
        read += len(text.strip()) >= 20
    return read, time.perf_counter() - started, errors


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.legacy_readers")
    parser.add_argument("folders", nargs="+")
    args = parser.parse_args(argv)
    files = [p for folder in args.folders for p in sorted(Path(folder).rglob("*")) if p.is_file()]
    print("| format | files | reader | read (≥ 20 chars) | raised | seconds |")
    print("|---|---:|---|---:|---:|---:|")
    for suffix, candidates in CANDIDATES.items():
        these = [p for p in files if p.suffix.lower() == suffix]
        if not these:
            continue
        for name, reader in candidates:
            program = name in ("antiword", "xls2csv", "catppt")
            if program and shutil.which(name) is None:
                continue
            read, seconds, errors = read_all(these, reader)
            print(f"| {suffix} | {len(these)} | {name} | {read} | {errors} | {seconds:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
