"""The layout rules, checked on the source (AST only, nothing imported): no library module imports a command (only
python_jobs/commands/ and python_jobs/cli.py may), only those import click, and no test module imports another
test module (tests share code through tests/support/ and fixtures through conftest.py files), no module of
python_jobs/ or dashboards/ imports another module's `_private` name, every import between rooms (the packages of
python_jobs/, dashboards/) runs down the floors declared in FLOORS, no intermediate dbt model reads a mart, and no two
modules of one package differ only by a suffix; the last test shows each rule failing on a tree that breaks it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "python_jobs"
COMMANDS = f"{PACKAGE}.commands"
# the layer every package builds on: it imports nothing of python_jobs outside itself (the lake's validator is
# registered from outside: python_jobs/validation/__init__.py)
CORE = f"{PACKAGE}.core"
# the command layer: the only modules allowed to import commands and click
CLI_LAYER = ("python_jobs/commands/", "python_jobs/cli.py")
# the project's non-test code; tests are left out of the click rule (a test may drive a command through click)
CODE_DIRS = ("python_jobs", "dashboards", "bench")
# where a module's `_name` is its own: another module needing it means it is public (tests may reach in)
PRIVATE_RULE_DIRS = ("python_jobs", "dashboards")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path) -> Iterator[tuple[ast.stmt | ast.Call, list[str]]]:
    """Every import statement of a file (and importlib.import_module / __import__ of a literal name) with the
    dotted names it may import: the module, and for `from M import x` also `M.x` (x may be a submodule).
    Relative imports are resolved against the file's package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield node, [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            yield node, [module, *(f"{module}.{alias.name}" if module else alias.name for alias in node.names)]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
            yield node, [node.args[0].value]


def where(path: Path, root: Path, node: ast.AST) -> str:
    return f"{path.relative_to(root).as_posix()}:{node.lineno}: {ast.unparse(node)}"


def in_cli_layer(path: Path, root: Path) -> bool:
    rel = path.relative_to(root).as_posix()
    return rel.startswith(CLI_LAYER[0]) or rel == CLI_LAYER[1]


def python_files(root: Path, *dirs: str) -> list[Path]:
    return sorted(p for d in dirs if (root / d).is_dir() for p in (root / d).rglob("*.py"))


def library_imports_of_commands(root: Path) -> list[str]:
    found = []
    for path in python_files(root, PACKAGE):
        if in_cli_layer(path, root):
            continue
        for node, names in imports(path, root):
            if any(n == COMMANDS or n.startswith(f"{COMMANDS}.") for n in names):
                found.append(where(path, root, node))
    return found


def click_imports_outside_the_cli(root: Path) -> list[str]:
    found = []
    for path in python_files(root, *CODE_DIRS):
        if in_cli_layer(path, root):
            continue
        for node, names in imports(path, root):
            if any(n.split(".")[0] == "click" for n in names):
                found.append(where(path, root, node))
    return found


def imports_between_test_modules(root: Path) -> list[str]:
    """Imports, in any file under tests/, of a name with a part that starts with `test_` or `conftest`."""
    found = []
    for path in python_files(root, "tests"):
        for node, names in imports(path, root):
            if any(part.startswith(("test_", "conftest")) for n in names for part in n.split(".")):
                found.append(where(path, root, node))
    return found


def private_imports(root: Path) -> list[str]:
    """`from M import _name` (one leading underscore; dunders are Python's own) in python_jobs/ and dashboards/."""
    found = []
    for path in python_files(root, *PRIVATE_RULE_DIRS):
        for node, _ in imports(path, root):
            if isinstance(node, ast.ImportFrom) and any(
                    a.name.startswith("_") and not a.name.startswith("__") for a in node.names):
                found.append(where(path, root, node))
    return found


# The floors of the house, lowest first: a room (a package of python_jobs/, or dashboards/) imports only rooms on
# lower floors, never one on its own floor or above, so every arrow runs down and no two rooms lean on each other.
# core is what every package builds on (the lake's validator is registered from outside: python_jobs/__init__.py,
# the package's face, which is no room). A new package takes its place here.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("python_jobs/core",),
    ("python_jobs/stats", "python_jobs/llm", "python_jobs/corpus", "python_jobs/validation"),
    ("python_jobs/warehouse", "python_jobs/judge", "python_jobs/generation", "python_jobs/page_scoring",
     "python_jobs/demo"),
    ("python_jobs/marts", "python_jobs/sources", "python_jobs/retrieval"),
    ("python_jobs/gate", "python_jobs/qa_generation", "python_jobs/sweeps", "python_jobs/reranking",
     "python_jobs/labelling", "dashboards"),
    ("python_jobs/commands", "python_jobs/cli.py"),
)


def room_of_path(path: Path, root: Path) -> str | None:
    """A file's room: its top folder under python_jobs/ (or python_jobs/cli.py), or dashboards; None for the
    package's face (python_jobs/__init__.py)."""
    parts = path.relative_to(root).parts
    if parts[0] == "dashboards":
        return "dashboards"
    if len(parts) == 2:
        return None if parts[1] == "__init__.py" else "/".join(parts)
    return "/".join(parts[:2])


