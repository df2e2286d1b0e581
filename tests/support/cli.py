"""Runners for the `finrag` CLI and dbt as subprocesses (real processes, real DuckDB files; nothing mocked)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from python_jobs.warehouse.dbt_runner import DBT_ENV
from support import forkserver
from support.paths import PROJECT


def run_finrag(home: Path, *args: str, check: bool = True, timeout: float = 900,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `finrag --home HOME ARGS...` as a subprocess (env: extra variables); on check, fail with its output."""
    env = {**os.environ, "FINRAG_HOME": str(home), **(env or {})}
    run = forkserver.run if forkserver.usable(env) else forkserver.run_plain
    if run is forkserver.run and DBT_ENV not in env:  # its dbt builds fork from a warm dbt too
        env[DBT_ENV] = forkserver.dbt_shim()
    proc = run(["--home", str(home), *args], env=env, cwd=PROJECT, timeout=timeout)
    if check and proc.returncode != 0:
        pytest.fail(f"finrag {' '.join(args)} exited {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


# A setup build's arguments where a module checks the marts, not the data tests' verdicts: data tests are ~9 of a small
# build's ~25 CPU-s. They still run on every scenario's data together (the Spark module's DuckDB build of the dashboard
# home, trec_eval's fixtures and a sweep), on an empty home (test_dbt_project), and in the suites whose subject they
# are (test_build_follows_the_lake, the ingest and retrieval-metric suites, the judge marts).
MODELS_ONLY = ("--exclude-resource-type", "test", "--exclude-resource-type", "unit_test")


def dbt_build(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`finrag build` (dbt build: models, seeds and data tests) into HOME; fails the test if dbt fails. dbt's unit
    tests check the SQL, not the data, so they run once per suite (test_dbt_project's empty home, and on Spark), not in
    every integration build: pass "--unit-tests" for them."""
    return run_finrag(home, "build", *args)
