"""Invalid configuration fails before any work starts, with a message that names the bad field, in
both the resource (model endpoints) and the run config (dials)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import wiki_assets
from wiki_assets.definitions import build_defs
from wiki_assets.defs.names import INGEST_JOB
from wiki_assets.defs.resources import ModelConfig, SummarizerResource
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine import Dials, Endpoint


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


@pytest.mark.parametrize(
    ("resource", "field_name"), [("corpus", "state_url_env"), ("digest", "webhook_url_env")]
)
def test_a_secret_in_place_of_its_variables_name_is_refused(resource: str, field_name: str) -> None:
    """Fields that say where a secret is refuse the secret itself, naming the field (the same
    rule as a model's api_key_env)."""
    from wiki_assets.defs.digest import DigestResource
    from wiki_assets.defs.resources import CorpusResource

    cls: Any = {"corpus": CorpusResource, "digest": DigestResource}[resource]
    with pytest.raises(ValidationError) as raised:
        cls(**{field_name: "https://hooks.example.com/services/T0/B0/secret"})
    text = str(raised.value)
    assert field_name in text and "name of an environment variable" in text
    assert getattr(cls(**{field_name: "MY_SECRET_2"}), field_name) == "MY_SECRET_2"


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


# Engine settings that are deliberately not config keys (tests and simulations set them).
ENGINE_ONLY = {"give_up_after_s", "max_retries"}


def launchpad() -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields the launchpad shows for the dials and for one model of the fleet."""
    job = build_defs().resolve_job_def(INGEST_JOB)
    top = job.run_config_schema.config_type.fields  # type: ignore[attr-defined]
    dials = top["ops"].config_type.fields["wiki_pages"].config_type.fields["config"]
    summarizer = top["resources"].config_type.fields["summarizer"].config_type.fields["config"]
    models = summarizer.config_type.fields["models"].config_type
    while not hasattr(models, "fields"):  # optional, then a list, of one model's shape
        models = models.inner_type
    return dials.config_type.fields, models.fields


@pytest.mark.parametrize("which", ["dials", "endpoint"])
def test_the_launchpad_shows_the_engines_fields(which: str) -> None:
    """The launchpad's fields are the engine's, in its order, with its defaults and descriptions:
    they are declared once, in wiki_assets/engine/config.py."""
    dials, models = launchpad()
    shown, engine = (dials, Dials) if which == "dials" else (models, Endpoint)
    declared = engine.__pydantic_fields__  # type: ignore[attr-defined]
    assert list(shown) == [name for name in declared if name not in ENGINE_ONLY]
    for name, field in shown.items():
        assert field.description and field.description == declared[name].description, name
        if declared[name].is_required():
            assert field.is_required, name
        else:
            default = declared[name].default
            expected = list(default) if isinstance(default, tuple) else default
            assert field.default_value == expected, name


def test_a_dials_description_is_the_engines_text() -> None:
    dials, models = launchpad()
    assert dials["claim_size"].description.startswith(
        "Documents a worker takes from the shared queue at once."
    )
    assert dials["redo_models"].default_value == []
    assert models["base_url"].description == (
        "OpenAI-compatible base URL, e.g. http://gpu1:8000/v1."
    )


def test_the_engine_validates_like_the_launchpad() -> None:
    """One set of rules: what the run config refuses, the engine's own dials refuse too."""
    with pytest.raises(ValidationError, match="max_tokens"):
        Dials(max_tokens=1)
    with pytest.raises(ValidationError, match="http"):
        Endpoint(name="m", base_url="gpu1:8000", model="x")
    with pytest.raises(ValidationError, match="claim_sise"):
        Dials(claim_sise=4)  # type: ignore[call-arg]


def test_only_the_environment_module_reads_the_environment() -> None:
    package = Path(wiki_assets.__file__).parent
    readers = [
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if re.search(r"\bos\.(environ|getenv)|\bgetenv\(", path.read_text(encoding="utf-8"))
    ]
    assert readers == ["engine/environment.py"]


def test_workers_accept_auto_in_any_spelling() -> None:
    assert IngestConfig(workers_per_model="auto").to_dials().workers_per_model == "auto"
    assert IngestConfig(workers_per_model="8").to_dials().workers_per_model == 8
    model_config = ModelConfig(**model(workers="AUTO"))
    assert model_config.to_endpoint().workers == "auto"
