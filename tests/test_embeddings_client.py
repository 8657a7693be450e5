"""The embeddings client against the simulator over real HTTP: normalised, deterministic,
batched vectors in which texts that share words are close; every way an endpoint can fail is one
EmbeddingsError naming the endpoint (never its key), after which the client asks no more."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest
from pydantic import ValidationError

from wiki_assets.engine.config import EmbeddingsEndpoint
from wiki_assets.engine.errors import ConfigurationError, EmbeddingsError, WikiAssetsError
from wiki_assets.engine.llm.embeddings_client import EmbeddingsClient
from wiki_assets.simulator import SimModel, SimServer

TEXTS = [
    "The deploy process runs every Tuesday after the release review.",
    "Deploys run every Tuesday after the release review meeting.",
    "Quarterly tax filings are due at the end of April.",
]


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[SimServer]:
    """A simulated embeddings model; ``@pytest.mark.parametrize('server', [SimModel(...)],
    indirect=True)`` changes it."""
    sim = getattr(request, "param", None) or SimModel(model="sim-embed", embedding_dim=48)
    with SimServer(sim) as running:
        yield running


def endpoint_for(server: SimServer, **fields: object) -> EmbeddingsEndpoint:
    base = {"name": "sim-e", "base_url": server.base_url, "model": server.sim.model}
    return EmbeddingsEndpoint(**{**base, **fields})  # type: ignore[arg-type]


def client_for(server: SimServer, **fields: object) -> EmbeddingsClient:
    fields.setdefault("max_retries", 0)
    return EmbeddingsClient(endpoint_for(server, **fields))


def test_vectors_are_normalised_deterministic_and_close_for_similar_texts(
    server: SimServer,
) -> None:
    with client_for(server) as client:
        vectors = client.embed(TEXTS)
        again = client.embed(TEXTS[::-1])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 48)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(vectors, again[::-1])
    similar, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert similar > unrelated + 0.2
    assert client.dim == 48


def test_more_texts_than_a_batch_take_several_requests_in_order(server: SimServer) -> None:
    texts = [f"document number {index} about topic {index % 3}" for index in range(7)]
    with client_for(server, batch_size=3) as client:
        batched = client.embed(texts)
    with client_for(server, batch_size=100) as client:
        whole = client.embed(texts)
    stats = server.stats
    assert stats.embedding_requests == 3 + 1
    assert stats.embedded_inputs == 14
    assert np.allclose(batched, whole)


def test_no_texts_no_request(server: SimServer) -> None:
    with client_for(server) as client:
        assert client.embed([]).shape == (0, 0)
    assert server.stats.embedding_requests == 0


def test_input_prefix_is_sent_before_every_text(server: SimServer) -> None:
    with client_for(server, input_prefix="query: ") as prefixed:
        with_prefix = prefixed.embed(["tea"])
    with client_for(server) as plain:
        spelled_out = plain.embed(["query: tea"])
        bare = plain.embed(["tea"])
    assert np.array_equal(with_prefix, spelled_out)
    assert not np.allclose(with_prefix, bare)


@pytest.mark.parametrize(
    "server", [SimModel(model="sim-down", embedding_fault="down")], indirect=True
)
def test_a_down_endpoint_fails_once_then_the_breaker_answers(server: SimServer) -> None:
    with client_for(server, max_retries=1) as client:
        with pytest.raises(EmbeddingsError) as first:
            client.embed(TEXTS)
        assert isinstance(first.value, WikiAssetsError)
        message = str(first.value)
        assert "sim-e" in message and server.base_url in message and "503" in message
        asked = server.stats.embedding_requests
        assert asked == 2  # the request and openai's one retry
        started = time.monotonic()
        with pytest.raises(EmbeddingsError) as second:
            client.embed(["anything else"])
        assert time.monotonic() - started < 0.1
        assert str(second.value) == message
    assert server.stats.embedding_requests == asked


def test_a_server_that_is_not_there_is_an_embeddings_error() -> None:
    with SimServer(SimModel()) as gone:
        endpoint = endpoint_for(gone, max_retries=0)
    with EmbeddingsClient(endpoint) as client, pytest.raises(EmbeddingsError, match="connection"):
        client.embed(TEXTS)


@pytest.mark.parametrize(
    "server", [SimModel(model="sim-garbage", embedding_fault="garbage")], indirect=True
)
def test_every_kind_of_garbage_is_refused(server: SimServer) -> None:
    reasons = []
    for _ in range(6):  # the simulator's garbage, in turn; a fresh client for each
        with client_for(server) as client, pytest.raises(EmbeddingsError) as refused:
            client.embed(TEXTS)
        reasons.append(refused.value.reason)
    assert reasons == [
        "unparsable answer (JSONDecodeError)",
        "answer without a list of vectors ('data')",
        "2 vectors for 3 inputs",
        "a zero vector",
        "vectors of unequal length (64, 65)",
        "a vector with a number that is not finite",
    ]
    assert server.stats.embedded_inputs == 0


@pytest.mark.parametrize(
    "server",
    [SimModel(model="sim-dim", embedding_dim=32, embedding_fault="wrong_dim")],
    indirect=True,
)
def test_a_dimension_that_changes_between_batches_is_refused(server: SimServer) -> None:
    with client_for(server, batch_size=2) as client:
        with pytest.raises(EmbeddingsError, match="dimension changed from 32 to 33"):
            client.embed(TEXTS)
        with pytest.raises(EmbeddingsError, match="dimension changed"):
            client.embed(["the breaker is open"])
    assert server.stats.embedding_requests == 2


@pytest.mark.parametrize(
    "server", [SimModel(model="sim-slow", embedding_delay_s=2.0)], indirect=True
)
def test_a_slow_endpoint_times_out(server: SimServer) -> None:
    started = time.monotonic()
    with client_for(server, timeout_s=0.3) as client:
        with pytest.raises(EmbeddingsError, match="timed out"):
            client.embed(TEXTS)
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    "server", [SimModel(model="sim-down", embedding_fault="down")], indirect=True
)
def test_the_key_travels_but_never_appears_in_an_error(
    server: SimServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-embeddings-secret-0123456789"
    monkeypatch.setenv("EMBEDDINGS_TEST_KEY", secret)
    with client_for(server, api_key_env="EMBEDDINGS_TEST_KEY") as client:
        with pytest.raises(EmbeddingsError) as failed:
            client.embed(TEXTS)
    assert secret in server.bearer_tokens()
    assert secret not in str(failed.value) and secret not in failed.value.reason
    assert secret not in repr(failed.value)


def test_an_unset_key_variable_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EMBEDDINGS_UNSET_KEY", raising=False)
    endpoint = EmbeddingsEndpoint(
        base_url="http://127.0.0.1:9/v1", model="m", api_key_env="EMBEDDINGS_UNSET_KEY"
    )
    with pytest.raises(ConfigurationError, match="'embeddings'.*EMBEDDINGS_UNSET_KEY"):
        EmbeddingsClient(endpoint)


def test_a_misspelt_field_is_an_error_naming_it() -> None:
    with pytest.raises(ValidationError, match="batchsize"):
        EmbeddingsEndpoint(base_url="http://x/v1", model="m", batchsize=8)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="api_key_env"):
        EmbeddingsEndpoint(base_url="http://x/v1", model="m", api_key_env="sk-not-a-name")
    with pytest.raises(ValidationError, match="batch_size"):
        EmbeddingsEndpoint(base_url="http://x/v1", model="m", batch_size=0)
