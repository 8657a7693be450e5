"""The servers a run started, recorded in the wiki's state folder while they run, so that a later
run stops any that a killed run left behind.

A server is tied to its run's life (:mod:`wiki_assets.engine.lifeline`), so a leftover takes a
failure of that tie (a run of an older version, a host without ``prctl``). Each server the run
starts is one file, ``<state folder>/servers/<host>-<pid>.json``: the host and its boot, the
process's id, its start time and its command line, and the run's process id; the file goes when
the run stops the server. At its start a run stops a recorded process only when all of it still
holds: the same host and boot, a process of that id with the same start time and the very same
command line (never a process found by its name), and a parent that is no longer the run that
started it. Records of a live run, or of another host sharing the wiki, are left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

RECORDS_DIR = "servers"
STOP_WAIT_S = 5.0  # for a leftover's process group to exit after SIGTERM, before SIGKILL


@dataclass(frozen=True)
class Seen:
    """A process as ``/proc`` shows it."""

    pid: int
    parent: int
    group: int
    started: int  # clock ticks after boot: a pid used again has another
    command: tuple[str, ...]


def seen(pid: int) -> Seen | None:
    """The process ``pid`` now, or None if there is none (or it is a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return None
    command = tuple(os.fsdecode(part) for part in raw.split(b"\0")[:-1])
    return Seen(pid, int(fields[1]), int(fields[2]), int(fields[19]), command)


def _boot() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


class ServerRecords:
    """The records of the servers the runs of one wiki started (in its state folder)."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / RECORDS_DIR
        self.host = socket.gethostname()

    def add(self, pid: int, label: str) -> Path | None:
        """Record the server ``pid`` (a child of this process) as it is now; None when there is
        nothing to record (it is already gone, or the folder cannot be written)."""
        process = seen(pid)
        if process is None:
            return None
        record = {
            "host": self.host,
            "boot": _boot(),
            "pid": pid,
            "started": process.started,
            "command": list(process.command),
            "run": os.getpid(),
            "label": label,
        }
        path = self.folder / f"{self.host}-{pid}.json"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            temporary.write_text(json.dumps(record), encoding="utf-8")
            temporary.replace(path)
        except OSError:
            return None
        return path

    @staticmethod
    def remove(path: Path | None) -> None:
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def stop_leftovers(self) -> list[str]:
        """Stop every recorded server of this host that a run which is gone left running (see
        the module's docstring), and forget the records of processes that are gone: a line per
        server stopped."""
        stopped = []
        boot = _boot()
        for path in sorted(self.folder.glob(f"{self.host}-*.json")):
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # being written, or not one of ours: left alone
            if record.get("boot") != boot:
                self.remove(path)  # a previous boot's: none of its processes is left
                continue
            process = seen(int(record["pid"]))
            if process is None or process.started != record["started"]:
                self.remove(path)  # gone (its id may be another process's now)
                continue
            if process.command != tuple(record["command"]) or process.parent == record["run"]:
                continue  # not the process recorded, or its run is still there
            self._stop_group(process)
            stopped.append(
                f"{record.get('label', 'a server')} (pid {process.pid}) left running by a run "
                f"that is gone (pid {record['run']}): stopped"
            )
            self.remove(path)
        return stopped

    @staticmethod
    def _stop_group(process: Seen) -> None:
        """SIGTERM to the process and its group when it leads one (a server and what it
        started), SIGKILL after :data:`STOP_WAIT_S`."""
        leads = process.group == process.pid

        def send(number: int) -> None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if leads:
                    os.killpg(process.pid, number)
                else:
                    os.kill(process.pid, number)

        send(signal.SIGTERM)
        deadline = time.monotonic() + STOP_WAIT_S
        while time.monotonic() < deadline:
            now = seen(process.pid)
            if now is None or now.started != process.started:
                return
            time.sleep(0.1)
        send(signal.SIGKILL)
