"""The aligned ``timestamp  LEVEL  message`` format, for Dagster's console and the CLI alike."""

from __future__ import annotations

import logging
import sys

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
    logger.addHandler(aligned_handler())
    return logger
