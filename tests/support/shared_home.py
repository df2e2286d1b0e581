"""Homes built once per test session and shared by every module (and every pytest-xdist worker) that needs the same
state: the first caller builds it under a file lock, the others wait and reuse it. A shared home is read-only to
its users; a test that writes (lands a run, builds again) works on `copy_home`'s copy.

Why: most of the suite's time is real `finrag ingest` / `dbt build` runs of real homes (issue 31); a
home several modules read is built once instead of once per module.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def _session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's base temp dir, the same for every xdist worker (a worker's basetemp is <base>/popen-gwN)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_home(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], dict],
                fixed: Path | None = None) -> tuple[Path, dict]:
    """(home, facts): `build(home)` run once per session into <session>/shared_<name>/warehouse (or FIXED/warehouse,
    kept between sessions while iterating on tests); its return value (JSON-able facts: run ids and the like) is kept
    beside it, and `build` may leave more beside the home, in home.parent. A failed build fails every later caller of
    the session at once (a FIXED directory is built again instead)."""
    shared = fixed or _session_dir(tmp_path_factory) / f"shared_{name}"
    shared.mkdir(parents=True, exist_ok=True)
    home, facts_file, failed = shared / "warehouse", shared / "facts.json", shared / "failed.txt"
    with (shared / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if failed.exists() and fixed is None:
                pytest.fail(f"the shared home {name!r} failed to build: {failed.read_text()[:4000]}")
            if not facts_file.exists():
                for leftover in shared.iterdir():  # an interrupted or failed build's
                    if leftover.name != ".lock":
                        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
                home.mkdir()
                try:
                    facts = build(home)
                except BaseException as exc:
                    failed.write_text(f"{type(exc).__name__}: {exc}")
                    raise
                facts_file.write_text(json.dumps(facts))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return home, json.loads(facts_file.read_text())


def copy_home(home: Path, dest: Path) -> Path:
    """A private copy of a (shared) home at `dest` (new, or an empty directory such as conftest's `home`), to write
    into: the lake, the warehouse file, dbt's target dir."""
    shutil.copytree(home, dest, symlinks=True, dirs_exist_ok=True)
    return dest
