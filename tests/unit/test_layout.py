"""The layout rules, checked on the source (AST only, nothing imported): no library module imports a command (only
python_jobs/commands/ and python_jobs/cli.py may), only those import click, and no test module imports another
test module (tests share code through tests/support/ and fixtures through conftest.py files)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "python_jobs"
COMMANDS = f"{PACKAGE}.commands"
# the command layer: the only modules allowed to import commands and click
CLI_LAYER = ("python_jobs/commands/", "python_jobs/cli.py")
# the project's non-test code; tests are left out of the click rule (a test may drive a command through click)
CODE_DIRS = ("python_jobs", "dashboards", "bench")


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
