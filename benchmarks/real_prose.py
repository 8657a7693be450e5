"""The labelled set of real model prose: how the rules' statuses hold on what a real model wrote.

The answers (``real_prose_answers.jsonl``) were recorded by :mod:`benchmarks.real_prose_record`
(the embedded SmolLM2-135M on the sample corpus, the English/Korean pairs of the tests and the
short policy documents of :mod:`benchmarks.faithfulness_set`; it and Gemma 3 270M on the
documents of ``benchmarks/handbook/``). Each sentence of a page's
description and summary was then judged by a person reading the whole document, by the rules in
``real_prose.md``, before looking at any checker's verdict (``real_prose_labels.jsonl``: TRUE,
FALSE or VAGUE, with one line of why). The set is for measuring, not for tuning the rules.

:func:`measure` checks each labelled page as a run does (:func:`~wiki_assets.engine.quality.
claims.check_prose`, its description and summary against its whole document) and counts, per
language: the precision of "supported" (true of those marked supported), false sentences caught
(contradicted or unsupported), false alarms (true sentences marked contradicted or unsupported)
and false sentences marked supported. A sentence said twice about a document (the compact
request's description is its summary's first sentence) counts once.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.real_prose_record import RECORDED, document_text
from wiki_assets.engine.documents.corpus import title_of
from wiki_assets.engine.quality.claims import check_prose
from wiki_assets.engine.quality.sentences import Support

LABELS = Path(__file__).with_name("real_prose_labels.jsonl")
FLAGGING = (Support.CONTRADICTED, Support.UNSUPPORTED)
LANGUAGES = {"English": "en", "Korean": "ko"}
HELD_OUT_ROUND = 4  # the first labelling round after the last change to the rules


@dataclass(frozen=True, slots=True)
class Labelled:
    corpus: str
    source: str
    language: str  # en or ko
    text: str
    label: str  # TRUE, FALSE or VAGUE
    status: Support
    says: str  # what the rules say the document says (contradicted), or why (unsupported)
    round: int = 1  # the labelling round (real_prose.md says which rules each one set)


def load_labels(path: Path = LABELS) -> dict[tuple[str, str], dict[str, str]]:
    labels: dict[tuple[str, str], dict[str, str]] = {}
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            labels[item["source"], item["text"]] = item
    return labels


def measure(answers: Path = RECORDED, labels: Path = LABELS) -> list[Labelled]:
    """Every labelled sentence of the recorded pages, with the rules' status."""
    known = load_labels(labels)
    found: list[Labelled] = []
    seen: set[tuple[str, str]] = set()  # a sentence said twice (on a page, or in two requests)
    for line in answers.read_text("utf-8").splitlines():
        page = json.loads(line)
        text = document_text(page["corpus"], page["source"])
        title = title_of(text, page["source"])
        checked = check_prose(page["description"], page["summary"], text, title)
        for sentence in checked.sentences:
            key = (page["source"], sentence.text)
            item = known.get(key)
            if item is None or key in seen:
                continue
            seen.add(key)
            language = LANGUAGES.get(page["language"], page["language"])
            found.append(Labelled(
                page["corpus"], page["source"], language, sentence.text, item["label"],
                sentence.status, sentence.document_says, int(item.get("round", 1)),
            ))  # fmt: skip
    return found


def figures(items: list[Labelled]) -> dict[str, float | int | None]:
    labels = Counter(item.label for item in items)
    supported = [item for item in items if item.status is Support.SUPPORTED]
    true_supported = sum(1 for item in supported if item.label == "TRUE")
    false_items = [item for item in items if item.label == "FALSE"]
    true_items = [item for item in items if item.label == "TRUE"]
    return {
        "sentences": len(items),
        "true": labels["TRUE"],
        "false": labels["FALSE"],
        "vague": labels["VAGUE"],
        "supported": len(supported),
        "supported_true": true_supported,
        "precision": true_supported / len(supported) if supported else None,
        "false_caught": sum(1 for item in false_items if item.status in FLAGGING),
        "false_supported": sum(1 for item in false_items if item.status is Support.SUPPORTED),
        "false_alarms": sum(1 for item in true_items if item.status in FLAGGING),
    }


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def report(show: bool = False) -> list[str]:
    """The section of ``python -m benchmarks.faithfulness`` on the labelled real prose."""
    items = measure()
    lines = ["## Real model prose, labelled by reading each document", ""]
    lines += [
        "| language | sentences | true | false | vague | marked supported | of them true "
        "| false caught | false marked supported | true marked contradicted/unsupported |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    held_out = [item for item in items if item.round >= HELD_OUT_ROUND]
    for name, part in (
        ("en", [item for item in items if item.language == "en"]),
        ("ko", [item for item in items if item.language == "ko"]),
        ("all", items),
        ("held out", held_out),
    ):
        f = figures(part)
        t, fl = int(f["true"] or 0), int(f["false"] or 0)
        sup, st = int(f["supported"] or 0), int(f["supported_true"] or 0)
        caught, alarms = int(f["false_caught"] or 0), int(f["false_alarms"] or 0)
        lines.append(
            f"| {name} | {f['sentences']} | {t} | {fl} | {f['vague']} | {sup} | "
            f"{st} ({_share(st, sup)}) | {caught} ({_share(caught, fl)}) | "
            f"{f['false_supported']} | {alarms} ({_share(alarms, t)}) |"
        )
    by_status = Counter((item.label, item.status.value) for item in items)
    lines += ["", "| label | supported | contradicted | unsupported | unchecked |"]
    lines += ["|---|---:|---:|---:|---:|"]
    for label in ("TRUE", "FALSE", "VAGUE"):
        cells = " | ".join(str(by_status[label, s.value]) for s in Support)
        lines.append(f"| {label} | {cells} |")
    lines += [
        "",
        "Targets: at least 90% of the sentences marked supported true; at most 5% of true "
        f"sentences marked contradicted or unsupported. *held out*: the sentences labelled after "
        f"the last change to the rules (round {HELD_OUT_ROUND} of real_prose_labels.jsonl), which "
        "no rule was chosen on.",
        "",
    ]
    if show:
        for item in items:
            wrong = (item.status is Support.SUPPORTED and item.label != "TRUE") or (
                item.status in FLAGGING and item.label == "TRUE"
            )
            if wrong:
                lines.append(f"- {item.source} [{item.label}] {item.status.value}: {item.text} "
                             f"({item.says})")  # fmt: skip
        lines.append("")
    return lines
