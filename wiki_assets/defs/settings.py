"""The deployment's configuration: one project file in the shape of Dagster's run config.

``wiki_assets.yaml`` in the working directory, or the file named by ``WIKI_ASSETS_CONFIG``. Its
shape is :data:`SECTIONS`: the fleet (``resources.summarizer``), where documents and the wiki live
(``resources.corpus``), the daily digest (``resources.digest``), the dials (``ops.wiki_pages``)
and the verification pass (``ops.wiki_verification``); ``wiki_assets.example.yaml`` is that shape
written out with every key.

The definitions build their resources from it (so the schedule, the launchpad, backfills and
re-executions use that fleet) and its dials are the defaults of every run. A CLI ``--config`` file
is layered over it. Any mistake, an unknown key above all, is one line naming the file, the key and
where it is: a config error must never mean "ran with the defaults".
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from dagster import DagsterInvalidConfigError
from pydantic import BaseModel, ValidationError

from wiki_assets.defs.digest import DigestResource
from wiki_assets.defs.names import WIKI_PAGES, WIKI_VERIFICATION, node
from wiki_assets.defs.resources import (
    CorpusResource,
    EmbeddingsConfig,
    ModelConfig,
    SummarizerResource,
)
from wiki_assets.defs.verification.config import VerifyConfig
from wiki_assets.defs.wiki_pages.config import IngestConfig
from wiki_assets.engine import environment
from wiki_assets.engine.errors import ConfigurationError

DEFAULT_FILE = "wiki_assets.yaml"

# The shape of the file, the one definition of it: where each section is and the pydantic class
# its keys are the fields of, in the file's order; and the fields that hold another class (or a
# list of them).
SECTIONS: dict[tuple[str, ...], type[BaseModel]] = {
    ("resources", "summarizer", "config"): SummarizerResource,
    ("resources", "corpus", "config"): CorpusResource,
    ("resources", "digest", "config"): DigestResource,
    ("ops", node(WIKI_PAGES), "config"): IngestConfig,
    ("ops", node(WIKI_VERIFICATION), "config"): VerifyConfig,
}
NESTED: dict[tuple[type[BaseModel], str], type[BaseModel]] = {
    (SummarizerResource, "models"): ModelConfig,
    (SummarizerResource, "embeddings"): EmbeddingsConfig,
}


def _nested(sections: Mapping[tuple[str, ...], type[BaseModel]]) -> dict[str, Any]:
    """The sections as nested mappings of their keys, each ending in its class."""
    shape: dict[str, Any] = {}
    for keys, cls in sections.items():
        *outer, last = keys
        level = shape
        for key in outer:
            level = level.setdefault(key, {})
        level[last] = cls
    return shape


_SHAPE = _nested(SECTIONS)


class ConfigError(ConfigurationError):
    """A configuration mistake, as one line that names the file and the key."""


@dataclass(frozen=True)
class Settings:
    corpus: CorpusResource
    summarizer: SummarizerResource
    dials: IngestConfig
    files: tuple[str, ...] = ()  # the files these came from, in layering order
    digest: DigestResource = field(default_factory=DigestResource)
    verification: VerifyConfig = field(default_factory=VerifyConfig)

    @property
    def source(self) -> str:
        return " + ".join(self.files) or "defaults (no config file)"


def project_file() -> Path | None:
    """``$WIKI_ASSETS_CONFIG``, else ``wiki_assets.yaml`` in the working directory if present."""
    named = environment.config_file()
    if named:
        path = Path(named)
        if not path.is_file():
            raise ConfigError(f"{environment.CONFIG}={named}: no such file")
        return path
    default = Path(DEFAULT_FILE)
    return default if default.is_file() else None


def read_file(path: Path) -> dict[str, Any]:
    """The file's mapping, its structure and keys checked (empty file: no settings)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot be read ({error.strerror or error})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: not valid YAML: {problem}{where}") from None
    if data is None:
        return {}
    _check(data, _SHAPE, "the top level", path)
    # Values too, so that a mistake is reported against the file that made it.
    _build(data, path)
    return data


