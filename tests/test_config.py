"""Invalid configuration fails before any work starts, with a message that names the bad field, in
both the resource (model endpoints) and the run config (dials)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from wiki_assets.defs.assets import IngestConfig
from wiki_assets.defs.resources import ModelConfig, SummarizerResource
from wiki_assets.engine import Dials


def model(**fields: object) -> dict[str, object]:
    return {"name": "m", "base_url": "http://127.0.0.1:9/v1", "model": "x", **fields}


@pytest.mark.parametrize(
    ("fields", "field_name", "message"),
    [
        ({"base_url": "gpu1:8000"}, "base_url", "http(s) URL"),
        ({"workers": 0}, "workers", "at least 1 or 'auto'"),
        ({"workers": "many"}, "workers", "at least 1 or 'auto'"),
        ({"name": " "}, "name", "must not be empty"),
        ({"api_key_env": "sk-live-123"}, "api_key_env", "name of an environment variable"),
        ({"timeout_s": -1}, "timeout_s", "greater than 0"),
    ],
)
def test_bad_model_field_is_named(fields: dict[str, object], field_name: str, message: str) -> None:
    with pytest.raises(ValidationError) as raised:
        SummarizerResource(models=[ModelConfig(**model(**fields))])
    text = str(raised.value)
    assert field_name in text and message in text


def test_duplicate_model_names_are_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate name"):
        SummarizerResource(models=[ModelConfig(**model()), ModelConfig(**model())])


@pytest.mark.parametrize(
    ("dials", "field_name"),
    [({"claim_size": 0}, "claim_size"), ({"flush_seconds": 0}, "flush_seconds"),
     ({"max_tokens": 1}, "max_tokens"), ({"workers_per_model": -2}, "workers_per_model"),
     ({"workers_per_model": 2.5}, "workers_per_model"), ({"max_workers": 0}, "max_workers")],
)  # fmt: skip
def test_bad_dial_is_named(dials: dict[str, object], field_name: str) -> None:
    with pytest.raises(ValidationError, match=field_name):
        IngestConfig(**dials)


def test_defaults_are_the_documented_dials() -> None:
    dials = IngestConfig().to_dials()
    assert (dials.workers_per_model, dials.claim_size, dials.flush_seconds) == (4, 32, 30.0)
    assert dials.max_tokens == 200 and dials.force is False


def test_the_launchpads_defaults_are_the_engines() -> None:
    """The dials are declared for the engine and for Dagster's run config: their defaults agree."""
    assert IngestConfig().to_dials() == Dials()


def test_workers_accept_auto_in_any_spelling() -> None:
    assert IngestConfig(workers_per_model="auto").to_dials().workers_per_model == "auto"
    assert IngestConfig(workers_per_model="8").to_dials().workers_per_model == 8
    model_config = ModelConfig(**model(workers="AUTO"))
    assert model_config.to_endpoint().workers == "auto"
