"""Shared fixtures: a fresh warehouse home per test, the real benchmark files beside the checkout, and runners for
the `finrag` CLI and dbt as subprocesses (real processes, real DuckDB files; nothing mocked)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

PROJECT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("FINRAG_SHARED_DATA", PROJECT.parent / "shared" / "data"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.fail(f"../shared/data not found at {SHARED_DATA} (set FINRAG_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "warehouse"
    h.mkdir()
    monkeypatch.setenv("FINRAG_HOME", str(h))
    return h


def run_finrag(home: Path, *args: str, check: bool = True, timeout: float = 900,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `finrag --home HOME ARGS...` as a subprocess (env: extra variables); on check, fail with its output."""
    env = {**os.environ, "FINRAG_HOME": str(home), **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "python_jobs.cli", "--home", str(home), *args],
        capture_output=True, text=True, env=env, cwd=PROJECT, timeout=timeout,
    )
    if check and proc.returncode != 0:
        pytest.fail(f"finrag {' '.join(args)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def dbt_build(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`finrag build` (dbt build) into HOME; fails the test if dbt fails."""
    return run_finrag(home, "build", *args)


def warehouse_query(home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()


@pytest.fixture
def finrag(home: Path):
    return lambda *args, **kw: run_finrag(home, *args, **kw)
