"""The docs follow the code they describe, so a newcomer's map cannot drift from the tree:
- docs/cli.md is what tools/cli_reference.py renders from the `finrag` click group now (no verb omitted, no option
  stale), and the group lists every verb python_jobs/cli.py maps;
- every `finrag` verb is explained somewhere by hand (README.md, CONTRIBUTING.md or a docs/ page other than the
  generated reference), and every package of python_jobs/ and dashboards/ (a folder with __init__.py, found in the
  tree, so a new package fails this until it is documented) is named in the docs;
- every name in the README's flow picture (its mermaid block) that is a verb, a repository path (`../shared/...`
  where shared/ is beside the checkout, as CI lays it) or a dbt model exists; `$FINRAG_HOME/...` is a home's
  layout, made at run time, not the repository's.
The last tests show the checks failing on planted examples."""

from __future__ import annotations

import difflib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

from python_jobs.cli import VERBS
from support.paths import PROJECT

REGENERATE = ".venv/bin/python tools/cli_reference.py"
# the prefixes of dbt model names (CONTRIBUTING: stg_ / int_ / fct_ / dim_ / mart_)
MODEL = re.compile(r"\b(?:stg|int|fct|dim|mart)_\w+")
VERB = re.compile(r"\bfinrag ([a-z][a-z-]*)")
# a path token: repository-relative or ../shared/...; $FINRAG_HOME/... is a home's, not the repository's
PATH = re.compile(r"(?<![\w/.$~-])(?:\.\./)?[\w.-]+/[\w./-]*")


def cli_reference() -> ModuleType:
    """tools/cli_reference.py, loaded from its file (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("cli_reference", PROJECT / "tools" / "cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def doc_files(root: Path, generated: bool = True) -> list[Path]:
    pages = sorted((root / "docs").glob("*.md"))
    if not generated:
        pages = [p for p in pages if p.name != "cli.md"]
    return [p for p in (root / "README.md", root / "CONTRIBUTING.md", *pages) if p.is_file()]


def packages(root: Path) -> list[str]:
    """Every package folder under python_jobs/ and dashboards/ (the folder itself included), as a posix path."""
    found = []
    for top in ("python_jobs", "dashboards"):
        found += sorted(p.parent.relative_to(root).as_posix() for p in (root / top).rglob("__init__.py")
                        if "__pycache__" not in p.parts)
    return found


def named(package: str, text: str) -> bool:
    """Whether the docs name a package: its path (`python_jobs/gate/`), its dotted name (`python_jobs.gate`), or, as
    the layout tables group them, `` `gate/` `` on a line that names its parent folder (`python_jobs/`)."""
    if re.search(rf"(?<![\w/.]){re.escape(package)}(?![\w-])", text):
        return True
    if re.search(rf"(?<![\w.]){re.escape(package.replace('/', '.'))}(?!\w)", text):
        return True
    parent, _, name = package.rpartition("/")
    return bool(parent) and any(f"{parent}/" in line and f"`{name}/`" in line for line in text.splitlines())


def undocumented(root: Path, verbs: list[str]) -> list[str]:
    """The verbs no hand-written page explains and the packages no page names."""
    hand = "\n".join(p.read_text(encoding="utf-8") for p in doc_files(root, generated=False))
    every = "\n".join(p.read_text(encoding="utf-8") for p in doc_files(root))
    missing = [f"verb {v}" for v in verbs if not re.search(rf"\bfinrag {re.escape(v)}(?![\w-])", hand)]
    return missing + [f"package {p}/" for p in packages(root) if not named(p, every)]


def picture(readme: str) -> str:
    """The README's flow picture: its mermaid block."""
    match = re.search(r"```mermaid\n(.*?)```", readme, re.S)
    assert match, "README.md has no ```mermaid flow picture"
    return match.group(1)


def drifted(root: Path, text: str, verbs: list[str]) -> list[str]:
    """The names in a picture that look like a verb, a path or a dbt model and are none."""
    models = {p.stem for p in (root / "models").rglob("*.sql")}
    bad = [f"verb {v}" for v in VERB.findall(text) if v not in verbs]
    bad += [f"model {m}" for m in MODEL.findall(text) if m not in models]
    for path in PATH.findall(text):
        path = path.rstrip(".,;:")
        if path.startswith("../"):  # ../shared/...: beside the checkout, where CI lays it
            if (root.parent / "shared").is_dir() and not (root.parent / path.removeprefix("../")).exists():
                bad.append(f"path {path}")
        elif not (root / path).exists():
            bad.append(f"path {path}")
    return bad


