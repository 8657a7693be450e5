"""The error hierarchy: one base class, and errors that carry what a caller needs."""

from __future__ import annotations

import asyncio
import inspect

import pytest

import wiki_assets.engine as engine
from wiki_assets.defs.settings import ConfigError
from wiki_assets.defs.sync import SyncFailed
from wiki_assets.engine import errors
from wiki_assets.engine.config import Endpoint
from wiki_assets.engine.errors import (
    CollectionBusy,
    ConfigurationError,
    ModelError,
    StateError,
    StateUnavailable,
    WikiAssetsError,
)
from wiki_assets.engine.llm.client import ModelClient
from wiki_assets.engine.prompting.candidate import PageRequest
from wiki_assets.simulator import SimModel, SimServer


def test_every_public_error_subclasses_the_base() -> None:
    classes = [
        value
        for value in vars(errors).values()
        if inspect.isclass(value) and issubclass(value, BaseException)
    ]
    assert len(classes) >= 10
    for cls in [*classes, ConfigError, SyncFailed]:
        assert issubclass(cls, WikiAssetsError), cls
    assert issubclass(ConfigError, ConfigurationError)
    assert issubclass(CollectionBusy, StateError) and issubclass(StateUnavailable, StateError)
    for name in engine.__all__:
        value = getattr(engine, name)
        if inspect.isclass(value) and issubclass(value, BaseException):
            assert issubclass(value, WikiAssetsError), name


async def _summarize(server: SimServer, max_tokens: int) -> None:
    name = server.sim.model
    endpoint = Endpoint(name=name, base_url=server.base_url, model=name, max_retries=0)
    client = ModelClient(endpoint, max_tokens)
    try:
        await client.summarize(PageRequest("c/doc.md", "Doc", "Some text of a document. " * 20))
    finally:
        await client.close()


@pytest.mark.parametrize(
    ("sim", "max_tokens", "status", "kind"),
    [
        (SimModel(model="failing", instant=True, error_rate=1.0), 100, 500, "unavailable"),
        # The simulator answers a non-positive max_tokens with a plain 400.
        (SimModel(model="strict", instant=True), 0, 400, "rejected"),
    ],
)
def test_model_error_carries_the_http_status(
    sim: SimModel, max_tokens: int, status: int, kind: str
) -> None:
    with SimServer(sim) as server, pytest.raises(ModelError) as raised:
        asyncio.run(_summarize(server, max_tokens))
    error = raised.value
    assert error.status_code == status
    assert error.kind == kind
    assert error.request_id is None  # the simulator sends no x-request-id
    assert f"HTTP {status}" in str(error)


def test_a_context_overflow_that_persists_carries_the_http_status() -> None:
    """The client retries an overflowing prompt with parts half as long; when the server still
    refuses (its context is far smaller than the endpoint claims), the error is its 400."""
    sim = SimModel(model="narrow", instant=True, context_tokens=200)
    with SimServer(sim) as server, pytest.raises(ModelError) as raised:
        asyncio.run(_summarize(server, 100))
    error = raised.value
    assert server.stats.rejected == 3, "each of the client's three tries was refused"
    assert (error.status_code, error.kind, error.request_id) == (400, "rejected", None)
    assert "prompt too long" in str(error)


def test_model_error_without_an_answer_has_no_status() -> None:
    error = ModelError("model m: timed out", "timeout")
    assert (error.kind, error.status_code, error.request_id) == ("timeout", None, None)


def test_missing_api_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = Endpoint(name="m", base_url="http://x/v1", model="m", api_key_env="WIKI_TEST_KEY")
    monkeypatch.delenv("WIKI_TEST_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="WIKI_TEST_KEY is not set"):
        endpoint.api_key()
    monkeypatch.setenv("WIKI_TEST_KEY", "")
    with pytest.raises(ConfigurationError) as raised:
        endpoint.api_key()
    assert "WIKI_TEST_KEY" in str(raised.value)
    monkeypatch.setenv("WIKI_TEST_KEY", "sk-secret-value")
    assert endpoint.api_key() == "sk-secret-value"