def load_settings(
    overlay: Path | None = None, corpus_overrides: Mapping[str, str] | None = None
) -> Settings:
    """The project file, with ``overlay`` (a CLI ``--config``) merged over it and then the CLI's
    folder flags."""
    files = [path for path in (project_file(), overlay) if path is not None]
    merged: dict[str, Any] = {}
    for path in files:
        merged = merge(merged, read_file(path))
    if corpus_overrides:
        merged = merge(merged, {"resources": {"corpus": {"config": dict(corpus_overrides)}}})
    where = " + ".join(str(path) for path in files) or "config"
    built = _build(merged, where)
    return Settings(
        corpus=_of(built, CorpusResource),
        summarizer=_of(built, SummarizerResource),
        dials=_of(built, IngestConfig),
        files=tuple(str(path) for path in files),
        digest=_of(built, DigestResource),
        verification=_of(built, VerifyConfig),
    )


def merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """``overlay`` over ``base``: mappings merge key by key; anything else (a list of models, a
    value) replaces what was there."""
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _section(data: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) or {}
    return dict(data)


def _build(data: Mapping[str, Any], where: object) -> dict[type[BaseModel], BaseModel]:
    """Each section's object, by its class; the first mistake as one line."""
    built: dict[type[BaseModel], BaseModel] = {}
    for keys, cls in SECTIONS.items():
        try:
            built[cls] = cls(**_section(data, *keys))
        except ValidationError as error:
            raise ConfigError(f"{where}: {_describe(error, '.'.join(keys))}") from None
        except DagsterInvalidConfigError as error:
            problem = error.errors[0].message if error.errors else str(error).splitlines()[0]
            raise ConfigError(f"{where}: {'.'.join(keys)}: {problem}") from None
    return built


Section = TypeVar("Section", bound=BaseModel)


def _of(built: Mapping[type[BaseModel], BaseModel], cls: type[Section]) -> Section:
    section = built[cls]
    assert isinstance(section, cls)
    return section


def _describe(error: ValidationError, section: str) -> str:
    """pydantic's first error as one line: the key, where it is, what is wrong with it."""
    first = error.errors()[0]
    location = [str(part) if isinstance(part, str) else f"[{part}]" for part in first["loc"]]
    message = first["msg"].removeprefix("Value error, ")
    if not location:
        return f"{section}: {message}"
    key = location[-1]
    path = section + "".join(p if p.startswith("[") else f".{p}" for p in location[:-1])
    # Dagster hands pydantic a None for a field the config left out.
    if first["type"] == "missing" or ("input" in first and first["input"] is None):
        return f"missing key '{key}' in {path}"
    if key.startswith("["):
        return f"bad item {key} in {path}: {message}"
    value = first.get("input")
    shown = isinstance(value, str | int | float | bool) and repr(value) not in message
    got = f" (got {value!r})" if shown else ""
    return f"bad value for '{key}' in {path}: {message}{got}"


def _check(value: Any, shape: Any, where: str, path: object) -> None:
    """Every key of ``value`` is one the shape knows; nested mappings and model lists too."""
    if isinstance(shape, dict):
        keys: Sequence[str] = list(shape)
    else:
        keys = list(shape.model_fields)
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: {where} must be a mapping, got {type(value).__name__}")
    for key, item in value.items():
        if key not in keys:
            near = difflib.get_close_matches(str(key), keys, n=1, cutoff=0.6)
            hint = f"; did you mean '{near[0]}'?" if near else f"; valid keys: {', '.join(keys)}"
            raise ConfigError(f"{path}: unknown key '{key}' in {where}{hint}")
        inner = where_of(where, str(key))
        if isinstance(shape, dict):
            if item is not None:
                _check(item, shape[key], inner, path)
        elif (shape, key) in NESTED and isinstance(item, list):
            for index, element in enumerate(item):
                _check(element, NESTED[(shape, key)], f"{inner}[{index}]", path)
        elif (shape, key) in NESTED and isinstance(item, Mapping):
            _check(item, NESTED[(shape, key)], inner, path)


def where_of(where: str, key: str) -> str:
    return key if where == "the top level" else f"{where}.{key}"