def test_the_cli_reference_is_what_the_cli_renders_now() -> None:
    expected = cli_reference().reference()
    current = (PROJECT / "docs" / "cli.md").read_text(encoding="utf-8")
    diff = "".join(list(difflib.unified_diff(current.splitlines(True), expected.splitlines(True), "docs/cli.md",
                                             "the CLI now"))[:40])
    assert current == expected, f"docs/cli.md is stale (the CLI changed): regenerate it with `{REGENERATE}`\n{diff}"


def test_the_reference_lists_every_verb_the_cli_maps() -> None:
    listed = [name for name, _ in cli_reference().verbs()]
    assert sorted(listed) == sorted(VERBS), "a verb of python_jobs/cli.py VERBS has no importable command module"
    text = (PROJECT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert [v for v in listed if f"\n## `finrag {v}`\n" not in text] == []


def test_every_verb_and_package_is_in_the_docs() -> None:
    verbs = [name for name, _ in cli_reference().verbs()]
    assert {"ingest", "compare", "train-page-scorer"} <= set(verbs)  # the walk sees the lazy group's verbs
    assert {"python_jobs/core", "python_jobs/page_scoring", "dashboards"} <= set(packages(PROJECT))
    assert undocumented(PROJECT, verbs) == [], (
        "explain each verb in README.md, CONTRIBUTING.md or a docs/ page (docs/cli.md is generated and does not count)"
        " and name each package in docs/layout.md")


def test_every_name_in_the_readme_flow_picture_exists() -> None:
    text = picture((PROJECT / "README.md").read_text(encoding="utf-8"))
    verbs = [name for name, _ in cli_reference().verbs()]
    # the picture names jobs, folders and marts (else the check would pass vacuously)
    assert len(VERB.findall(text)) >= 10 and len(PATH.findall(text)) >= 10 and MODEL.search(text)
    assert drifted(PROJECT, text, verbs) == [], "the README's flow picture names what does not exist"


def test_the_checks_fail_on_planted_drift(tmp_path: Path) -> None:
    for folder in ("python_jobs/core", "python_jobs/gate", "python_jobs/newpkg", "dashboards/data", "docs",
                   "models/marts"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    for pkg in ("python_jobs", "python_jobs/core", "python_jobs/gate", "python_jobs/newpkg", "dashboards",
                "dashboards/data"):
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "models" / "marts" / "mart_a.sql").write_text("select 1")
    (tmp_path / "README.md").write_text("`finrag ingest` lands into `python_jobs/core/` and `dashboards/` reads.\n")
    (tmp_path / "docs" / "layout.md").write_text("| `python_jobs/` | `gate/`, `data/` |\n")
    (tmp_path / "docs" / "cli.md").write_text("finrag build\n")  # generated: does not explain a verb
    assert undocumented(tmp_path, ["ingest", "build"]) == [
        "verb build", "package python_jobs/newpkg/", "package dashboards/data/"]
    flow = 'a["finrag ingest<br>python_jobs/core/"] --> b["finrag ingestt, mart_a, mart_b<br>python_jobs/gone/"]'
    assert drifted(tmp_path, flow, ["ingest"]) == ["verb ingestt", "model mart_b", "path python_jobs/gone/"]


# the changes people make most, each a recipe in CONTRIBUTING.md naming every file to touch
RECIPES = ("Add a column to a lake table", "Add a metric", "Add a retriever", "Add a source format",
           "Add a slice dimension", "Add a calibration method", "Add a dashboard page")


def recipe_paths(contributing: str, title: str) -> list[str]:
    """The repository paths (`python_jobs/...`, `models/...`, ...) a recipe of CONTRIBUTING.md names in backticks."""
    start = contributing.index(f"### {title}")
    end = contributing.find("\n### ", start + 1)
    body = contributing[start:end if end > 0 else None]
    roots = ("python_jobs/", "models/", "macros/", "seeds/", "dashboards/", "tests/", "bench/", "docs/", "tools/")
    return [p for p in re.findall(r"`([^`\s]+)`", body) if p.startswith(roots)]


def test_every_recipe_names_files_that_exist() -> None:
    # a named file that moves fails here (and in test_doc_paths.py, which checks every path the docs name)
    text = (PROJECT / "CONTRIBUTING.md").read_text()
    for title in RECIPES:
        paths = recipe_paths(text, title)
        assert len(paths) >= 2, (title, paths)
        missing = [p for p in paths if not list(PROJECT.glob(re.sub(r"<[^>]+>", "*", p)))]
        assert missing == [], f"CONTRIBUTING.md '{title}' names files that do not exist: {missing}"
    assert recipe_paths("### Add a thing\nsee `python_jobs/nowhere.py` and `x`\n", "Add a thing") == [
        "python_jobs/nowhere.py"]
