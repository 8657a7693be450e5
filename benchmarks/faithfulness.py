"""How well the rules of :mod:`wiki_assets.engine.quality.claims` tell a summary's true sentences
from false ones, in English and in Korean.

Run ``python -m benchmarks.faithfulness [--show-misses]``. Nothing is downloaded; it takes a few
seconds.

1. **The labelled set** (:mod:`benchmarks.faithfulness_set`): short policy-like documents and,
   for each, true sentences (copied, reworded, the same figures written otherwise) and planted
   errors (a changed number, a swapped name, a negation, an invented policy, a wrong date).
   Each sentence is checked alone, as a one-sentence summary, with the document's first line as
   its title. Per language and kind the table gives the items, those caught (contradicted or
   unsupported: the page would be flagged) and, for the true ones, the false alarms and how many
   were supported (with lines) or left unchecked (for a judge).
2. **As the issue measured**: every ``.md``/``.txt`` document of the sample corpus
   (``synced/``). From the sentences of its second half, a sentence that holds a number and the
   one before it are taken. The planted page's summary is the one before, copied, and the
   number's sentence with its first number changed (+7); the control page's summary is both
   sentences copied. A planted page is caught when any of its sentences is contradicted or
   unsupported; a control page so flagged is a false alarm. Documents with no such sentence are
   skipped. Targets: at least 90% caught, at most 5% of control pages flagged.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks.faithfulness_set import DOCUMENTS, ITEMS, KINDS
from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.documents.markdown import SENTENCE_END
from wiki_assets.engine.quality.claims import ProseCheck, Support, check_prose

PROJECT = Path(__file__).resolve().parents[1]
SAMPLE = PROJECT / "synced"
FLAGGING = (Support.CONTRADICTED, Support.UNSUPPORTED)
_MARKUP = re.compile(r"^\s*(?:#+|[-*+]|\d+[.)]|>)\s+")  # a heading's, bullet's or quote's mark
_DIGITS = re.compile(r"\d+")


def flagged(check: ProseCheck) -> bool:
    return any(sentence.status in FLAGGING for sentence in check.sentences)


def labelled(show_misses: bool) -> None:
    counts: dict[tuple[str, str], Counter[str]] = {}
    for doc, sentence, label in ITEMS:
        text = DOCUMENTS[doc]
        (result,) = check_prose("", sentence, text, text.splitlines()[0]).sentences
        row = counts.setdefault((doc[:2], label), Counter())
        row["items"] += 1
        row[result.status.value] += 1
        wrong = (result.status in FLAGGING) == (label == "true")
        if show_misses and wrong:
            print(f"- {doc} [{label}] {result.status.value}: {sentence} ({result.document_says})")
    if show_misses:
        print()
    print("## The labelled set: each sentence alone\n")
    print("| language | kind | items | caught | false alarms | supported | unchecked |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for language in ("en", "ko"):
        for kind in KINDS:
            row = counts.get((language, kind), Counter())
            bad = row["contradicted"] + row["unsupported"]
            if kind == "true":
                cells = ["", str(bad), str(row["supported"]), str(row["unchecked"])]
            else:
                cells = [f"{bad} ({_share(bad, row['items'])})", "", "", ""]
            print(f"| {language} | {kind} | {row['items']} | " + " | ".join(cells) + " |")
    print()


def sample_pairs() -> list[tuple[str, str, str, str, str]]:
    """(path, document, true sentence, number's sentence, that sentence changed) per sample
    document that has one."""
    found = []
    for path in sorted(SAMPLE.rglob("*")):
        if path.suffix not in (".md", ".txt") or path.name == "README.md":
            continue
        text = path.read_text("utf-8")
        lines = text.splitlines()
        said: list[str] = []
        for line in lines[len(lines) // 2 :]:
            if line.lstrip().startswith(("|", "```")):
                continue  # a table row or a fence is not a sentence a summary copies
            line = _MARKUP.sub("", line).strip()
            said += [s.strip() for s in SENTENCE_END.split(line) if len(s.split()) >= 3]
        for before, sentence in zip(said, said[1:], strict=False):
            number = _DIGITS.search(sentence)
            if number is not None:
                changed = str(int(number.group(0)) + 7)
                wrong = sentence[: number.start()] + changed + sentence[number.end() :]
                rel = path.relative_to(SAMPLE).as_posix()
                found.append((rel, text, before, sentence, wrong))
                break
    return found


def as_measured(show_misses: bool) -> None:
    pairs = sample_pairs()
    caught = alarms = 0
    for rel, text, before, sentence, wrong in pairs:
        title = title_of(text, rel)
        planted = check_prose("", f"{before} {wrong}", text, title)
        control = check_prose("", f"{before} {sentence}", text, title)
        caught += flagged(planted)
        alarms += flagged(control)
        if show_misses and not flagged(planted):
            print(f"- missed {rel}: {wrong!r} -> {[s.status.value for s in planted.sentences]}")
        if show_misses and flagged(control):
            said = [(s.status.value, s.document_says) for s in control.sentences]
            print(f"- false alarm {rel}: {before!r} {sentence!r} -> {said}")
    if show_misses:
        print()
    skipped = sum(
        1 for p in SAMPLE.rglob("*") if p.suffix in (".md", ".txt") and p.name != "README.md"
    ) - len(pairs)
    print("## As the issue measured: the sample corpus, two-sentence summaries\n")
    print("| pages | changed number caught | control pages flagged | skipped documents |")
    print("|---:|---:|---:|---:|")
    print(
        f"| {len(pairs)} | {caught} ({_share(caught, len(pairs))}) | "
        f"{alarms} ({_share(alarms, len(pairs))}) | {skipped} |"
    )
    print("\nTargets: at least 90% caught, at most 5% of control pages flagged.")


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.faithfulness")
    parser.add_argument(
        "--show-misses", action="store_true", help="list each sentence the rules got wrong"
    )
    args = parser.parse_args(argv)
    labelled(args.show_misses)
    as_measured(args.show_misses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
