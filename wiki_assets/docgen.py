"""The documentation written from the configuration's own definitions: the README's dial table and
the commented example project file, ``wiki_assets.example.yaml``.

A dial's or a model field's name, default and description is defined once, in
``wiki_assets/engine/config.py`` (the corpus and digest resources' fields in ``wiki_assets/defs``);
the launchpad shows them from there, and this module writes them out for readers, walking the
project file's shape (:data:`wiki_assets.defs.settings.SECTIONS`), so a new field appears in both
without being written down again.

``python -m wiki_assets.docgen`` rewrites ``wiki_assets.example.yaml`` and prints the README's dial
table between its markers, to paste; ``--check`` changes nothing and exits 1 when either is out of
date (``tests/test_docgen.py`` fails then too).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from wiki_assets.defs.resources import SummarizerResource
from wiki_assets.defs.settings import NESTED, SECTIONS
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine.environment import PACKAGE_ROOT, project_variables_unset

EXAMPLE_FILE = PACKAGE_ROOT / "wiki_assets.example.yaml"
README = PACKAGE_ROOT / "README.md"
DIALS_START = "<!-- dials:start (python -m wiki_assets.docgen writes this table) -->"
DIALS_END = "<!-- dials:end -->"
WIDTH = 100  # the project's line length

DIALS_CLASS = IngestConfig  # the dials' section: ops.wiki_pages.config

HEADER = """\
# wiki_assets project file: the one home of a deployment's configuration.
#
# Copy it to wiki_assets.yaml in the folder `dagster dev` and `wiki-assets` run from, or point
# WIKI_ASSETS_CONFIG at it. The Dagster definitions build their resources from it, so the daily
# schedule, the launchpad, backfills and re-executions use this fleet, and its dials are the
# defaults of every run. `wiki-assets ingest --config FILE` layers a tuning run over it (mappings
# merge key by key; a list such as `models` replaces the file's).
#
# The shape is Dagster's run config. A key that is not listed here stops the load with one line
# naming the file, the key and the nearest valid key. Secrets never go in this file: give the NAME
# of the environment variable that holds them (api_key_env, state_url_env, webhook_url_env).
#
# Every key is listed with its default, commented out: uncomment one to change it. Written by
# `python -m wiki_assets.docgen` from the fields' definitions (wiki_assets/engine/config.py for the
# models and the dials, wiki_assets/defs for the corpus and the digest): edit those, not this file.
"""

# The models of the example fleet (values a reader adapts; the rest of each model's keys are
# listed, commented, under the first).
EXAMPLE_MODELS: tuple[dict[str, Any], ...] = (
    {
        "name": "vllm",
        "base_url": "http://gpu1:8000/v1",
        "model": "Qwen/Qwen2.5-7B-Instruct",
        "workers": "auto",
    },
    {
        "name": "gateway",
        "base_url": "https://llm.example.com/v1",
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "api_key_env": "GATEWAY_API_KEY",
    },
)
# The example fleet's embeddings: multilingual-e5-small on Hugging Face TEI.
EXAMPLE_EMBEDDINGS = {
    "name": "tei-e5",
    "base_url": "http://gpu1:8080/v1",
    "model": "intfloat/multilingual-e5-small",
    "input_prefix": "query: ",
}
EXAMPLES: dict[tuple[type[BaseModel], str], Any] = {
    (SummarizerResource, "models"): list(EXAMPLE_MODELS),
    (SummarizerResource, "embeddings"): EXAMPLE_EMBEDDINGS,
}


def default(info: FieldInfo) -> Any:
    """A field's default: a factory's value as a deployment without wiki_assets' environment
    variables gets it (some fields default to a variable's value)."""
    with project_variables_unset():
        return info.get_default(call_default_factory=True, validated_data={})


def yaml_value(value: Any) -> str:
    """``value`` as YAML writes it on one line (``null``, ``false``, ``[]``, ``30.0``)."""
    if isinstance(value, tuple):
        value = list(value)
    text: str = yaml.safe_dump(value, default_flow_style=True, width=10_000, allow_unicode=True)
    return text.strip().removesuffix("...").strip()


def fields(cls: type[BaseModel]) -> dict[str, FieldInfo]:
    return dict(cls.model_fields)


# --------------------------------------------------------------------------------------------------
# The README's dial table


def dial_table() -> str:
    """The markdown table of the dials (``ops.wiki_pages.config``), in their order."""
    lines = ["| dial | default | what it trades |", "|---|---|---|"]
    for name, info in fields(DIALS_CLASS).items():
        description = (info.description or "").replace("|", "\\|")
        lines.append(f"| `{name}` | {yaml_value(default(info))} | {description} |")
    return "\n".join(lines)


def readme_block() -> str:
    """The table between its markers, as README.md holds it."""
    return f"{DIALS_START}\n{dial_table()}\n{DIALS_END}"


def readme_dials(readme: str) -> str | None:
    """What README.md holds between the markers (markers included), or None without them."""
    start = readme.find(DIALS_START)
    end = readme.find(DIALS_END, start)
    if start < 0 or end < 0:
        return None
    return readme[start : end + len(DIALS_END)]


# --------------------------------------------------------------------------------------------------
# The example project file


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(
        text,
        width=WIDTH,
        initial_indent=f"{indent}# ",
        subsequent_indent=f"{indent}# ",
        break_on_hyphens=False,
    )


def _section(cls: type[BaseModel], values: Mapping[str, Any], indent: str) -> list[str]:
    """The keys of ``cls``: each with its description; the ones in ``values`` set, the others
    commented out with their defaults."""
    lines: list[str] = []
    for name, info in fields(cls).items():
        lines += _comment(info.description or "", indent)
        example = values.get(name, EXAMPLES.get((cls, name)))
        if isinstance(example, list) and (cls, name) in NESTED:
            lines.append(f"{indent}{name}:")
            lines += _items(NESTED[(cls, name)], example, indent + "  ")
        elif isinstance(example, dict) and (cls, name) in NESTED:
            lines.append(f"{indent}{name}:")
            lines += _section(NESTED[(cls, name)], example, indent + "  ")
        elif name in values:
            lines.append(f"{indent}{name}: {yaml_value(values[name])}")
        else:
            lines.append(f"{indent}# {name}: {yaml_value(default(info))}")
    return lines


def _items(cls: type[BaseModel], items: Sequence[Mapping[str, Any]], indent: str) -> list[str]:
    """A list of ``cls``: the first item with every key (see :func:`_section`), the others with
    the keys they set."""
    lines: list[str] = []
    for index, item in enumerate(items):
        if index == 0:
            body = _section(cls, item, indent + "  ")
        else:
            body = [f"{indent}  {key}: {yaml_value(value)}" for key, value in item.items()]
        # The item's dash goes on its first key, whose description stands above at the dash.
        first = next(i for i, line in enumerate(body) if not line.lstrip().startswith("#"))
        lines += [f"{indent}{line.lstrip()}" for line in body[:first]]
        lines.append(f"{indent}- {body[first].lstrip()}")
        lines += body[first + 1 :]
    return lines


def example_file() -> str:
    """``wiki_assets.example.yaml``: every section of the project file, in its order."""
    lines = HEADER.splitlines()
    opened: tuple[str, ...] = ()
    for keys, cls in SECTIONS.items():
        shared = 0
        while shared < len(opened) and shared < len(keys) and opened[shared] == keys[shared]:
            shared += 1
        lines.append("")
        for depth in range(shared, len(keys)):
            indent = "  " * depth
            if depth == len(keys) - 2 and cls.__doc__:
                lines += _comment(" ".join(cls.__doc__.split()), indent)
            lines.append(f"{indent}{keys[depth]}:")
        lines += _section(cls, {}, "  " * len(keys))
        opened = keys
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wiki_assets.docgen", description=__doc__)
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if wiki_assets.example.yaml or the README's table is stale",
    )
    args = parser.parse_args(argv)
    example = example_file()
    readme = README.read_text(encoding="utf-8") if README.is_file() else ""
    if args.check:
        stale = []
        if not EXAMPLE_FILE.is_file() or EXAMPLE_FILE.read_text(encoding="utf-8") != example:
            stale.append(f"{EXAMPLE_FILE.name} (run python -m wiki_assets.docgen)")
        if readme_dials(readme) != readme_block():
            stale.append(f"{README.name}'s dial table (paste python -m wiki_assets.docgen's)")
        for what in stale:
            print(f"out of date: {what}", file=sys.stderr)
        return 1 if stale else 0
    EXAMPLE_FILE.write_text(example, encoding="utf-8")
    print(readme_block())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
