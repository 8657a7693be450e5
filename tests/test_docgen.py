"""The README's dial table and `wiki_assets.example.yaml` are written from the configuration's own
definitions (`python -m wiki_assets.docgen`): each field's name, default and description is defined
once, in the engine's config (the resources' in `wiki_assets/defs`), and both documents must say
what those definitions say. The example file is also a valid project file whose values are the
defaults, bar its example fleet."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from wiki_assets import docgen
from wiki_assets.defs.digest import DigestResource
from wiki_assets.defs.resources import CorpusResource
from wiki_assets.defs.settings import load_settings, read_file
from wiki_assets.defs.wiki_pages import IngestConfig
from wiki_assets.engine.llm.local_server import PORTABLE_CMAKE_ARGS, REBUILD_HINT


def test_the_example_file_is_the_generated_one() -> None:
    committed = docgen.EXAMPLE_FILE.read_text(encoding="utf-8")
    assert committed == docgen.example_file(), (
        f"{docgen.EXAMPLE_FILE.name} is out of date: run python -m wiki_assets.docgen"
    )


def test_the_readme_dial_table_is_the_generated_one() -> None:
    held = docgen.readme_dials(docgen.README.read_text(encoding="utf-8"))
    assert held is not None, (
        f"README.md has no dial table between {docgen.DIALS_START!r} and {docgen.DIALS_END!r}: "
        "paste what python -m wiki_assets.docgen prints"
    )
    assert held == docgen.readme_block(), (
        "README.md's dial table is out of date: paste what python -m wiki_assets.docgen prints"
    )


def test_the_table_has_a_row_per_dial_with_its_default_and_description() -> None:
    rows = docgen.dial_table().splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == list(IngestConfig.model_fields)
    claim_size = next(row for row in rows if row.startswith("| `claim_size` |"))
    assert claim_size.startswith("| `claim_size` | 32 | Documents a worker takes from the shared")
    assert "| `redo_models` | [] |" in docgen.dial_table()


def test_a_new_dial_is_in_the_table_without_being_written_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class WithAnotherDial(IngestConfig):
        another_dial: float = Field(default=0.5, description="A dial added | later.")

    monkeypatch.setattr(docgen, "DIALS_CLASS", WithAnotherDial)
    assert docgen.dial_table().splitlines()[-1] == (
        "| `another_dial` | 0.5 | A dial added \\| later. |"
    )


def test_the_example_file_is_a_valid_project_file_of_defaults_and_a_fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no wiki_assets.yaml of the working directory under it
    for name in ("WIKI_ASSETS_CONFIG", "WIKI_ASSETS_SYNCED_ROOT", "WIKI_ASSETS_DIGEST_TIMEZONE"):
        monkeypatch.delenv(name, raising=False)
    read_file(docgen.EXAMPLE_FILE)
    settings = load_settings(docgen.EXAMPLE_FILE)
    assert settings.dials.model_dump() == IngestConfig().model_dump()
    assert settings.corpus.model_dump() == CorpusResource().model_dump()
    assert settings.digest.model_dump() == DigestResource().model_dump()
    models = [model.to_endpoint() for model in settings.summarizer.models]
    assert [(model.name, model.workers, model.api_key_env) for model in models] == [
        ("vllm", "auto", None),
        ("gateway", None, "GATEWAY_API_KEY"),
    ]


def test_the_context_window_is_said_to_split_long_documents_not_cut_them() -> None:
    text = docgen.example_file()
    assert "read in parts, none left out" in text and "cut to fit" not in text


def test_the_quickstart_and_ci_build_llama_cpp_for_a_portable_cpu_level() -> None:
    """Both README commands and CI's install carry the flags the rebuild hint gives, inline: a
    fresh machine never gets a native build that a virtual machine traps on."""
    inline = f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" .venv/bin/pip install'
    readme = docgen.README.read_text(encoding="utf-8")
    quickstart = readme[
        readme.index("## Quickstart") : readme.index("To watch it in the Dagster UI")
    ]
    commands = [line for line in quickstart.splitlines() if "pip install -e" in line]
    assert len(commands) == 2 and all(inline in line for line in commands)
    assert "--force-reinstall --no-cache-dir" in quickstart.split("```bash")[0]
    ci = (docgen.README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert any(inline in line and "pytest" in line for line in ci.splitlines())
    assert f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}"' in REBUILD_HINT
