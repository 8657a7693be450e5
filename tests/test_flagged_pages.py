"""What a flagged page becomes (the ``flagged_pages`` dial), with real simulated models over HTTP:
``retry`` asks another model of the fleet once and keeps the better answer, ``keep`` publishes it
flagged, ``extract`` replaces it by the document's own title, headings and opening sentences."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
from conftest import SAMPLE, Workspace, summarizer_for

from wiki_assets.cli.runner import sync_then_ingest
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine import Corpus, Dials, Endpoint, Fleet, ingest
from wiki_assets.engine.dispatch import Job, WorkQueue
from wiki_assets.engine.documents.corpus import SourceDocument, title_of
from wiki_assets.engine.ingestion.figures import report_json
from wiki_assets.engine.ingestion.report import IngestReport
from wiki_assets.engine.quality.extractive_page import extract
from wiki_assets.engine.quality.extractive_page import opening as opening_alone
from wiki_assets.engine.quality.sentences import opening_line
from wiki_assets.engine.wiki.audit import front_matter, pages_of
from wiki_assets.engine.wiki.index import index_wiki
from wiki_assets.simulator import SimModel, SimServer

COLLECTIONS = ["people", "product"]  # 12 documents of real text, about 300 tokens each
# Their pages are real text of about 300 tokens: room for a whole page (1024: the faithful model
# quotes at length, and at 768 two Korean documents of the whole sample reach the cap).
DIALS = {"flush_seconds": 0.2, "workers_per_model": 2, "claim_size": 2, "max_tokens": 1024}


def fabricating() -> SimModel:
    return SimModel(model="fabricating", behaviour="fabricating", per_request_tps=5_000)


def faithful(**fields: object) -> SimModel:
    fields = {"per_request_tps": 5_000, **fields}
    return SimModel(model="faithful", behaviour="faithful", **fields)  # type: ignore[arg-type]


def sample(tmp_path: Path, documents: int | None) -> Path:
    """The sample's :data:`COLLECTIONS`, or only its first ``documents`` of them."""
    synced = tmp_path / "synced"
    for collection in COLLECTIONS:
        shutil.copytree(SAMPLE / collection, synced / collection)
    if documents is not None:
        for extra in sorted(p for p in synced.rglob("*") if p.is_file())[documents:]:
            extra.unlink()
    return synced


def run(
    tmp_path: Path,
    servers: list[SimServer],
    flagged_pages: str,
    documents: int | None = None,
    share: float = 1.0,
    **endpoint: object,
) -> tuple[IngestReport, dict[str, dict[str, object]]]:
    """Ingest the sample's collections; the report and each page's front matter by page."""
    report = ingest(
        corpus=Corpus(sample(tmp_path, documents), COLLECTIONS),
        wiki_root=tmp_path / "wiki",
        fleet=Fleet(
            [
                Endpoint(name=s.sim.model, base_url=s.base_url, model=s.sim.model, **endpoint)  # type: ignore[arg-type]
                for s in servers
            ]
        ),
        dials=Dials(flagged_pages=flagged_pages, second_opinion_share=share, **DIALS),  # type: ignore[arg-type]
    )
    pages = {
        page.relative_to(tmp_path / "wiki").as_posix(): front_matter(page.read_text("utf-8"))
        for page in pages_of(tmp_path / "wiki")
    }
    return report, pages


def stats(report: IngestReport) -> dict[str, object]:
    return {m.name: m for m in report.models}


def test_retry_has_the_faithful_model_answer_what_the_fabricating_one_got_wrong(
    workspace: Workspace, instance: dg.DagsterInstance
) -> None:
    # The default dial, through Dagster: the fabricating model's pages are asked again, of the
    # faithful model, whose answers are kept; nothing is left for review.
    assert IngestConfig().flagged_pages == "retry"
    dials = IngestConfig(**DIALS)  # type: ignore[arg-type]
    with SimServer(faithful()) as one, SimServer(fabricating()) as other:
        outcome = sync_then_ingest(instance, workspace.corpus, summarizer_for(one, other), dials)
        answered = one.snapshot().answered, other.snapshot().answered
    assert outcome.success, outcome.error
    metadata = outcome.metadata
    # Per model, docs counts the pages a model wrote: the fabricating model's answers were all
    # flagged and replaced, so none of its pages stands; its quality still shows in its figures.
    fabricated = metadata["model/sim1/flagged"]
    assert fabricated > 0 and metadata["model/sim1/docs"] == 0
    assert metadata["flagged"] == 0
    # Each of its answers got a second opinion from the faithful model, which was kept.
    assert metadata["second_opinions"] == metadata["second_opinions_kept"] == fabricated
    assert metadata["model/sim0/second_opinions"] == fabricated
    assert metadata["model/sim0/second_opinions_kept"] == fabricated
    assert metadata["model/sim1/second_opinions"] == 0
    # Every page is the faithful model's: its own documents and the others' second opinions.
    documents = len(workspace.documents())
    assert metadata["model/sim0/docs"] == documents
    assert answered[0] >= documents and answered[1] >= fabricated
    for page in pages_of(workspace.wiki):
        meta = front_matter(page.read_text(encoding="utf-8"))
        assert meta["model"] == "faithful" and meta["verdict"] == "ok", page
        assert meta["summarized"] is True
    index = (workspace.wiki / "index.md").read_text(encoding="utf-8")
    assert "## Needs review" not in index


