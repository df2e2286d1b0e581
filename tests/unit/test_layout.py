"""The layout rules, checked on the source (AST only, nothing imported): no library module imports a command (only
python_jobs/commands/ and python_jobs/cli.py may), only those import click, and no test module imports another
test module (tests share code through tests/support/ and fixtures through conftest.py files), no module of
python_jobs/ or dashboards/ imports another module's `_private` name, no module of python_jobs/core/ imports a
python_jobs module outside core, and no two modules of one package differ only by a suffix; the last test shows each
rule failing on a tree that breaks it."""

from __future__ import annotations

import ast
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


def core_imports_outside_core(root: Path) -> list[str]:
    """Imports, in any module under python_jobs/core/, of a python_jobs module outside core (relative imports
    resolved; the bare package `python_jobs` is left out: importing any core module has already imported it)."""
    found = []
    for path in python_files(root, CORE.replace(".", "/")):
        for node, names in imports(path, root):
            if any(n.startswith(f"{PACKAGE}.") and n != CORE and not n.startswith(f"{CORE}.") for n in names):
                found.append(where(path, root, node))
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


def test_core_imports_nothing_outside_core() -> None:
    assert len(python_files(ROOT, CORE.replace(".", "/"))) > 5  # the scan sees core
    offending = core_imports_outside_core(ROOT)
    assert not offending, ("python_jobs/core/ imports a python_jobs module outside core (core is what the other "
                           "packages build on; invert the dependency as core/validator.py does):\n"
                           + "\n".join(offending))


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
    assert core_imports_outside_core(tmp_path) == [
        "python_jobs/core/lake.py:4: from python_jobs.validation import expectations",
        "python_jobs/core/lake.py:5: from ..corpus import chunking",
        "python_jobs/core/lake.py:6: from python_jobs import validation",
    ]
