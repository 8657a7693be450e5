"""The day's digest posted to a Slack-compatible incoming webhook (Block Kit).

The webhook's URL is a secret (whoever has it can post to the channel): it is passed in by the
one caller that read it from the environment, and never appears in a message, an error or a log
line; errors name the environment variable instead. Posting retries with exponential backoff on
429 (honouring Retry-After) and 5xx answers and on connection failures; any other answer, or the
last retry failing, raises :class:`DeliveryFailed`.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from wiki_assets.engine.digest.build import Digest, PageChange
from wiki_assets.engine.errors import WikiAssetsError

TOP_CHANGES = 10
"""Pages a message lists at most (added first, then changed, removed, flagged); the counts are
always complete."""

ATTEMPTS = 4
FIRST_DELAY_S = 1.0  # then 2, 4, ... s between attempts
MAX_DELAY_S = 30.0  # also the most a Retry-After is waited for
TIMEOUT_S = 10.0


class DeliveryFailed(WikiAssetsError):
    """The webhook did not take the message; the message says why, never the URL."""


@dataclass(frozen=True, slots=True)
class Delivery:
    attempts: int  # requests made, the last one accepted
    status: int


def _slack(text: str) -> str:
    """Text as Slack mrkdwn shows it literally (its three control characters escaped)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _page_link(change: PageChange, wiki_url: str | None, *, linked: bool = True) -> str:
    title = _slack(" ".join((change.title or change.page).split()))
    if wiki_url and linked:
        return f"<{wiki_url.rstrip('/')}/{quote(change.page)}|{title}>"
    return f"{title} (`{_slack(change.page)}`)"


def slack_message(
    digest: Digest, wiki_url: str | None = None, top: int = TOP_CHANGES
) -> dict[str, Any]:
    """The Block Kit message: a header, the day's counts, then its top changes, each linked to
    its page when ``wiki_url`` (where the wiki is served) is known, named otherwise."""
    day = digest.window.day.isoformat()
    counts = digest.counts()
    summary = ", ".join(f"{count} {kind}" for kind, count in counts.items())
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": f"Wiki digest {day}"}},
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{summary}*"}},
    ]
    if digest.empty:
        blocks.append(
            {"type": "section", "text": {"type": "mrkdwn", "text": "Nothing changed in the wiki."}}
        )
    lines: list[str] = []
    for change in digest.added:
        lines.append(f"• Added: {_page_link(change, wiki_url)}")
    for change in digest.changed:
        lines.append(f"• Changed: {_page_link(change, wiki_url)}")
    for change in digest.removed:
        lines.append(f"• Removed: {_page_link(change, wiki_url, linked=False)}")
    for change in digest.flagged:
        lines.append(
            f"• Flagged: {_page_link(change, wiki_url)}: {_slack(', '.join(change.flags))}"
        )
    if lines:
        shown = lines[:top]
        if len(lines) > top:
            shown.append(f"…and {len(lines) - top} more in the digest")
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(shown)}})
    return {"text": f"Wiki digest {day}: {summary}", "blocks": blocks}


def post(
    url: str,
    message: dict[str, Any],
    *,
    named: str,
    attempts: int = ATTEMPTS,
    first_delay_s: float = FIRST_DELAY_S,
    sleep: Callable[[float], None] = time.sleep,
) -> Delivery:
    """POST ``message`` as JSON to ``url``; ``named`` is how errors name the webhook (its
    environment variable)."""
    if urlsplit(url).scheme not in ("http", "https"):
        # Said without the value: a URL mistyped is still a secret.
        raise DeliveryFailed(f"webhook {named} does not hold an http(s) URL")
    body = json.dumps(message).encode("utf-8")
    problem = "not tried"
    for attempt in range(1, attempts + 1):
        request = urllib.request.Request(
            url, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        retry_after: float | None = None
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                return Delivery(attempt, response.status)
        except urllib.error.HTTPError as error:
            problem = f"HTTP {error.code}"
            if error.code != 429 and error.code < 500:
                raise DeliveryFailed(
                    f"webhook {named} refused the digest: {problem} (not retried)"
                ) from None
            retry_after = _seconds(error.headers.get("Retry-After"))
        except ValueError:  # http.client.InvalidURL and the like, whose message quotes the URL
            raise DeliveryFailed(f"webhook {named} does not hold a valid URL") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            # The reason (refused, timed out, no such host) never holds the URL itself.
            reason = getattr(error, "reason", None) or error
            problem = f"no answer ({getattr(reason, 'strerror', None) or type(reason).__name__})"
        if attempt < attempts:
            delay = first_delay_s * 2 ** (attempt - 1)
            sleep(min(MAX_DELAY_S, max(delay, retry_after or 0.0)))
    raise DeliveryFailed(
        f"webhook {named} did not take the digest after {attempts} attempts: last {problem}"
    )


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: the backoff's own delay applies
