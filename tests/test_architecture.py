"""The house's rules, checked from the source: no import circles, a dispatcher and a simulation
free of ``openai``, a dispatcher that imports nothing of the run around it, rooms of a size a
reader can hold, an engine without Dagster, and a Dagster layer of a folder per domain.

The import graph is read with :mod:`ast` from the files under ``wiki_assets/`` (nothing is
imported). It counts the imports a reader meets at the top of a module: module-level ones,
including those under ``if TYPE_CHECKING:`` (a circle of types is still a circle to hold in one's
head) and those in a module-level ``try``/``if``. It leaves out imports inside functions: they run
when called, deliberately late (the CLI's, so that ``--help`` stays fast). ``from package import
name`` counts as importing ``package.name`` when that is a module, else ``package``; the implicit
import of a module's parent packages is not counted (a package's ``__init__`` that re-exports its
modules' names would otherwise be in a circle with each of them).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "wiki_assets"
MAX_LINES = 350
MAX_METHODS = 25
DEFS = PACKAGE / "defs"
DEFS_ROOT_MODULES = 6  # at most, __init__.py included
DEFS_DOMAINS = ("wiki_pages", "index", "verification", "digest", "sync")


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _top_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports of a module's body, under its ``if``, ``try`` and ``with`` blocks too, but not
    inside its functions or classes."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            yield from _top_level_imports(node.body)
            yield from _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _top_level_imports(block)
        elif isinstance(node, ast.With):
            yield from _top_level_imports(node.body)


def _imported(name: str, path: Path) -> set[str]:
    """The modules of ``wiki_assets`` that module ``name`` imports at its top level."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _top_level_imports(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:  # relative: from the module's package, ``level - 1`` packages up
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, *([node.module] if node.module else [])])
        for alias in node.names:
            found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {module for module in found if module in MODULES and module != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_itself_through_others() -> None:
    graph = {name: _imported(name, path) for name, path in MODULES.items()}
    assert "wiki_assets.engine.ingestion.flush" in graph["wiki_assets.engine.ingestion.run"]
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _room(module: str) -> str:
    """The room a module is in: the engine's folder or root module (``engine.dispatch``,
    ``engine.config``), or the package's top-level folder or module (``virtual_time``, ``defs``)."""
    parts = module.split(".")[1:] or ["wiki_assets"]
    return ".".join(parts[:2]) if parts[0] == "engine" and len(parts) > 1 else parts[0]


def _room_imports() -> dict[str, dict[str, set[str]]]:
    """Room to room: for each room, the rooms it imports and, for each, the modules that do."""
    rooms: dict[str, dict[str, set[str]]] = {}
    for name, path in MODULES.items():
        imports = rooms.setdefault(_room(name), {})
        for other in _imported(name, path):
            if _room(other) != _room(name):
                imports.setdefault(_room(other), set()).add(name)
    return rooms


ROOMS = _room_imports()


def test_no_room_of_the_engine_imports_a_room_that_imports_it_back() -> None:
    engine = {
        room: {other for other in imports if other.startswith("engine.")}
        for room, imports in ROOMS.items()
        if room.startswith("engine.")
    }
    assert {"engine.dispatch", "engine.prompting", "engine.llm"} <= engine.keys()
    assert "engine.prompting" in engine["engine.dispatch"]
    assert _cycles(engine) == []


def test_the_prompting_room_imports_nothing_above_it() -> None:
    """What a model answers is read by every layer, so it stands on the configuration alone (and
    on the text helpers, a leaf: where a sentence ends)."""
    assert set(ROOMS["engine.prompting"]) <= {"engine.config", "engine.errors", "engine.text"}


def test_the_dispatcher_and_the_simulation_import_nothing_of_the_model_client_room() -> None:
    found = {
        room: sorted(ROOMS[room].get("engine.llm", ()))
        for room in ("engine.dispatch", "virtual_time")
    }
    assert found == {"engine.dispatch": [], "virtual_time": []}


def test_the_model_client_room_imports_nothing_of_the_quality_checks() -> None:
    assert sorted(ROOMS["engine.llm"].get("engine.quality", ())) == []
    assert "engine.prompting" in ROOMS["engine.llm"]


def _reached(room: str) -> set[str]:
    """The modules of ``wiki_assets`` that the modules of an engine's room (``quality``) import,
    directly or through others."""
    graph = {name: _imported(name, path) for name, path in MODULES.items()}
    todo = [name for name in graph if _room(name) == f"engine.{room}"]
    reached: set[str] = set()
    while todo:
        for other in graph[todo.pop()] - reached:
            reached.add(other)
            todo.append(other)
    return reached


def test_the_quality_and_state_rooms_reach_nothing_of_the_related_index() -> None:
    """Normalised text, scripts and sentence ends are :mod:`wiki_assets.engine.text`'s: the page
    checks and the journal stand without the link index (and its numpy), even through others."""
    reached = {room: _reached(room) for room in ("quality", "state")}
    assert "wiki_assets.engine.text.normalize" in reached["quality"]
    assert "wiki_assets.engine.quality.sentences" in reached["state"]
    related = {
        room: sorted(name for name in modules if _room(name) == "engine.related")
        for room, modules in reached.items()
    }
    assert related == {"quality": [], "state": []}


def test_the_text_room_stands_on_the_standard_library_alone() -> None:
    """Every room reads text through it, so it imports no other room and nothing installed (its
    own modules aside)."""
    imported = set()
    for name, path in MODULES.items():
        if _room(name) == "engine.text":
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    imported.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    imported.add("." * node.level + (node.module or ""))
    assert "unicodedata" in imported
    outside = {
        module
        for module in imported
        if module.split(".")[0] not in sys.stdlib_module_names
        and not module.startswith("wiki_assets.engine.text.")
    }
    assert outside == set()


# How a source spells the Hangul syllables' range (U+AC00-U+D7A3) or the jamo's (U+1100-U+11FF,
# U+3130-U+318F): escaped in any case, or as the characters themselves.
_HANGUL_RANGES = (
    *("\\uac00", "\\ud7a3", "\\u1100", "\\u3130"),
    *("\uac00-", "-\ud7a3", "\u1100-", "\u3130-"),
)


def _spells_a_hangul_range(source: str) -> bool:
    return any(spelling in source.lower() for spelling in _HANGUL_RANGES)


def test_the_hangul_classes_are_spelt_in_one_module() -> None:
    """The Hangul syllables and jamo are :mod:`wiki_assets.engine.text.scripts`'s: a check, the
    compact request, the language of a page and the simulator all take them from there, so no
    two of them can disagree on what a Korean word is."""
    assert _spells_a_hangul_range(r'_HANGUL = re.compile(r"[\uAC00-\uD7A3]+")')
    assert _spells_a_hangul_range('re.compile("[\uac00-\ud7a3]")')  # the characters 가-힣
    assert not _spells_a_hangul_range("휴가 신청 (가나다)")
    spelt = [
        str(path.relative_to(PACKAGE.parent))
        for path in MODULES.values()
        if _spells_a_hangul_range(path.read_text(encoding="utf-8"))
    ]
    assert spelt == ["wiki_assets/engine/text/scripts.py"]


def test_the_dispatcher_and_the_simulation_import_neither_openai_nor_the_model_client() -> None:
    """They read a model's answers as :mod:`~wiki_assets.engine.prompting.results`; only the run
    talks to a real endpoint."""
    code = (
        "import sys, wiki_assets.engine.dispatch, wiki_assets.virtual_time\n"
        "print(sorted(m for m in ('openai', 'wiki_assets.engine.llm.client',"
        " 'wiki_assets.engine.llm.chat') if m in sys.modules))\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert shown == "[]"


def test_the_dispatcher_imports_nothing_of_the_run_around_it() -> None:
    """The dispatcher counts what it did (:mod:`~wiki_assets.engine.dispatch.tally`) and the
    run's report takes it: no module of the dispatcher imports the ingestion's, the report's
    included."""
    dispatch = "wiki_assets.engine.dispatch"
    ingestion = "wiki_assets.engine.ingestion"
    imports = {
        name: sorted(
            module
            for module in _imported(name, path)
            if module == ingestion or module.startswith(f"{ingestion}.")
        )
        for name, path in MODULES.items()
        if name == dispatch or name.startswith(f"{dispatch}.")
    }
    assert "wiki_assets.engine.dispatch.request" in imports
    assert {name: found for name, found in imports.items() if found} == {}


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in MODULES.values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"over {MAX_LINES} lines: split by concern"


def test_no_class_has_more_methods_than_a_reader_can_hold() -> None:
    crowded = {}
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = [
                    item
                    for item in node.body
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                if len(methods) > MAX_METHODS:
                    crowded[f"{path.relative_to(PACKAGE.parent)}:{node.name}"] = len(methods)
    assert crowded == {}, f"over {MAX_METHODS} methods"


def test_the_engine_imports_no_dagster() -> None:
    """Anywhere in a module, functions included: the engine is a plain library."""
    dagster = {}
    for name, path in MODULES.items():
        if not name.startswith("wiki_assets.engine"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for module in modules:
                if module.split(".")[0].startswith("dagster"):
                    dagster[name] = module
    assert dagster == {}


# Dagster's private names the CLI still takes, each where it is taken: starting a run of the code
# location in this process, which no public API does (runner.py says why).
CLI_PRIVATE_DAGSTER = {
    "wiki_assets.cli.runner": {
        "dagster._core.definitions.selector.JobSubsetSelector",
        "dagster._core.execution.api.execute_run",
        "dagster._core.remote_origin.InProcessCodeLocationOrigin",
        "dagster._core.types.loadable_target_origin.LoadableTargetOrigin",
        "dagster._utils.hosted_user_process.recon_job_from_origin",
    }
}


def test_the_cli_takes_no_private_name_of_dagster_beyond_starting_a_run() -> None:
    """Anywhere in a module of ``wiki_assets/cli/``, functions included: a private name breaks on
    a Dagster upgrade, so each one is listed here, and a module that takes one says why."""
    taken: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        if not name.startswith("wiki_assets.cli"):
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            private = {n for n in names if n.startswith("dagster._")}
            if private:
                taken.setdefault(name, set()).update(private)
                assert "No public API serves here" in source, f"{name} does not say why"
    assert taken == CLI_PRIVATE_DAGSTER


def _engine_public_names() -> tuple[dict[str, str], dict[str, str]]:
    """``wiki_assets.engine``'s public names as its ``_HOME`` maps them to modules, and as its
    ``TYPE_CHECKING`` block imports them, both read from the source."""
    tree = ast.parse((PACKAGE / "engine" / "__init__.py").read_text(encoding="utf-8"))
    home: dict[str, str] = {}
    checked: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and ast.unparse(statement.targets[0]) == "_HOME":
            home = ast.literal_eval(statement.value)
        elif isinstance(statement, ast.If) and ast.unparse(statement.test) == "TYPE_CHECKING":
            for node in statement.body:
                assert isinstance(node, ast.ImportFrom) and node.module
                checked.update({alias.asname or alias.name: node.module for alias in node.names})
    return home, checked


def test_the_engines_public_names_agree_for_python_and_for_type_checkers() -> None:
    home, checked = _engine_public_names()
    assert "ingest" in home
    assert home == checked


def test_no_room_of_the_engine_takes_a_public_name() -> None:
    """``wiki_assets.engine``'s public names are imported when first used; a module or folder of
    the same name would replace the name once it is imported (a folder ``ingest/`` would hide
    :func:`~wiki_assets.engine.ingest`)."""
    public = set(_engine_public_names()[0])
    rooms = {name.split(".")[2] for name in MODULES if name.startswith("wiki_assets.engine.")}
    assert public & rooms == set()


def test_the_dagster_layer_is_a_folder_per_domain_around_a_small_root() -> None:
    """``wiki_assets/defs/``: each domain (an asset and what goes with it) a package of its own,
    with its assets module; at the root only what the domains share, in at most
    :data:`DEFS_ROOT_MODULES` modules. The CLI's helpers live in ``wiki_assets/cli/``."""
    root = sorted(path.name for path in DEFS.glob("*.py"))
    assert len(root) <= DEFS_ROOT_MODULES, f"{len(root)} modules at defs/'s root: {root}"
    missing = [
        domain
        for domain in DEFS_DOMAINS
        if not (DEFS / domain / "__init__.py").is_file()
        or not (DEFS / domain / "assets.py").is_file()
    ]
    assert missing == [], "a domain of defs/ without its package or its assets module"


def test_the_journals_columns_are_the_fields_of_its_entry(tmp_path: Path) -> None:
    """The ``documents`` table, the columns a query reads and the upsert all come from
    :class:`~wiki_assets.engine.state.entries.Entry`: a new field is one line there, and no
    module lists the columns by hand."""
    import dataclasses
    import sqlite3

    from wiki_assets.engine.state.entries import COLUMNS, UPSERT, Entry
    from wiki_assets.engine.state.journal import Journal
    from wiki_assets.engine.state.store import JOURNAL_FILE, StateStore

    names = [f.name for f in dataclasses.fields(Entry)]
    with Journal(StateStore(tmp_path)):
        pass
    with sqlite3.connect(tmp_path / JOURNAL_FILE) as db:
        table = [row[1] for row in db.execute("PRAGMA table_info(documents)")]
    assert table == [*names, "updated"]
    assert COLUMNS.split(", ") == names
    assert UPSERT.startswith(f"INSERT INTO documents ({', '.join([*names, 'updated'])})")
    listed = ", ".join(names[3:6])  # "fingerprint, status, page"
    by_hand = [
        str(path.relative_to(PACKAGE.parent))
        for path in MODULES.values()
        if listed in path.read_text(encoding="utf-8")
    ]
    assert by_hand == []


# Modules of defs/ and cli/ whose literals name facts of their own that share a word with a figure
# of a run: they are not the run's figures, and each is declared where it is used.
OTHER_FACTS = {
    # The other assets' and the checks' metadata keys (a collection's counts, the index's).
    "defs/metadata/materializations.py": None,
    # The plan's JSON (`plan --json`, its estimate from past runs' rates): a plan's fields.
    "defs/sync/plan.py": None,
    "cli/plan.py": None,
    "defs/names.py": {"collections"},  # the partitions definition's name
    "defs/settings.py": {"models"},  # the summarizer's config field
    "defs/wiki_pages/checks.py": {"name", "flags"},  # a check spec's keyword; a page's result
    "cli/commands.py": {"unfinished", "models", "checked"},  # `plan --json`'s, `check --json`'s
    # `check`'s table; `runs --compare --json`'s run summary; the brief view's status word.
    "cli/text.py": {"checked", "flagged_share", "stopped"},
    "defs/metadata/comparison.py": {"stopped"},  # a note of the comparison, in words
}


def test_each_figure_is_declared_once() -> None:
    """A run's figures are declared in the engine (ingestion/figures.py, model_figures.py): their
    names, types, units and where they are shown. Dagster's metadata keys and tables, the CLI's
    JSON fields and the `runs` columns and headers are derived from there, so no module of defs/
    or cli/ writes one as a string literal."""
    from wiki_assets.defs.metadata import run_figures as md
    from wiki_assets.engine.ingestion import figures, model_figures
    from wiki_assets.engine.ingestion.figure import Place, Shown

    declared = (*figures.RUN_FIGURES, *figures.DIAL_FIGURES, *model_figures.MODEL_FIGURES)
    names = {figure.name for figure in declared} | {figure.column for figure in declared}
    names |= {table.name for table in md.TABLES.values()} | {figures.MODELS}
    found = []
    for path in sorted([*DEFS.rglob("*.py"), *(PACKAGE / "cli").rglob("*.py")]):
        module = str(path.relative_to(PACKAGE))
        allowed = OTHER_FACTS.get(module, set())
        if allowed is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{module}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and node.value in names - allowed
            and not _is_docstring(tree, node)
        ]
    assert found == [], "a figure's name written by hand:\n" + "\n".join(found)
    # Every metadata key of a run is a declared figure's, in its place; the tables are named by
    # their place.
    placed = {figure.name for figure in declared if figure.place is not None}
    assert {key.name for key in (*md.RUN, *md.MODEL)} == placed
    assert {table.name for table in md.TABLES.values()} == {
        place.value for place in (Place.DETAILS, Place.DIALS, Place.MODELS, Place.MODEL_DETAILS)
    }
    # Every dial of a run is a figure (Dials' fields, less the engine's own).
    from dataclasses import fields

    from wiki_assets.engine.config import ENGINE_DIALS, Dials

    dials = {f.name for f in fields(Dials)} - ENGINE_DIALS
    assert dials <= {figure.name for figure in figures.DIAL_FIGURES}
    # The CLI's JSON: its own three fields, each figure declared for it, and the models'.
    from wiki_assets.cli.runner import SUMMARY_FIGURES

    assert SUMMARY_FIGURES == tuple(f for f in figures.RUN_FIGURES if Shown.CLI in f.shown)
    assert all(figure.about and figure.kind for figure in declared)


def _is_docstring(tree: ast.Module, node: ast.Constant) -> bool:
    return any(
        isinstance(parent, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and parent.body
        and isinstance(parent.body[0], ast.Expr)
        and parent.body[0].value is node
        for parent in ast.walk(tree)
    )


def test_the_architecture_page_draws_the_engines_rooms_as_they_are() -> None:
    """docs/architecture.md's table of the engine's rooms names every room and, for each, the
    rooms it imports: what the code imports today, no more and no less."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text.split("<!-- rooms:start -->")[1].split("<!-- rooms:end -->")[0]
    drawn: dict[str, set[str]] = {}  # in the table's order, top to leaves
    for row in table.strip().splitlines()[2:]:
        rooms, _, imports = (cell.strip() for cell in row.strip("|").split("|"))
        for room in re.findall(r"`(\w+)`", rooms):
            drawn[f"engine.{room}"] = {f"engine.{name}" for name in re.findall(r"\w+", imports)}
    order = list(drawn)
    above = [(room, other) for room, imports in drawn.items() for other in imports
             if order.index(other) <= order.index(room)]  # fmt: skip
    assert above == [], "a room imports one drawn above it"
    actual = {
        room: {other for other in imports if other.startswith("engine.") and other != room}
        for room, imports in ROOMS.items()
        if room.startswith("engine.")
    }
    assert drawn == actual
