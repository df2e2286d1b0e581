"""A copy of the project to change and build (a test never edits the checkout), and a plain `dbt build` run in a
project directory as a user runs it: `dbt build` there, with that directory's profiles.yml, target/ and logs/, and
its python_jobs first on the path (the dbt plugin and the functions it registers come from the copy)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from python_jobs.warehouse.dbt_runner import dbt_command
from support.paths import PROJECT

# what a build does not read from a checkout (top-level entries; tests/dbt, dbt's singular tests, is copied apart)
_NOT_PROJECT = {".venv", ".git", "warehouse", "target", "logs", "dbt_packages", ".pytest_cache", ".ruff_cache", "docs",
                "bench", "tests", "test-artifacts"}


def _not_project(name: str) -> bool:
    # any virtualenv beside the checkout too (.venv-phoenix, the Phoenix server's: 0.7 GB copied per test before)
    return name in _NOT_PROJECT or name.startswith(".venv")


def copy_project(dest: Path, source: Path = PROJECT) -> Path:
    def ignore(directory: str, names: list[str]) -> set[str]:
        top = Path(directory) == source
        return {n for n in names if (top and _not_project(n)) or n == "__pycache__" or n.endswith(".egg-info")}

    shutil.copytree(source, dest, ignore=ignore)
    if (source / "tests" / "dbt").is_dir():
        shutil.copytree(source / "tests" / "dbt", dest / "tests" / "dbt")
    return dest


def plain_dbt_build(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`dbt build [args]` in `project` over `home`; fails with dbt's output when dbt fails."""
    env = {**os.environ, "FINRAG_HOME": str(home), "PYTHONPATH": str(project)}
    proc = subprocess.run([*dbt_command(), "build", "--quiet", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, f"dbt build exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc
