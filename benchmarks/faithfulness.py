"""How well the rules of :mod:`wiki_assets.engine.quality.claims` tell a summary's true sentences
from false ones, in English and in Korean.

Run ``python -m benchmarks.faithfulness [--show-misses]``. Nothing is downloaded; it takes about
half a minute (the verification pass on the simulator, :mod:`benchmarks.verification`, most of it).

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
3. **Real model prose** (:mod:`benchmarks.real_prose`): what the embedded SmolLM2 wrote on the
   sample, the tests' English/Korean pairs and the policy documents, each sentence labelled by
   reading its document; the precision of "supported", false sentences caught, false alarms.
4. **The verification pass** on the simulator's judges (:mod:`benchmarks.verification`).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks import real_prose, verification
from benchmarks.faithfulness_set import DOCUMENTS, ITEMS, KINDS
from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.quality.claims import check_prose
from wiki_assets.engine.quality.sentences import ProseCheck, Support
from wiki_assets.engine.text.sentences import SENTENCE_END

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


JUDGED_AS = {
    "true": "supported",
    "number": "contradicted",
    "date": "contradicted",
    "name": "contradicted",
    "negation": "contradicted",
    "invented": "not_stated",
}


def judged_by_model(base_url: str | None, model: str | None) -> None:
    """The labelled set through a real model's judge request (one per document, all its
    sentences at once, as the engine sends it): the embedded SmolLM2-135M by default, or the
    OpenAI-compatible endpoint given. Right: its verdict is the label's (a planted error of a
    number, date, name or negation is contradicted; an invented policy is not stated)."""
    import asyncio
    import contextlib

    from wiki_assets.engine.config import Endpoint
    from wiki_assets.engine.llm.client import ModelClient
    from wiki_assets.engine.llm.local_server import embedded_server

    async def judge_all(endpoint: Endpoint) -> Counter[tuple[str, str]]:
        client = ModelClient(endpoint, max_tokens=600)
        tally: Counter[tuple[str, str]] = Counter()
        try:
            for doc, text in DOCUMENTS.items():
                items = [(sentence, label) for d, sentence, label in ITEMS if d == doc]
                judgement = await client.judge(text, [sentence for sentence, _ in items])
                verdicts = {v.index: v.verdict for v in judgement.verdicts}
                for number, (_, label) in enumerate(items, start=1):
                    said = verdicts.get(number, "none")
                    tally[(label, "right" if said == JUDGED_AS[label] else said)] += 1
        finally:
            await client.close()
        return tally

    with contextlib.ExitStack() as stack:
        if base_url is None:
            endpoint = stack.enter_context(embedded_server()).endpoint
        else:
            endpoint = Endpoint(name="judge", base_url=base_url, model=model or "judge")
        tally = asyncio.run(judge_all(endpoint))
    print(f"## {endpoint.model} as a judge on the labelled set\n")
    print("| kind | items | right | its verdicts otherwise |")
    print("|---|---:|---:|---|")
    for kind in KINDS:
        row = {said: n for (label, said), n in tally.items() if label == kind}
        items = sum(row.values())
        others = ", ".join(f"{said} {n}" for said, n in sorted(row.items()) if said != "right")
        print(f"| {kind} | {items} | {_share(row.get('right', 0), items)} | {others} |")
    print()


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.faithfulness")
    parser.add_argument(
        "--show-misses", action="store_true", help="list each sentence the rules got wrong"
    )
    parser.add_argument(
        "--judge", action="store_true",
        help="also put the labelled set to a real model's judge request (default: the embedded "
        "SmolLM2-135M; needs the 'local' extra)",
    )  # fmt: skip
    parser.add_argument("--judge-url", help="an OpenAI-compatible endpoint to judge instead")
    parser.add_argument(
        "--no-verification", action="store_true",
        help="leave out the verification pass on the simulator's judges (about 20 s)",
    )  # fmt: skip
    parser.add_argument("--judge-model", help="its model id")
    args = parser.parse_args(argv)
    labelled(args.show_misses)
    as_measured(args.show_misses)
    print()
    print("\n".join(real_prose.report(args.show_misses)))
    if not args.no_verification:
        print("\n".join(verification.report()))
    if args.judge or args.judge_url:
        judged_by_model(args.judge_url, args.judge_model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