def room_of_module(name: str, root: Path) -> str | None:
    """The room a dotted name imports (None: not the project's, or the bare package)."""
    parts = name.split(".")
    if parts[0] == "dashboards":
        return "dashboards"
    if parts[0] != PACKAGE or len(parts) < 2:
        return None
    return f"{PACKAGE}/{parts[1]}.py" if (root / PACKAGE / f"{parts[1]}.py").is_file() else f"{PACKAGE}/{parts[1]}"


def floor_of(room: str) -> int | None:
    return next((i for i, rooms in enumerate(FLOORS) if room in rooms), None)


def imports_that_do_not_run_down(root: Path) -> list[str]:
    """Imports, in python_jobs/ and dashboards/, of another room on the same floor or above (relative imports
    resolved), and every room with no floor."""
    found = []
    for path in python_files(root, PACKAGE, "dashboards"):
        room = room_of_path(path, root)
        if room is None:
            continue
        here = floor_of(room)
        if here is None:
            found.append(f"{room}: on no floor (tests/unit/test_layout.py FLOORS)")
            continue
        for node, names in imports(path, root):
            for target in {room_of_module(n, root) for n in names} - {None, room}:
                there = floor_of(target)
                if there is None or there >= here:
                    found.append(f"{where(path, root, node)} (floor {here + 1} imports {target}, floor "
                                 f"{'none' if there is None else there + 1})")
                    break
    return sorted(set(found))


# dbt's layers: staging reads sources, intermediate reads staging and intermediate, marts read anything below them;
# an intermediate model that reads a mart makes a mart and what it feeds lean on each other
REF = re.compile(r"""\bref\(\s*['"]([A-Za-z0-9_]+)['"]\s*\)""")


def intermediate_models_reading_marts(root: Path) -> list[str]:
    marts = {p.stem for p in (root / "models" / "marts").rglob("*.sql")}
    found = []
    for path in sorted((root / "models" / "intermediate").rglob("*.sql")):
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.relative_to(root).as_posix()}:{lineno}: ref('{name}') is a mart"
                      for name in REF.findall(line) if name in marts]
    return found


def test_no_library_module_imports_a_command() -> None:
    assert len([p for p in python_files(ROOT, PACKAGE) if not in_cli_layer(p, ROOT)]) > 20  # the scan sees the code
    offending = library_imports_of_commands(ROOT)
    assert not offending, ("library modules import a command (only python_jobs/commands/ and python_jobs/cli.py "
                           "may):\n" + "\n".join(offending))


def test_only_the_cli_layer_imports_click() -> None:
    offending = click_imports_outside_the_cli(ROOT)
    assert not offending, ("click imported outside python_jobs/commands/ and python_jobs/cli.py:\n"
                           + "\n".join(offending))


def test_no_test_module_imports_another() -> None:
    assert len(python_files(ROOT, "tests")) > 30  # the scan sees the tests
    offending = imports_between_test_modules(ROOT)
    assert not offending, ("test code imports a test module or conftest (share helpers through tests/support/ and "
                           "fixtures through conftest.py):\n" + "\n".join(offending))


def test_imports_run_down_the_floors() -> None:
    assert len(python_files(ROOT, CORE.replace(".", "/"))) > 5  # the scan sees core
    offending = imports_that_do_not_run_down(ROOT)
    assert not offending, ("an import runs sideways or up the floors (FLOORS above; move the code down, or invert "
                           "the dependency as python_jobs/core/validator.py does):\n" + "\n".join(offending))


def test_no_intermediate_model_reads_a_mart() -> None:
    assert len(list((ROOT / "models" / "intermediate").rglob("*.sql"))) > 5  # the scan sees the models
    offending = intermediate_models_reading_marts(ROOT)
    assert not offending, ("an intermediate model reads a mart (move it up to models/marts/, or what it reads "
                           "down):\n" + "\n".join(offending))


def test_no_module_imports_another_modules_private_name() -> None:
    offending = private_imports(ROOT)
    assert not offending, ("a module imports another module's private name (make it public where it is, or move it "
                           "to the module that uses it):\n" + "\n".join(offending))


ENGLISH_SUFFIXES = {"s", "es", "er", "ers", "ing", "ion", "ions", "ed", "ment", "ments"}


def suffixed(a: str, b: str) -> bool:
    """b is a + a suffix: a word ending (judge → judging, serve → server, publish → publishing) or `_more`."""
    for stem in {a, a.removesuffix("e")}:
        rest = b[len(stem):] if b.startswith(stem) and b != a else None
        if rest is not None and (rest.startswith("_") or rest in ENGLISH_SUFFIXES):
            return True
    return False


