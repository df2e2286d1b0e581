"""What `finrag build` has to rebuild: the models downstream of the lake tables that changed since the last build.

A build's inputs are the project's code and the lake's partitions. The code is derived, never listed: dbt_project.yml
and profiles.yml, every file under the paths dbt_project.yml gives dbt (model-paths, macro-paths, seed-paths,
test-paths, ...), and the Python that runs inside dbt: the plugin modules profiles.yml names and every project
module they import, followed through the imports, with the data files of their packages (the lake contracts).
After each successful build the home keeps a record of both (`<home>/dbt_target/finrag_build_state.json`: a hash of
the code, and each partition's file size and mtime). The next build compares: same code and some lake tables
changed → `dbt build --select source:lake.<table>+` for each changed table (dbt then runs those models and the data
tests attached to them, nothing else); same code and no change → nothing to build; anything else (no record, no
warehouse file, other code) → every model.

Incremental models still decide per run what to recompute (macros/retrieval/retrieval_versions.sql, which derives a
model's inputs from dbt's graph in the same spirit); this only spares dbt the models and tests whose inputs did not
move. A build that fails leaves the record as it was, so the next build selects the same tables again.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR, lake_dir, project_yaml, warehouse_db

STATE_NAME = "finrag_build_state.json"
_LAKE_INTERNAL = ("_staging", "_journal", "_trash")
# dbt_project.yml keys that name where dbt writes, not what it reads
_OUTPUT_PATHS = ("target-path", "packages-install-path", "log-path")


def state_path(home: Path) -> Path:
    return home / "dbt_target" / STATE_NAME


def _plugin_modules(project: Path) -> list[str]:
    """The modules profiles.yml loads into dbt (its outputs' `plugins: - module: ...`)."""
    path = project / "profiles.yml"
    profiles = project_yaml(path) if path.exists() else {}
    return sorted({plugin["module"] for profile in (profiles or {}).values() if isinstance(profile, dict)
                   for output in (profile.get("outputs") or {}).values()
                   for plugin in (output.get("plugins") or []) if "module" in plugin})


def _module_file(project: Path, name: str) -> Path | None:
    base = project.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _package_data(directory: Path) -> list[Path]:
    """A package directory's data files: its non-Python files and those of its subfolders that are not packages."""
    out = []
    for entry in directory.iterdir():
        if entry.is_file() and entry.suffix not in (".py", ".pyc"):
            out.append(entry)
        elif entry.is_dir() and entry.name != "__pycache__" and not (entry / "__init__.py").exists():
            out += _package_data(entry)
    return out


def python_closure(project: Path, modules: list[str]) -> list[Path]:
    """The project's source files of `modules` and of every module they import that is a file of the project (read
    from the source, not imported; libraries are pinned by pyproject.toml), plus the data files of their packages."""
    todo, files = list(modules), set()
    while todo:
        name = todo.pop()
        path = _module_file(project, name)
        if path is None or path in files:
            continue
        files.add(path)
        files.update(_package_data(path.parent))
        own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        todo += [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)]  # parent packages
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                todo += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = (own_package.split(".")[: len(own_package.split(".")) - node.level + 1] if node.level
                        else [])
                module = ".".join([*base, *([node.module] if node.module else [])])
                todo += [module, *(f"{module}.{a.name}" for a in node.names)]
    return sorted(files)


