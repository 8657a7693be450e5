"""The aligned ``timestamp  LEVEL  message`` format, for Dagster's console and the CLI alike: the
console logger of the definitions, and the run config that names it (:data:`LOGGERS`)."""

from __future__ import annotations

import logging
import sys
from typing import Any

import dagster as dg

FORMAT = "%(asctime)s  %(levelname)-7s  %(message)s"
DATE_FORMAT = "%Y-%m-%d %H:%M:%S"


class AlignedFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(FORMAT, DATE_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        # Dagster prefixes user messages with job, run id and step; keep only what was logged.
        meta = getattr(record, "dagster_meta", None)
        if isinstance(meta, dict) and meta.get("orig_message"):
            record = logging.makeLogRecord(
                {**record.__dict__, "msg": meta["orig_message"], "args": ()}
            )
        return super().format(record)


# Dagster's own follow-on lines of a failure: the step's failure, the steps skipped after it and
# the run's failure repeat what the step already logged (and the CLI's last line says again); on
# the console they would bury one reason under a block of ERROR lines. The UI's event log keeps
# them all.
FOLLOW_ON_EVENTS = frozenset({"STEP_FAILURE", "STEP_SKIPPED", "RUN_FAILURE", "PIPELINE_FAILURE"})
FOLLOW_ON_LINES = ("Dependencies for step ", "Execution of run for ")


class FollowOnFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        meta = getattr(record, "dagster_meta", None)
        if not isinstance(meta, dict):
            return True
        event = meta.get("dagster_event")
        if getattr(event, "event_type_value", None) in FOLLOW_ON_EVENTS:
            return False
        message = str(meta.get("orig_message") or "")
        return not message.startswith(FOLLOW_ON_LINES)


def aligned_handler(stream: object = None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stderr)  # type: ignore[arg-type]
    handler.setFormatter(AlignedFormatter())
    return handler


@dg.logger(
    config_schema={"log_level": dg.Field(str, is_required=False, default_value="INFO")},
    description="Console logger with aligned 'timestamp  LEVEL  message' lines.",
)
def aligned_console_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    level = init_context.logger_config["log_level"]
    logger = logging.Logger("wiki_assets.dagster", level=logging.getLevelName(level.upper()))
    handler = aligned_handler()
    handler.addFilter(FollowOnFailures())
    logger.addHandler(handler)
    return logger


# The aligned console logger, in a run's config (Dagster only uses a job's loggers when the run
# config names them): what the schedule's runs and the CLI's carry.
LOGGERS: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
