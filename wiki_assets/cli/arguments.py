"""``wiki-assets``: the same sync-then-ingest as the daily schedule, run in-process through Dagster.

The deployment is configured in the project file (``wiki_assets.yaml``, or ``$WIKI_ASSETS_CONFIG``),
which the schedule and the UI read too. A ``--config`` file, in the same shape as the Dagster run
config, is a tuning run layered over it::

    resources:
      summarizer:
        config:
          models: [{name: vllm, base_url: "http://gpu1:8000/v1", model: Qwen/Qwen2.5-7B-Instruct}]
    ops:
      wiki_pages:
        config: {workers_per_model: 8, claim_size: 16}
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from wiki_assets.cli import commands

if TYPE_CHECKING:
    Subcommands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

INGEST_DESCRIPTION = """\
Run the sync command (if the project file has one), then summarize every document that is new
or changed since its page was written, on every configured model at once, write the pages and
rebuild index.md. A page is redone only when its document changed, or the prompt or a setting
that shapes pages (to redo pages anyway, see below). What an earlier run left unfinished (a full
disk, a kill) is finished first: pages it did not write, index.md and catalog.jsonl, asking a
model only for documents it got no answer for."""

INGEST_REDO = """\
redo pages:
  To redo pages whose documents did not change (a better model, a better prompt), give a
  --config file that asks for it. Every page:

    # redo.yaml
    ops:
      wiki_pages:
        config:
          force: true

  Only the pages some models wrote (each page's front matter names its model):

    ops:
      wiki_pages:
        config:
          redo_models: [Qwen/Qwen2.5-7B-Instruct, smollm2-135m-instruct]

  then: wiki-assets ingest --config redo.yaml
  (wiki-assets plan --config redo.yaml lists first what would be redone; calls no model)"""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _configure_logging()
    return _run(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wiki-assets",
        description="The same sync-then-ingest as the daily schedule, run in-process through "
        "Dagster; and the wiki's plan, run history, checks and digest.",
    )
    subcommands = parser.add_subparsers(dest="command", required=True)
    _add_ingest(subcommands)
    _add_plan(subcommands)
    _add_runs(subcommands)
    _add_check(subcommands)
    _add_digest(subcommands)
    return parser


def _add_roots(command: argparse.ArgumentParser, *, synced: bool = True) -> None:
    """The roots a command reads: ``--synced`` (where it has one) and ``--wiki``."""
    if synced:
        command.add_argument("--synced", type=Path, help="synced root (default: synced/)")
    command.add_argument("--wiki", type=Path, help="wiki root (default: wiki/)")


def _add_ingest(subcommands: Subcommands) -> None:
    ingest = subcommands.add_parser(
        "ingest",
        help="sync the synced root, then summarize every new or changed document",
        description=INGEST_DESCRIPTION,
        epilog=INGEST_REDO,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_roots(ingest)
    ingest.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a YAML file of settings for this run only (models, how many requests at once, "
        "which pages to redo: see below), over the project file (wiki_assets.yaml or "
        "$WIKI_ASSETS_CONFIG)",
    )
    ingest.add_argument("--json", action="store_true", help="print one JSON summary on stdout")


def _add_plan(subcommands: Subcommands) -> None:
    plan = subcommands.add_parser(
        "plan",
        help="dry run: what ingest would summarize and why, and an estimate; calls no model",
        description="Per collection: documents ingest would summarize and why (new, changed, "
        "prompt version, dials, model, earlier failure, forced), pages it would remove, and an "
        "estimate of tokens and time from the fleet's rates recorded in $DAGSTER_HOME. Runs no "
        "sync command and writes nothing.",
    )
    _add_roots(plan)
    plan.add_argument("--config", type=Path, help="YAML run config layered over the project file")
    plan.add_argument("--json", action="store_true", help="print the plan as one JSON object")


def _add_runs(subcommands: Subcommands) -> None:
    runs = subcommands.add_parser(
        "runs",
        help="compare past wiki_pages runs: dials, models, counts and docs/s, one row per run",
        description="One row per run that materialized wiki_pages, read from $DAGSTER_HOME (or "
        "./dagster_home): the most recent --limit runs, ordered by --sort. By default the "
        "columns runs are compared by, in 100 characters: when, run, docs (summarized), "
        "seconds, docs/s, workers (per model, or auto), claim, status (ok, N failed documents, "
        "N models out of service, "
        "or the run's status when it did not succeed) and models (each one's docs/s). --wide "
        "shows every column, each dial and figure under its own name.",
    )
    runs.add_argument("--partition", metavar="KEY", help="only runs that materialized KEY")
    runs.add_argument(
        "--sort",
        metavar="COLUMN",
        default="time",
        help="column to order by: a column of --wide or a header of the default view "
        "(default: time)",
    )
    runs.add_argument("--desc", action="store_true", help="order descending")
    runs.add_argument(
        "--limit",
        metavar="N",
        type=int,
        default=20,
        help="the N most recent runs (default: 20; 0: all)",
    )
    runs.add_argument(
        "--wide", action="store_true", help="every column (wider than most terminals)"
    )
    runs.add_argument(
        "--compare",
        action="store_true",
        help="the runs side by side, newest first: docs/s overall and per model, the flagged "
        "share, what went wrong and only the dials that differ between them (the others said "
        "once below); the view the UI shows as each run's `runs` table",
    )
    runs.add_argument("--json", action="store_true", help="print the rows as a JSON list")


def _add_check(subcommands: Subcommands) -> None:
    check = subcommands.add_parser(
        "check",
        help="check the wiki as readers see it (links, index, freshness, failed documents); "
        "exits 1 when a check of severity error fails",
        description="The checks Dagster runs on wiki_index and wiki_pages, over the whole wiki: "
        "a table of checks, then every problem found. Errors (a dangling link, a page missing "
        "from index.md) exit 1; warnings (a page older than its source, a failed document) "
        "exit 0. Reads only; runs no model.",
    )
    _add_roots(check)
    check.add_argument(
        "--max-flagged-share",
        type=float,
        metavar="SHARE",
        help="flagged_share warns past this share of flagged pages (default: 0.2)",
    )
    check.add_argument("--json", action="store_true", help="print the checks as one JSON object")


def _add_digest(subcommands: Subcommands) -> None:
    digest = subcommands.add_parser(
        "digest",
        help="write one day's digest (wiki/digest/YYYY-MM-DD.md and .json) from the history",
        description="What the wiki's pages went through on --day (added, changed, removed, "
        "flagged), from the state store's history, written without Dagster and posted nowhere. "
        "The timezone is the project file's resources.digest.config.timezone (or "
        "WIKI_ASSETS_DIGEST_TIMEZONE, default UTC) unless --timezone is given.",
    )
    digest.add_argument("--day", required=True, metavar="YYYY-MM-DD", help="the day to digest")
    _add_roots(digest, synced=False)
    digest.add_argument("--timezone", metavar="NAME", help="IANA timezone of the day")
    digest.add_argument("--json", action="store_true", help="print the digest's JSON on stdout")


def _run(args: argparse.Namespace) -> int:
    """The command ``args`` name, with its arguments (:mod:`.commands`)."""
    if args.command == "digest":
        return commands.run_digest(args.day, args.wiki, args.timezone, as_json=args.json)
    if args.command == "runs":
        return commands.run_runs(
            args.partition,
            args.sort,
            args.desc,
            args.limit,
            as_json=args.json,
            wide=args.wide,
            compare=args.compare,
        )
    if args.command == "check":
        return commands.run_check(args.synced, args.wiki, args.max_flagged_share, as_json=args.json)
    if args.command == "plan":
        return commands.run_plan(args.synced, args.wiki, args.config, as_json=args.json)
    return commands.run_ingest(args.synced, args.wiki, args.config, as_json=args.json)


def _configure_logging() -> None:
    from wiki_assets.defs.loggers import aligned_handler

    logger = logging.getLogger("wiki_assets")
    if not logger.handlers:
        logger.addHandler(aligned_handler())
        logger.setLevel(logging.INFO)
        logger.propagate = False
