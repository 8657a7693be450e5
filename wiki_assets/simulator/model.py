"""A simulated model's parameters and the token arithmetic of its timing model."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BEHAVIOURS", "EMBEDDING_FAULTS", "PRESETS", "SimModel"]

# What a model writes for a page request (see :mod:`.pages`): "words", the
# document's words in schema order (the default: tests check what travelled); "faithful", key
# points that quote the document with correct evidence; "fabricating", fluent invented facts.
# "contradicting": a faithful page whose summary's second sentence has its first number changed,
# then a sentence no document says; "embellishing": a faithful page with that sentence added.
BEHAVIOURS = ("words", "faithful", "fabricating", "contradicting", "embellishing")
# How /v1/embeddings misbehaves (see :mod:`.embeddings`): "none"; "down",
# HTTP 503 to every request; "garbage", HTTP 200 with a body that is not vectors (in turn: cut
# JSON, no "data", a vector missing, a zero vector, vectors of unequal length, a NaN);
# "wrong_dim", every second request (the 2nd, 4th, ...) answers vectors of embedding_dim + 1.
EMBEDDING_FAULTS = ("none", "down", "garbage", "wrong_dim")


@dataclass(frozen=True)
class SimModel:
    """One simulated model endpoint: its speed, its limits and the faults it injects."""

    model: str = "sim-model"  # id served by /v1/models and echoed in responses
    per_request_tps: float = 600.0  # decode tokens/s a single request gets when alone
    aggregate_tps: float = 4800.0  # total decode tokens/s shared by all active requests
    max_batch: int = 16  # active requests at most; more wait FIFO (queueing)
    prefill_speedup: float = 10.0  # a prompt token costs 1/prefill_speedup of an output token
    output_ratio: float = 0.15  # natural output length = prompt_tokens * output_ratio ...
    min_output_tokens: int = 16  # ... at least this, and capped by the request's max_tokens
    context_tokens: int = 8192  # prompt + max_tokens above this -> HTTP 400 like vLLM/llama.cpp
    latency_s: float = 0.0  # fixed extra time per request (network/first-token)
    instant: bool = False  # answer at once, no simulated time (overhead benchmarks)
    # Fault injection: probabilities per request, drawn from random.Random(seed).
    error_rate: float = 0.0  # HTTP 500
    rate_limit_rate: float = 0.0  # HTTP 429 with header Retry-After: retry_after_s
    retry_after_s: float = 1.0
    hang_rate: float = 0.0  # accept, never answer (until the client disconnects/server stops)
    garbage_rate: float = 0.0  # HTTP 200 with a body that is not JSON
    die_after: int | None = None  # after this many answered requests, drop every connection
    seed: int = 0
    json_schema_support: bool = True  # False: reject json_schema with 500 like llama-cpp-python
    behaviour: str = "words"  # one of BEHAVIOURS
    judge: str = "right"  # how it answers a judge's request: one of simulator.judge.JUDGES
    # /v1/embeddings: hashed character 3-grams, so texts that share words get close vectors.
    embedding_dim: int = 64
    embedding_delay_s: float = 0.0  # time each embeddings request takes
    embedding_fault: str = "none"  # one of EMBEDDING_FAULTS

    def __post_init__(self) -> None:
        # Fail at construction, not as a ZeroDivisionError deep inside the server loop.
        if self.per_request_tps <= 0 or self.aggregate_tps <= 0:
            raise ValueError("per_request_tps and aggregate_tps must be positive")
        if self.max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        if self.prefill_speedup <= 0:
            raise ValueError("prefill_speedup must be positive")
        if self.latency_s < 0 or self.retry_after_s < 0:
            raise ValueError("latency_s and retry_after_s must not be negative")
        if self.die_after is not None and self.die_after < 0:
            raise ValueError("die_after must not be negative")
        if self.embedding_dim < 1 or self.embedding_delay_s < 0:
            raise ValueError("embedding_dim must be positive and embedding_delay_s not negative")
        if self.embedding_fault not in EMBEDDING_FAULTS:
            raise ValueError(f"embedding_fault must be one of {', '.join(EMBEDDING_FAULTS)}")
        if self.behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour must be one of {', '.join(BEHAVIOURS)}")

    def rate(self, active: int) -> float:
        """Token-units per second each of ``active`` concurrently decoded requests gets."""
        return min(self.per_request_tps, self.aggregate_tps / active) if active else 0.0

    def output_tokens(self, prompt_tokens: int, max_tokens: int) -> tuple[int, bool]:
        """Completion length for a prompt, and whether ``max_tokens`` cut it short."""
        natural = max(self.min_output_tokens, int(prompt_tokens * self.output_ratio))
        return min(max_tokens, natural), natural > max_tokens

    def work(self, prompt_tokens: int, output_tokens: int) -> float:
        """Token-units a request costs: cheap batched prefill plus one unit per output token."""
        return prompt_tokens / self.prefill_speedup + output_tokens


# Named starting points for the command line and benchmarks.
PRESETS: dict[str, SimModel] = {
    "fast": SimModel(per_request_tps=600.0, aggregate_tps=4800.0, max_batch=16),
    "slow": SimModel(per_request_tps=300.0, aggregate_tps=1200.0, max_batch=8),
    "instant": SimModel(instant=True),
    "faithful": SimModel(behaviour="faithful"),
    "fabricating": SimModel(behaviour="fabricating"),
}
