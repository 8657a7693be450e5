"""A simulated OpenAI-compatible chat-completions server that behaves like a batching LLM server.

Tests and throughput benchmarks talk to this over real HTTP instead of mocking the client, so
everything between the pipeline and the model (the ``openai`` client, connection pools, timeouts,
retries, concurrency limits) is exercised exactly as in production, in milliseconds and without
a GPU.

The parts, from the model outwards:

* :mod:`.model`: :class:`SimModel`, a model's speed, limits and fault
  rates, and its token arithmetic (a request costs ``prompt_tokens / prefill_speedup +
  output_tokens`` token-units); :data:`PRESETS`.
* :mod:`.tokens`: the token estimate a simulated server charges a text.
* :mod:`.scheduler`: :class:`BatchScheduler`, continuous batching in time
  (processor sharing among at most ``max_batch`` active requests, FIFO behind them), exact and
  event-driven on any event loop's clock; :mod:`wiki_assets.virtual_time` runs it on a virtual one.
* :mod:`.faults`: which injected fault a request meets (HTTP 500, 429 with
  Retry-After, a hang, a non-JSON body, a server that "dies" after a number of answers), from
  dice seeded by ``SimModel.seed``.
* :mod:`.request`: reading a request, with vLLM/llama.cpp-style rejections
  (context length, unsupported ``json_schema``).
* :mod:`.answers` and :mod:`.schema`: deterministic
  answers derived from the last user message (a plain summary, or JSON generated from the
  requested schema) so tests can check what travelled end to end; OpenAI-style error bodies.
* :mod:`.pages`: the page a ``faithful`` model writes (key points quoting
  the document, with correct evidence) or a ``fabricating`` one (fluent, invented facts), chosen
  by ``SimModel.behaviour`` (presets ``faithful`` and ``fabricating``).
* :mod:`.embeddings`: ``/v1/embeddings``, deterministic vectors of hashed
  character 3-grams (texts that share words get close vectors), of ``SimModel.embedding_dim``,
  slowed by ``embedding_delay_s`` and broken by ``embedding_fault`` (:data:`EMBEDDING_FAULTS`).
* :mod:`.stats`: :class:`SimStats` and the lock-guarded ledger of what a
  server has seen.
* :mod:`.chat`, :mod:`.app` and
  :mod:`.server`: one completion from request to response, the aiohttp
  application, and :class:`SimServer`, which runs it on its own event loop on a daemon thread so
  synchronous code and other event loops can use it alike; :func:`fleet` starts several at once.

Run ``python -m wiki_assets.simulator --port 8001`` to serve one in the foreground.
"""

from wiki_assets.simulator.cli import main
from wiki_assets.simulator.model import BEHAVIOURS, EMBEDDING_FAULTS, PRESETS, SimModel
from wiki_assets.simulator.scheduler import BatchScheduler, SchedulerStopped
from wiki_assets.simulator.server import SimServer, fleet
from wiki_assets.simulator.stats import SimStats
from wiki_assets.simulator.tokens import estimate_tokens, truncate_to_tokens

__all__ = [
    "BEHAVIOURS",
    "EMBEDDING_FAULTS",
    "PRESETS",
    "BatchScheduler",
    "SchedulerStopped",
    "SimModel",
    "SimServer",
    "SimStats",
    "estimate_tokens",
    "truncate_to_tokens",
    "fleet",
    "main",
]