def near_homonyms(root: Path, package: str) -> list[str]:
    """Pairs of modules (or subpackages) in one package whose names differ only by a suffix (judge / judging,
    answer / answer_files): the flat layout's trap, where a name no longer says which of the two to open."""
    found = []
    for folder in sorted(p for p in [root / package, *(root / package).rglob("*")] if p.is_dir()):
        names = sorted({p.stem for p in folder.iterdir()
                        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()})
        found += [f"{folder.relative_to(root).as_posix()}: {a} / {b}" for a in names for b in names
                  if a != b and suffixed(a.lstrip("_"), b.lstrip("_"))]
    return found


def test_no_two_modules_of_a_package_differ_only_by_a_suffix() -> None:
    offending = near_homonyms(ROOT, PACKAGE)
    assert not offending, "modules whose names differ only by a suffix:\n" + "\n".join(offending)


def test_the_layout_checks_catch_what_they_forbid(tmp_path: Path) -> None:
    # the rules above would pass on any tree they cannot read: here each one sees a tree that breaks it
    (tmp_path / "python_jobs" / "commands").mkdir(parents=True)
    (tmp_path / "python_jobs" / "judging").mkdir()
    (tmp_path / "tests").mkdir()
    for init in ("python_jobs", "python_jobs/commands", "python_jobs/judging"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "python_jobs" / "commands" / "judge.py").write_text("import click\n")
    (tmp_path / "python_jobs" / "judging" / "runs.py").write_text(
        "import click\nfrom ..commands import judge\nfrom python_jobs.commands.judge import main\n")
    (tmp_path / "python_jobs" / "judge.py").write_text("")
    (tmp_path / "python_jobs" / "core").mkdir()
    (tmp_path / "python_jobs" / "core" / "__init__.py").write_text("")
    (tmp_path / "python_jobs" / "core" / "lake.py").write_text(
        "import python_jobs\nfrom python_jobs.core import errors\nfrom .config import home\n"
        "from python_jobs.validation import expectations\nfrom ..corpus import chunking\n"
        "from python_jobs import validation\n")
    (tmp_path / "python_jobs" / "stats").mkdir()
    (tmp_path / "python_jobs" / "marts").mkdir()
    (tmp_path / "python_jobs" / "llm").mkdir()
    (tmp_path / "python_jobs" / "stats" / "t.py").write_text(
        "from python_jobs.marts import reports\nfrom python_jobs.llm import client\nfrom python_jobs.core import x\n")
    (tmp_path / "dashboards").mkdir()
    (tmp_path / "dashboards" / "app.py").write_text(
        "from __future__ import annotations\nfrom python_jobs.judging.runs import _parse, load\nfrom .data import _q\n")
    (tmp_path / "tests" / "test_b.py").write_text("from test_a import helper\nimport conftest\n")
    assert library_imports_of_commands(tmp_path) == [
        "python_jobs/judging/runs.py:2: from ..commands import judge",
        "python_jobs/judging/runs.py:3: from python_jobs.commands.judge import main",
    ]
    assert click_imports_outside_the_cli(tmp_path) == ["python_jobs/judging/runs.py:1: import click"]
    assert imports_between_test_modules(tmp_path) == [
        "tests/test_b.py:1: from test_a import helper", "tests/test_b.py:2: import conftest",
    ]
    assert near_homonyms(tmp_path, PACKAGE) == ["python_jobs: judge / judging"]
    assert private_imports(tmp_path) == [
        "dashboards/app.py:2: from python_jobs.judging.runs import _parse, load",
        "dashboards/app.py:3: from .data import _q",
    ]
    assert imports_that_do_not_run_down(tmp_path) == [
        "dashboards/app.py:2: from python_jobs.judging.runs import _parse, load (floor 5 imports "
        "python_jobs/judging, floor none)",
        "python_jobs/core/lake.py:4: from python_jobs.validation import expectations (floor 1 imports "
        "python_jobs/validation, floor 2)",
        "python_jobs/core/lake.py:5: from ..corpus import chunking (floor 1 imports python_jobs/corpus, floor 2)",
        "python_jobs/core/lake.py:6: from python_jobs import validation (floor 1 imports python_jobs/validation, "
        "floor 2)",
        "python_jobs/judge.py: on no floor (tests/unit/test_layout.py FLOORS)",
        "python_jobs/judging: on no floor (tests/unit/test_layout.py FLOORS)",
        "python_jobs/stats/t.py:1: from python_jobs.marts import reports (floor 2 imports python_jobs/marts, floor 4)",
        "python_jobs/stats/t.py:2: from python_jobs.llm import client (floor 2 imports python_jobs/llm, floor 2)",
    ]
    for model, sql in (("staging/stg_lake__runs", "select 1"), ("marts/overview/mart_runs", "select 1"),
                       ("intermediate/int_ok", "select * from {{ ref('stg_lake__runs') }}"),
                       ("intermediate/int_up", "select *\nfrom {{ ref( \"mart_runs\" ) }}")):
        (tmp_path / "models" / model).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "models" / f"{model}.sql").write_text(sql)
    assert intermediate_models_reading_marts(tmp_path) == [
        "models/intermediate/int_up.sql:2: ref('mart_runs') is a mart"]
