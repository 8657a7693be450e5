"""Every environment variable wiki_assets reads, and what it means: the only module that reads
the environment.

Each variable is read when its value is needed, not at import, so a change made before a run (a
test, a CLI flag, a deployment's secrets) is seen. Secrets (API keys, a state store URL with its
password) are returned to the one caller that uses them and never logged.

Dagster itself reads two more, named in ``deploy/postgres/dagster.yaml`` rather than here:
``DAGSTER_PG_URL`` (its storage) and ``WIKI_ASSETS_MAX_CONCURRENT_RUNS`` (its run queue).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SYNCED_ROOT = "WIKI_ASSETS_SYNCED_ROOT"
WIKI_ROOT = "WIKI_ASSETS_WIKI_ROOT"
SYNC_COMMAND = "WIKI_ASSETS_SYNC_COMMAND"
STATE_URL = "WIKI_ASSETS_STATE_URL"
CONFIG = "WIKI_ASSETS_CONFIG"
CRON = "WIKI_ASSETS_CRON"
COLLECTIONS_PER_RUN = "WIKI_ASSETS_COLLECTIONS_PER_RUN"
DIGEST_TIMEZONE = "WIKI_ASSETS_DIGEST_TIMEZONE"
DAGSTER_HOME = "DAGSTER_HOME"

DEFAULT_CRON = "0 6 * * *"
HELPER_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
"""Set for the link candidates helper process whatever the run's environment says: numpy's
OpenBLAS starts a thread per core when imported, which lengthens the helper's start (measured in
docs/benchmarks.md), and the helper never calls BLAS."""


def variable_name(value: str | None) -> str | None:
    """``value`` if it can name an environment variable (letters, digits and ``_``), or None: a
    config field that names where a secret is (``api_key_env``, ``state_url_env``,
    ``webhook_url_env``) must never hold the secret itself."""
    if value is not None and not value.replace("_", "").isalnum():
        raise ValueError("must be the name of an environment variable, not a key or a URL")
    return value


@contextmanager
def project_variables_unset() -> Iterator[None]:
    """For its duration, none of wiki_assets' own variables (``WIKI_ASSETS_*``) is set: what the
    defaults are without them (``python -m wiki_assets.docgen`` documents those)."""
    saved = {name: value for name, value in os.environ.items() if name.startswith("WIKI_ASSETS_")}
    for name in saved:
        del os.environ[name]
    try:
        yield
    finally:
        os.environ.update(saved)


def synced_root() -> str:
    """WIKI_ASSETS_SYNCED_ROOT: the folder the sources are mirrored into (default ``synced``)."""
    return os.environ.get(SYNCED_ROOT, "synced")


def wiki_root() -> str:
    """WIKI_ASSETS_WIKI_ROOT: the folder the wiki is written to (default ``wiki``)."""
    return os.environ.get(WIKI_ROOT, "wiki")


def sync_command() -> str | None:
    """WIKI_ASSETS_SYNC_COMMAND: the command that mirrors the sources before they are observed;
    unset or empty: none, sync only observes."""
    return os.environ.get(SYNC_COMMAND) or None


def state_url(variable: str = STATE_URL) -> str | None:
    """The ``postgresql://`` URL of the state that runs share, from ``variable`` (the corpus
    resource's ``state_url_env``, by default WIKI_ASSETS_STATE_URL); unset or empty: SQLite in the
    wiki's state folder. A secret: it may hold a password."""
    return os.environ.get(variable) or None


def api_key(variable: str) -> str | None:
    """The API key in ``variable`` (a model's ``api_key_env``); unset or empty: None. A secret."""
    return os.environ.get(variable) or None


def webhook_url(variable: str) -> str | None:
    """The incoming-webhook URL in ``variable`` (the digest's ``webhook_url_env``); unset or
    empty: None. A secret: whoever has it can post to the channel."""
    return os.environ.get(variable, "").strip() or None


def digest_timezone() -> str:
    """WIKI_ASSETS_DIGEST_TIMEZONE: the timezone whose calendar days the daily digest covers
    (an IANA name; default UTC)."""
    return os.environ.get(DIGEST_TIMEZONE, "").strip() or "UTC"


def config_file() -> str | None:
    """WIKI_ASSETS_CONFIG: the project file to read instead of ``wiki_assets.yaml`` in the working
    directory; unset or blank: that default."""
    return os.environ.get(CONFIG, "").strip() or None


def cron_schedule() -> str:
    """WIKI_ASSETS_CRON: when the daily sync-then-ingest schedule runs (default 06:00 daily)."""
    return os.environ.get(CRON, DEFAULT_CRON)


def collections_per_run() -> int | None:
    """WIKI_ASSETS_COLLECTIONS_PER_RUN: unset, a backfill is one run; N, runs of N collections."""
    value = os.environ.get(COLLECTIONS_PER_RUN, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{COLLECTIONS_PER_RUN} must be a positive integer: {value!r}")
    return int(value)


def dagster_home(default: Path) -> Path:
    """DAGSTER_HOME: Dagster's instance folder. When unset it is set to ``default`` (resolved), so
    that Dagster, which reads the variable itself, uses the same folder."""
    if not os.environ.get(DAGSTER_HOME):
        os.environ[DAGSTER_HOME] = str(default.resolve())
    return Path(os.environ[DAGSTER_HOME])


PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding ``wiki_assets/``: the engine's child processes (the link candidates helper,
the page writer) start there with ``python -m``, which puts it first on their path, so they import
the package this process did, installed or not."""


def helper_environment() -> dict[str, str]:
    """The environment of the link candidates helper process: this process's, with
    :data:`HELPER_THREADS`."""
    return dict(os.environ) | HELPER_THREADS


def ocr_environment() -> dict[str, str]:
    """The environment of a tesseract process: this process's, with one thread (the run's other
    work, and other pages, have the other cores)."""
    return dict(os.environ) | {"OMP_THREAD_LIMIT": "1"}