def test_retry_counts_second_opinions_per_model(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad, SimServer(faithful()) as good:
        report, pages = run(tmp_path, [bad, good], "retry")
    by = stats(report)
    fabricated = by["fabricating"].flagged  # type: ignore[attr-defined]
    assert fabricated > 0 and by["fabricating"].tally.docs == 0  # type: ignore[attr-defined]
    assert report.count == len(pages) == 12
    assert report.tally.second_opinions == fabricated
    assert (
        by["faithful"].tally.second_opinions
        == by["faithful"].tally.second_opinions_kept
        == fabricated
    )  # type: ignore[attr-defined]
    assert by["fabricating"].tally.second_opinions == 0  # type: ignore[attr-defined]
    assert report.flagged == 0 and report.failed == [] and report.unfinished == 0
    assert report_json(report)["second_opinions"] == fabricated
    assert report_json(report)["models"]["faithful"]["second_opinions_kept"] == fabricated
    assert {meta["model"] for meta in pages.values()} == {"faithful"}


def test_second_opinion_share_bounds_the_requests_and_says_what_it_skipped(
    tmp_path: Path,
) -> None:
    # A quarter of 12 documents: at most 3 second opinions. The fabricating model's other flagged
    # pages stay flagged (published for review), counted as skipped for the budget.
    with SimServer(fabricating()) as bad, SimServer(faithful()) as good:
        report, pages = run(tmp_path, [bad, good], "retry", share=0.25)
    by = stats(report)
    flagged_first = by["fabricating"].flagged  # type: ignore[attr-defined]
    assert report.tally.second_opinions == 3 < flagged_first
    assert report.tally.second_opinions_skipped == {"budget": flagged_first - 3}
    assert report.flagged == flagged_first - report.second_opinions_kept
    left = [meta for meta in pages.values() if meta["verdict"] == "flagged"]
    assert len(left) == report.flagged and all(m["model"] == "fabricating" for m in left)
    assert report_json(report)["second_opinions_skipped"] == {"budget": flagged_first - 3}


def test_keep_leaves_the_fabricating_models_pages_flagged(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad, SimServer(faithful()) as good:
        report, pages = run(tmp_path, [bad, good], "keep")
    fabricated = stats(report)["fabricating"].tally.docs  # type: ignore[attr-defined]
    flagged = [name for name, meta in pages.items() if meta["verdict"] == "flagged"]
    assert fabricated > 0 and len(flagged) == fabricated == report.flagged
    assert all(pages[name]["model"] == "fabricating" for name in flagged)
    assert report.tally.second_opinions == 0 and report.count == 12


def test_extract_replaces_flagged_pages_by_the_documents_own_words(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad, SimServer(faithful()) as good:
        report, pages = run(tmp_path, [bad, good], "extract")
    fabricated = stats(report)["fabricating"].tally.docs  # type: ignore[attr-defined]
    extractive = {name: meta for name, meta in pages.items() if meta["summarized"] is False}
    assert fabricated > 0 and len(extractive) == fabricated == report.flagged
    assert report.tally.second_opinions == 0
    for name, meta in pages.items():
        if name not in extractive:
            assert meta["verdict"] == "ok" and meta["model"] == "faithful", name
    for name, meta in extractive.items():
        # The verdict and its reasons stay (Needs review lists why); nothing a model wrote shows.
        assert meta["verdict"] == "flagged" and "unverified_points" in meta["flags"], name
        assert meta["points_total"] == 0 and meta["tags"] == [] and meta["related"] == []
        text = (tmp_path / "wiki" / name).read_text(encoding="utf-8")
        assert "[!warning] Not summarized: the model's answer was flagged" in text
        document = (tmp_path / "synced" / str(meta["source"])).read_text(encoding="utf-8")
        taken = extract(document, title_of(document, str(meta["source"])))
        assert taken.opening and taken.opening.split()[0] in text
        assert all(f"- {heading}" in text for heading in taken.headings)
    # index.md lists them under Needs review, with their reasons.
    index_wiki(tmp_path / "wiki")
    index = (tmp_path / "wiki" / "index.md").read_text(encoding="utf-8")
    review = index.split("## Needs review", 1)[1].split("## By collection", 1)[0]
    assert all(f"({name})" in review for name in extractive)
    assert review.count("unverified_points") >= len(extractive)
    # By collection, each is listed with its opening's first sentence: no model wrote a
    # description of it, and the document's own first words say what it is.
    listed = index.split("## By collection", 1)[1].split("## By topic", 1)[0]
    for name, meta in extractive.items():
        document = (tmp_path / "synced" / str(meta["source"])).read_text(encoding="utf-8")
        first = opening_line(extract(document, title_of(document, str(meta["source"]))).opening)
        assert first and f"({name}) — {first}\n" in listed, name


def test_a_one_model_fleet_keeps_its_flagged_pages(tmp_path: Path) -> None:
    with SimServer(fabricating()) as bad:
        report, pages = run(tmp_path, [bad], "retry")
        answered = bad.snapshot().answered
    assert report.count == len(pages) == 12 == answered  # asked once per document, no more
    assert report.tally.second_opinions == 0 and report.flagged == 12
    assert all(meta["verdict"] == "flagged" for meta in pages.values())


def test_a_second_opinion_that_fails_leaves_the_first_answer(tmp_path: Path) -> None:
    # The faithful model answers its first documents (fast), then drops every connection: the
    # documents it held are put back (an outage) for the fabricating model, and a second opinion
    # it is asked fails, or is never sent once it is out of service (dropped at the end of the
    # run). The fabricating model's answers were journaled first: their pages stand, flagged.
    dying = faithful(die_after=1, per_request_tps=50_000, aggregate_tps=100_000)
    with SimServer(fabricating()) as bad, SimServer(dying) as broken:
        report, pages = run(tmp_path, [bad, broken], "retry", documents=4, max_retries=0)
    by = stats(report)
    assert report.count == len(pages) == 4 and report.failed == [] and report.unfinished == 0
    kept = by["faithful"].tally.docs  # type: ignore[attr-defined]
    assert kept >= 1 and by["faithful"].tally.errors >= 1  # type: ignore[attr-defined]
    assert report.second_opinions_answered == 0
    assert report.flagged == 4 - kept
    models = sorted(str(meta["model"]) for meta in pages.values())
    assert models == ["fabricating"] * (4 - kept) + ["faithful"] * kept


def test_a_second_opinion_waits_for_a_model_that_has_not_answered() -> None:
    document = SourceDocument("c/a.md", "c", 1, "hash")
    queue = WorkQueue(iter([]))
    job = Job(document, "c/a.md", done=True, answered_by={0})
    queue.ask_another(job)
    assert (job.second_opinion, job.done, queue.second_opinions()) == (True, False, 1)
    assert not queue.has_work(0) and queue.next_job(worker=1, claim_size=2, model=0) is None
    assert queue.has_work(1) and queue.next_job(worker=100_001, claim_size=2, model=1) is job
    queue.put_back(job)  # e.g. left to a faster model: it waits with the second opinions again
    assert queue.second_opinions() == 1 and queue.remaining() == 0  # never counted as unfinished


def test_an_extract_is_the_documents_headings_and_opening_sentences() -> None:
    text = (
        "---\nowner: hr\n---\n# Leave Policy\n\nEmployees get 20 days a year. They ask their\n"
        "manager first! Unused days expire? Only after March. More text.\n\n## Requests\n\n"
        "```\n# a comment, not a heading\n```\n## Carry-over\n"
    )
    taken = extract(text, "Leave Policy")
    assert taken.headings == ("Requests", "Carry-over")
    assert taken.opening == (
        "Employees get 20 days a year. They ask their manager first! Unused days expire?"
    )
    korean = extract("휴가 정책\n\n직원은 20일을 받는다. 먼저 요청한다. 셋째. 넷째.\n", "휴가 정책")
    assert korean.headings == ()
    assert korean.opening == "직원은 20일을 받는다. 먼저 요청한다. 셋째."
    # The opening alone, read only as far as it goes, is the same: in a long document too.
    long = text + "".join(
        f"\n## Part {n}\n\nA paragraph of sentences, number {n}.\n" for n in range(99)
    )
    for document, title in ((text, "Leave Policy"), (long, "Leave Policy"), (long, "")):
        assert opening_alone(document, title) == extract(document, title).opening


def test_an_extract_of_a_spreadsheet_reads_its_rows_as_sentences() -> None:
    """A sheet as the spreadsheet reader writes it: the header row and the row that gives the
    title are left out, each row is a sentence of its own (not the rows run together with their
    bars)."""
    text = (
        "## Sections\n| 구분 | 내용 |\n| 제목 | 업무용 노트북 교체 절차 |\n"
        "| 교체 대상 | 회사 노트북은 4년이 지나면 교체합니다. 수리비가 크면 그 전에 바꿉니다. |\n"
        "| 소요 기간 | 기본 모델은 5일 걸립니다. |\n"
    )
    taken = extract(text, "업무용 노트북 교체 절차")
    assert taken.opening == (
        "교체 대상: 회사 노트북은 4년이 지나면 교체합니다. 수리비가 크면 그 전에 바꿉니다. "
        "소요 기간: 기본 모델은 5일 걸립니다."
    )


@pytest.mark.parametrize(
    ("text", "opening"),
    [
        # A byline of fields, with or without stops, is not the opening.
        (
            "# Deploys\n\nOwner: Jonas Weber (Platform). Updated 2026-04-01.\n\n"
            "All services ship with one pipeline. Deploys happen Monday to Thursday.\n",
            "All services ship with one pipeline. Deploys happen Monday to Thursday.",
        ),
        (
            "# 복리후생 안내\n\n담당: 최민지 (피플팀) / 2026년 기준\n\n"
            "서울 오피스 직원의 복리후생을 정리했습니다.\n",
            "서울 오피스 직원의 복리후생을 정리했습니다.",
        ),
        (
            "# Outage\n\n**Severity:** SEV1\n**Author:** Park Ji-hoon\n\n## Summary\n\n"
            "On 11 March **HOS** returned errors.\n",
            "On 11 March HOS returned errors.",
        ),
        # Only a first paragraph is a byline: a later "label: text" is prose.
        (
            "Vendors\n\nData centers\n\nkr-sel-1 (Seoul): three zones. Remote hands 24/7.\n",
            "kr-sel-1 (Seoul): three zones. Remote hands 24/7.",
        ),
        # A heading of a PDF or a slide (a short line without a stop) stands alone and is left
        # out; the wrapped lines of a paragraph are joined.
        (
            "Expenses\nScope\nThis policy covers costs that employees pay personally, such as\n"
            "client travel.\n\nHow to claim\nSubmit each claim within 30 days.\n",
            "This policy covers costs that employees pay personally, such as client travel. "
            "Submit each claim within 30 days.",
        ),
        # A list item is a piece of its own, without its marker; one without a stop is left out.
        (
            "Levels\n\nDeclare the level first.\n\nSEV1\n- 10% of requests fail\n"
            "- Answer within 5 minutes.\n",
            "Declare the level first. Answer within 5 minutes.",
        ),
        # A document with no sentence at all still opens with what it has.
        (
            "Space\n\n- [Rooms](rooms.html)\n- [Desks](desks.html)\n",
            "[Rooms](rooms.html) [Desks](desks.html)",
        ),
    ],
)
def test_an_extract_opens_with_sentences_not_bylines_labels_or_fragments(
    text: str, opening: str
) -> None:
    title = text.splitlines()[0].lstrip("# ")
    assert extract(text, title).opening == opening
    assert opening_alone(text, title) == opening


def test_a_document_without_markdown_headings_has_its_short_lines_as_headings() -> None:
    pdf = "Expenses\nScope\nCosts paid personally.\n\nHow to claim\nSeverity: SEV1\nSubmit it.\n"
    assert extract(pdf, "Expenses").headings == ("Scope", "How to claim")  # not the field
    # Without blank lines between them (as a PDF's text may be), a heading still ends the
    # paragraph before it: the byline stays the first paragraph, the heading no sentence's part.
    dense = "Expenses\nOwner: Finance.\nScope\nCosts paid personally.\nLimits\nAt most 18.\n"
    taken = extract(dense, "Expenses")
    assert taken.headings == ("Scope", "Limits")
    assert taken.opening == "Costs paid personally. At most 18."
    markdown = "# Leave\n\nTeam Handbook\n\n## Requests\n\nAsk first.\n"
    assert extract(markdown, "Leave").headings == ("Requests",)  # its own headings only
