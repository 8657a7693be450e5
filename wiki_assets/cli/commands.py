"""What each ``wiki-assets`` command does (:mod:`.arguments` reads the command line):
``plan``, ``digest``, ``check``, ``ingest`` and ``runs``, each from the project file with
--config over it. Dagster and the engine are imported when a command runs, not when the command
line is read, so that ``--help`` stays fast."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wiki_assets.defs.settings import Settings

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_DOCUMENTS_FAILED = 2
EXIT_CHECK_FAILED = 1  # `check`: a check of severity error failed (warnings alone exit 0)


def _settings(
    synced: Path | None, wiki: Path | None, config: Path | None, as_json: bool
) -> Settings | None:
    """The project file, then --config over it, then --synced and --wiki over both; a mistake is
    logged as one line (and printed as JSON with --json)."""
    from wiki_assets.engine import environment
    from wiki_assets.engine.errors import ConfigurationError  # here, not at import: see below

    flags = {"synced_root": synced, "wiki_root": wiki}
    try:
        # Dagster is imported here, not at module import, so `--help` stays fast.
        from wiki_assets.defs.settings import load_settings

        settings = load_settings(
            config, {key: str(value) for key, value in flags.items() if value is not None}
        )
        # The environment variable the definitions read when they load, checked here too: a bad
        # value is a ValueError with its own one-line message, like a ConfigError (a
        # ConfigurationError), not a code location that fails to load.
        environment.collections_per_run()
        return settings
    except (ConfigurationError, ValueError) as error:
        logging.getLogger("wiki_assets").error(str(error))
        if as_json:
            print(json.dumps(_failed_to_start(str(error))))
        return None


def _settings_with_synced_root(
    synced: Path | None, wiki: Path | None, config: Path | None, as_json: bool
) -> Settings | None:
    """:func:`_settings`, whose synced root must be a folder (a run reads it)."""
    settings = _settings(synced, wiki, config, as_json)
    if settings is not None and not settings.corpus.synced_path.is_dir():
        logging.getLogger("wiki_assets").error(
            f"synced root {settings.corpus.synced_path} is not a folder"
        )
        return None
    return settings


def run_plan(
    synced: Path | None, wiki: Path | None, config: Path | None, *, as_json: bool = False
) -> int:
    log = logging.getLogger("wiki_assets")
    settings = _settings_with_synced_root(synced, wiki, config, as_json)
    if settings is None:
        return EXIT_RUN_FAILED
    home = _dagster_home()
    import dagster as dg

    from wiki_assets.cli.plan import (
        dry_run,
        embedding_plan,
        fleet_probe,
        ignored_line,
        plan_json,
    )
    from wiki_assets.defs.sync.plan import Estimate, plan_lines, recorded_rates
    from wiki_assets.engine.documents.ignore import Ignored
    from wiki_assets.engine.state.store import StateUnavailable
    from wiki_assets.engine.wiki.index import unfinished

    try:
        ignored: list[Ignored] = []
        states = dry_run(settings.corpus, settings.summarizer, settings.dials, ignored)
        # What the index build finishes, as the files show it (ingest also asks Dagster).
        left = unfinished(settings.corpus.wiki_path, settings.corpus.state_store()) or []
        probes = fleet_probe(settings.summarizer)
        documents = sum(state.to_summarize for state in states)
        if home.is_dir():
            with dg.DagsterInstance.get() as instance:
                estimate = recorded_rates(instance, settings.summarizer, documents)
                embedding = embedding_plan(settings.corpus, settings.summarizer, states, instance)
        else:  # no instance, so no recorded rates
            fleet = settings.summarizer.planned_endpoints()
            estimate = Estimate(documents, unknown=[endpoint.name for endpoint in fleet])
            embedding = embedding_plan(settings.corpus, settings.summarizer, states, None)
    except StateUnavailable as error:
        log.error(str(error))
        return EXIT_RUN_FAILED
    if as_json:
        found = {**plan_json(states, estimate), "unfinished": left,
                 "embeddings": embedding.to_dict(), "models": probes.to_dict(),
                 "ignored": [{"path": i.path, "rule": i.rule} for i in ignored]}  # fmt: skip
        print(json.dumps(found, ensure_ascii=False, indent=2))
    else:
        unfinished_line = [f"plan: the index build finishes {'; '.join(left)}"] if left else []
        embedding_line = [line] if (line := embedding.line()) else []
        ignored_lines = [line] if (line := ignored_line(ignored)) else []
        lines = [*plan_lines(states), *ignored_lines, *embedding_line, *unfinished_line,
                 probes.line()]  # fmt: skip
        for line in [*lines, estimate.line()]:
            print(line)
    return EXIT_OK


def run_digest(day: str, wiki: Path | None, timezone: str | None, *, as_json: bool = False) -> int:
    from datetime import date
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    log = logging.getLogger("wiki_assets")
    try:
        when = date.fromisoformat(day)
    except ValueError:
        log.error(f"--day {day}: not a date (YYYY-MM-DD)")
        return EXIT_RUN_FAILED
    settings = _settings(None, wiki, None, as_json)
    if settings is None:
        return EXIT_RUN_FAILED
    zone = timezone or settings.digest.timezone
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        log.error(f"--timezone {zone}: unknown timezone (an IANA name such as UTC)")
        return EXIT_RUN_FAILED
    from wiki_assets.engine.digest import write_digest
    from wiki_assets.engine.digest.render import render_json
    from wiki_assets.engine.state.store import StateUnavailable

    corpus = settings.corpus
    try:
        files = write_digest(corpus.wiki_path, when, zone, corpus.state_store())
    except StateUnavailable as error:
        log.error(str(error))
        return EXIT_RUN_FAILED
    if as_json:
        print(render_json(files.digest), end="")
    else:
        counts = " · ".join(f"{count} {kind}" for kind, count in files.digest.counts().items())
        log.info(f"digest {when} ({zone}): {counts} → {corpus.wiki_path / files.markdown}")
    return EXIT_OK


def run_check(
    synced: Path | None,
    wiki: Path | None,
    max_flagged_share: float | None = None,
    *,
    as_json: bool = False,
) -> int:
    log = logging.getLogger("wiki_assets")
    if max_flagged_share is not None and not 0 <= max_flagged_share <= 1:
        log.error(f"--max-flagged-share {max_flagged_share}: must be between 0 and 1")
        return EXIT_RUN_FAILED
    settings = _settings(synced, wiki, None, as_json)
    if settings is None:
        return EXIT_RUN_FAILED
    corpus = settings.corpus
    if not corpus.wiki_path.is_dir():
        log.error(f"wiki root {corpus.wiki_path} is not a folder")
        return EXIT_RUN_FAILED
    from wiki_assets.cli.text import audit_table, table_text
    from wiki_assets.engine.state.store import StateUnavailable
    from wiki_assets.engine.wiki.audit import MAX_FLAGGED_SHARE, audit_wiki

    synced_root = corpus.synced_path if corpus.synced_path.is_dir() else None
    try:
        audit = audit_wiki(
            corpus.wiki_path,
            synced_root,
            corpus.state_store(),
            max_flagged_share=MAX_FLAGGED_SHARE if max_flagged_share is None else max_flagged_share,
        )
    except StateUnavailable as error:
        log.error(str(error))
        return EXIT_RUN_FAILED
    if as_json:
        checks = [
            {
                "check": outcome.check.name,
                "severity": str(outcome.check.severity),
                "checked": outcome.checked,
                "passed": outcome.passed,
                "share": outcome.share,
                "findings": list(outcome.findings),
            }
            for outcome in audit.outcomes
        ]
        print(json.dumps({"success": not audit.errors, "pages": audit.pages, "checks": checks},
                         ensure_ascii=False, indent=2))  # fmt: skip
    else:
        print(f"{audit.pages} pages in {corpus.wiki_path}")
        print(table_text(audit_table(audit)))
        for outcome in audit.outcomes:
            if outcome.findings:
                print(f"\n{outcome.check.name} ({outcome.check.severity}):")
                print("\n".join(f"  {finding}" for finding in outcome.findings))
    return EXIT_CHECK_FAILED if audit.errors else EXIT_OK


def run_ingest(
    synced: Path | None, wiki: Path | None, config: Path | None, *, as_json: bool = False
) -> int:
    log = logging.getLogger("wiki_assets")
    settings = _settings_with_synced_root(synced, wiki, config, as_json)
    if settings is None:
        return EXIT_RUN_FAILED
    corpus, summarizer, dials = settings.corpus, settings.summarizer, settings.dials
    from wiki_assets.cli.runner import sync_then_ingest
    from wiki_assets.engine.ingestion.figures import FAILED

    home = _dagster_home()
    if not home.is_dir():
        log.error(f"DAGSTER_HOME {home} is not a folder; create it or unset DAGSTER_HOME")
        return EXIT_RUN_FAILED
    import dagster as dg

    from wiki_assets.defs.sync import SyncFailed
    from wiki_assets.engine.errors import no_space_message
    from wiki_assets.engine.state.store import StateUnavailable

    try:
        outcome = sync_then_ingest(
            dg.DagsterInstance.get(), corpus, summarizer, dials, log=log,
            config_source=settings.source, verification=settings.verification,
        )  # fmt: skip
    except Exception as error:
        # A full disk before the run (sync reads and records in the state store) is named like
        # one during it; anything else unexpected is a bug, shown whole.
        said = no_space_message(error, corpus.wiki_path)
        if said is None and not isinstance(error, SyncFailed | StateUnavailable):
            raise
        said = said or str(error)
        log.error(said)
        if as_json:
            print(json.dumps(_failed_to_start(said)))
        return EXIT_RUN_FAILED
    if outcome.error and not outcome.stopped_by:
        log.error(f"run {outcome.run_id} failed: {outcome.error}")
    summary = outcome.summary()
    if as_json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
    if outcome.stopped_by:
        # Stopped cleanly by a signal (the engine logged what was done and what is left): the
        # shell's code for that signal, 143 for SIGTERM and 130 for SIGINT.
        from wiki_assets.engine.ingestion.signals import exit_code

        return exit_code(outcome.stopped_by)
    if not outcome.success:
        return EXIT_RUN_FAILED
    return EXIT_DOCUMENTS_FAILED if summary[FAILED.name] else EXIT_OK


def _failed_to_start(error: str) -> dict[str, object]:
    """The CLI's JSON of an ingest that never started: the error, no document failed."""
    from wiki_assets.engine.ingestion.figures import FAILED

    return {"success": False, "error": error, FAILED.name: []}


