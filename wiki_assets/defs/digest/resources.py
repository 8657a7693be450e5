"""The digest's resource: where its days begin and end, and the optional chat delivery."""

from datetime import date
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import Field, field_validator

from wiki_assets.engine import environment
from wiki_assets.engine.config import OptionalVariableName
from wiki_assets.engine.digest.webhook import ATTEMPTS, TOP_CHANGES

DEFAULT_START_DATE = "2026-01-01"


class DigestResource(dg.ConfigurableResource):
    """Where the digest's days begin and end, and the optional chat delivery."""

    timezone: str = Field(
        default_factory=environment.digest_timezone,
        description="IANA timezone whose calendar days the digest covers, e.g. Europe/Berlin "
        "(env WIKI_ASSETS_DIGEST_TIMEZONE, default UTC). It shapes the partitions: set it in "
        "the project file, not per run.",
    )
    start_date: str = Field(
        default=DEFAULT_START_DATE, description="The first day with a partition (YYYY-MM-DD)."
    )
    webhook_url_env: OptionalVariableName = Field(
        default=None,
        description="Name of the environment variable holding a Slack-compatible incoming "
        "webhook URL (never the URL itself). Unset: no message is posted.",
    )
    wiki_url: str | None = Field(
        default=None,
        description="Where the wiki is served (e.g. https://wiki.example.com/team), so the "
        "message's page names are links; unset: plain page names.",
    )
    webhook_attempts: int = Field(
        default=ATTEMPTS,
        ge=1,
        description="Posts tried at most on 429, 5xx or no answer, with exponential backoff "
        "(1 s, 2 s, 4 s, ...; a Retry-After is honoured up to 30 s).",
    )
    top_changes: int = Field(
        default=TOP_CHANGES, ge=1, description="Pages the message lists at most."
    )

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r} (an IANA name such as UTC)") from None
        return value

    @field_validator("start_date")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        date.fromisoformat(value)
        return value

    def partitions(self) -> dg.DailyPartitionsDefinition:
        # end_offset=1: today is a partition already, so the digest can follow today's ingest
        # (its file is rewritten when the day sees another ingest).
        return dg.DailyPartitionsDefinition(
            start_date=self.start_date, timezone=self.timezone, end_offset=1
        )
