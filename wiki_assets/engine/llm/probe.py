"""Whether each endpoint of a fleet answers: one ``GET /models`` each, all at once, with a short
timeout and no retries, for ``wiki-assets plan`` (which must say which models a run could not
reach before the run finds out).

Any HTTP answer but a refused key means the server is there: a gateway that does not list its
models (404) still serves them. The key is read from the environment as a run reads it; a
missing variable is the probe's answer, never the key itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import openai

from wiki_assets.engine.config import EmbeddingsEndpoint, Endpoint
from wiki_assets.engine.errors import ConfigurationError
from wiki_assets.engine.llm.chat import PLATFORM_HEADERS
from wiki_assets.engine.llm.response import error_reason

PROBE_TIMEOUT_S = 3.0  # a server on the network answers a listing in well under a second
KEY_REFUSED = (401, 403)


@dataclass(frozen=True)
class Probe:
    """One endpoint's answer: ``problem`` is None when it answered, else why it did not."""

    name: str
    base_url: str
    problem: str | None

    @property
    def reachable(self) -> bool:
        return self.problem is None


def probe(
    endpoints: Sequence[Endpoint | EmbeddingsEndpoint], timeout_s: float = PROBE_TIMEOUT_S
) -> list[Probe]:
    """Ask every endpoint once, in parallel; answers in the endpoints' order."""
    if not endpoints:
        return []
    with ThreadPoolExecutor(max_workers=len(endpoints)) as pool:
        return list(pool.map(lambda endpoint: _probe(endpoint, timeout_s), endpoints))


def _probe(endpoint: Endpoint | EmbeddingsEndpoint, timeout_s: float) -> Probe:
    try:
        problem = _ask(endpoint, timeout_s)
    except ConfigurationError as error:
        problem = str(error)
    return Probe(endpoint.name, endpoint.base_url, problem)


def _ask(endpoint: Endpoint | EmbeddingsEndpoint, timeout_s: float) -> str | None:
    key = endpoint.api_key()
    headers = {name: openai.Omit() for name in PLATFORM_HEADERS}
    with openai.OpenAI(
        base_url=endpoint.base_url, api_key=key, timeout=timeout_s, max_retries=0
    ) as client:
        try:
            client.get("/models", cast_to=object, options={"headers": headers})
        except openai.APIStatusError as error:
            if error.status_code in KEY_REFUSED:
                return f"answers, but refuses the key (HTTP {error.status_code})"
            return None  # it answered: the server is there
        except openai.APIError as error:
            return error_reason(error)
        except ValueError:
            return None  # an answer that is not JSON is still an answer
    return None


__all__ = ["PROBE_TIMEOUT_S", "Probe", "probe"]
