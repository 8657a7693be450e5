"""The run config of ``wiki_verification`` (``ops.wiki_verification.config``): the pass's budget
and its judge, their defaults the project file's."""

import dagster as dg  # no `from __future__ import annotations`: Dagster reads the annotations
from pydantic import Field


class VerifyConfig(dg.Config):
    """The verification pass: how many pages it may send to a judge, and which model judges."""

    budget_pages: int = Field(
        default=200,
        ge=0,
        description="Pages whose unchecked sentences the pass sends to a judge, at most (one "
        "request each, the pages with the most unchecked sentences first); 0 turns it off.",
    )
    judge: str = Field(
        default="",
        description="The model that judges (its name in the fleet, or its model id); '' lets "
        "any model judge the pages it did not write.",
    )
