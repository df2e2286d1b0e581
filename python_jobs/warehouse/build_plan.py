"""What `finrag build` has to rebuild: the models downstream of the lake tables that changed since the last build.

A build's inputs are the project's code (models, macros, seeds, dbt tests, the dbt config, the functions the plugin
registers, the lake contracts) and the lake's partitions. After each successful build the home keeps a record of
both (`<home>/dbt_target/finrag_build_state.json`: a hash of the code, and each partition's file size and mtime).
The next build compares: same code and some lake tables changed → `dbt build --select source:lake.<table>+` for
each changed table (dbt then runs those models and the data tests attached to them, nothing else); same code and
no change → nothing to build; anything else (no record, no warehouse file, other code) → every model.

Incremental models still decide per run what to recompute (macros/retrieval/retrieval_versions.sql); this only
spares dbt the models and tests whose inputs did not move. A build that fails leaves the record as it was, so the
next build selects the same tables again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR, lake_dir, warehouse_db
from python_jobs.core.contracts import CONTRACTS_YML

STATE_NAME = "finrag_build_state.json"
# everything a `dbt build` result depends on besides the lake (paths relative to the project)
CODE_DIRS = ("models", "macros", "seeds", "tests/dbt")
CODE_FILES = ("dbt_project.yml", "profiles.yml", "python_jobs/warehouse/dbt_plugin.py",
              "python_jobs/warehouse/text_metrics.py")
_LAKE_INTERNAL = ("_staging", "_journal", "_trash")


def state_path(home: Path) -> Path:
    return home / "dbt_target" / STATE_NAME


def code_hash(project: Path = PROJECT_DIR) -> str:
    """A hash of the project files a build's output depends on (names and contents)."""
    h = hashlib.sha256()
    files = [project / f for f in CODE_FILES] + [CONTRACTS_YML]
    for d in CODE_DIRS:
        files += sorted(p for p in (project / d).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for f in files:
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
    if previous.get("code") != code_hash():
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
    tmp.write_text(json.dumps({"code": code_hash(), "lake": lake}, sort_keys=True) + "\n")
    os.replace(tmp, path)


def forget(home: Path) -> None:
    """Drop the record (a build of a subset, or with other vars, does not say the whole warehouse is current)."""
    state_path(home).unlink(missing_ok=True)