def code_files(project: Path = PROJECT_DIR) -> list[Path]:
    """Every file a build's output depends on besides the lake (see the module docstring)."""
    config_path = project / "dbt_project.yml"
    config = project_yaml(config_path) if config_path.exists() else {}
    dirs = sorted({d for key, value in (config or {}).items() if key.endswith("-paths") and key not in _OUTPUT_PATHS
                   for d in ([value] if isinstance(value, str) else value or [])})
    files = [project / "dbt_project.yml", project / "profiles.yml"]
    for d in dirs:
        files += sorted(p for p in (project / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return files + python_closure(project, _plugin_modules(project))


def code_signature(project: Path = PROJECT_DIR) -> str:
    """A hash of the names, sizes and modification times of a superset of `code_files` (every file of the project's
    dbt directories and of the packages its dbt plugins are in): equal to the last build's, the code is unchanged
    without reading a byte of it (what a no-op build spent most of its time on); different, `code_hash` decides."""
    config_path = project / "dbt_project.yml"
    config = project_yaml(config_path) if config_path.exists() else {}
    dirs = sorted({d for key, value in (config or {}).items() if key.endswith("-paths") and key not in _OUTPUT_PATHS
                   for d in ([value] if isinstance(value, str) else value or [])})
    packages = sorted({m.split(".")[0] for m in _plugin_modules(project)})
    h = hashlib.sha256()
    for top in [project / "dbt_project.yml", project / "profiles.yml", *(project / d for d in dirs),
                *(project / p if (project / p).is_dir() else project / f"{p}.py" for p in packages)]:
        for root, subdirs, names in os.walk(top) if top.is_dir() else [(str(top.parent), [], [top.name])]:
            # (os.walk, not Path.rglob: a third of the time, and this is all a no-op build does)
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
            for name in sorted(names):
                try:
                    st = os.stat(os.path.join(root, name))
                except FileNotFoundError:
                    continue
                h.update(f"{os.path.relpath(os.path.join(root, name), project)}\0{st.st_size}\0{st.st_mtime_ns}\n"
                         .encode())
    return h.hexdigest()


def code_hash(project: Path = PROJECT_DIR) -> str:
    """A hash of the project files a build's output depends on (names and contents)."""
    h = hashlib.sha256()
    for f in code_files(project):
        if f.exists():
            h.update(str(f.relative_to(project) if f.is_relative_to(project) else f.name).encode() + b"\0")
            h.update(f.read_bytes() + b"\0")
    return h.hexdigest()


def lake_snapshot(home: Path) -> dict[str, dict[str, list[int]]]:
    """Per lake table, per partition directory: [file count, total bytes, newest mtime in ns]. A landing replaces a
    partition directory by a rename, so any landing or drop changes its entry."""
    out: dict[str, dict[str, list[int]]] = {}
    root = lake_dir(home)
    if not root.exists():
        return out
    for table in sorted(os.scandir(root), key=lambda e: e.name):
        if not table.is_dir() or table.name in _LAKE_INTERNAL:
            continue
        parts: dict[str, list[int]] = {}
        for part in os.scandir(table.path):
            if not part.is_dir():
                continue
            stats = [f.stat() for f in os.scandir(part.path) if f.is_file()]
            parts[part.name] = [len(stats), sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats),
                                                                                default=0)]
        out[table.name] = parts
    return out


@dataclass(frozen=True)
class BuildPlan:
    """`select`: dbt selectors for the changed tables, [] when nothing changed; None: build every model."""

    select: list[str] | None
    changed_tables: list[str]
    reason: str


def plan(home: Path) -> BuildPlan:
    path = state_path(home)
    if not warehouse_db(home).exists():
        return BuildPlan(None, [], "no warehouse yet")
    try:
        previous = json.loads(path.read_text())
    except (OSError, ValueError):
        return BuildPlan(None, [], "no record of a previous build")
    if previous.get("code_signature") != code_signature() and previous.get("code") != code_hash():
        return BuildPlan(None, [], "the project's models, macros, seeds or config changed since the last build")
    before, now = previous.get("lake", {}), lake_snapshot(home)
    changed = sorted(t for t in set(before) | set(now) if before.get(t) != now.get(t))
    return BuildPlan([f"source:lake.{t}+" for t in changed], changed,
                     f"lake tables changed since the last build: {', '.join(changed)}" if changed
                     else "nothing changed in the lake or the project since the last build")


def record(home: Path, lake: dict[str, dict[str, list[int]]]) -> None:
    """Keep the code and the lake `lake_snapshot` saw before a build that then succeeded."""
    path = state_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"code": code_hash(), "code_signature": code_signature(), "lake": lake}, sort_keys=True)
                   + "\n")
    os.replace(tmp, path)


def forget(home: Path) -> None:
    """Drop the record (a build of a subset, or with other vars, does not say the whole warehouse is current)."""
    state_path(home).unlink(missing_ok=True)