def run_runs(
    partition: str | None,
    sort: str,
    descending: bool,
    limit: int,
    *,
    as_json: bool = False,
    wide: bool = False,
    compare: bool = False,
) -> int:
    log = logging.getLogger("wiki_assets")
    home = _dagster_home()
    if not home.is_dir():
        log.error(f"DAGSTER_HOME {home} is not a folder; create it or unset DAGSTER_HOME")
        return EXIT_RUN_FAILED
    import dagster as dg

    from wiki_assets.cli.history import COLUMNS, compared_runs, runs_table
    from wiki_assets.cli.text import SORT_NAMES, compare_text, to_json, to_text

    if sort not in COLUMNS and sort not in SORT_NAMES:
        log.error(f"--sort {sort}: not a column; one of {', '.join(COLUMNS)}")
        return EXIT_RUN_FAILED
    sort = SORT_NAMES.get(sort, sort)
    if limit < 0:
        log.error(f"--limit {limit}: must be 0 (all runs) or more")
        return EXIT_RUN_FAILED
    with dg.DagsterInstance.get() as instance:
        if compare:
            compared = compared_runs(instance, partition, limit or None)
        else:
            table = runs_table(
                instance, partition=partition, sort=sort, descending=descending, limit=limit or None
            )
    if compare:
        print(compare_text(compared, as_json=as_json))
    elif as_json:
        print(to_json(table))
    elif table.is_empty():
        which = f" of partition {partition}" if partition is not None else ""
        print(f"no wiki_pages materializations{which} in {home}")
    else:
        print(to_text(table, wide=wide))
    return EXIT_OK


def _dagster_home() -> Path:
    """$DAGSTER_HOME, or the project's dagster_home/ (in the working directory) when it is unset."""
    from wiki_assets.engine import environment

    return environment.dagster_home(Path("dagster_home"))
