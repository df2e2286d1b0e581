"""Running dbt from the jobs: same project, the home's own target/log dirs (so parallel homes never share state)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from python_jobs.core.config import HOME_ENV, PROJECT_DIR, warehouse_home


def dbt_command() -> list[str]:
    exe = Path(sys.executable).with_name("dbt")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dbt.cli.main"]


def run_dbt(args: list[str], home: str | os.PathLike[str] | None = None, quiet: bool = False,
            env: dict[str, str] | None = None, target: str | None = None) -> int:
    """Run `dbt <args>` against the warehouse at `home` (`env`: extra variables; `target`: a profiles.yml output,
    default its `dev`, DuckDB); returns dbt's exit code. The `spark` target runs dbt inside the process that makes
    the SparkSession (python_jobs/warehouse/spark_session.py)."""
    h = warehouse_home(home)
    h.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, HOME_ENV: str(h), "DBT_SEND_ANONYMOUS_USAGE_STATS": "False", **(env or {})}
    launcher = [sys.executable, "-m", "python_jobs.warehouse.spark_session"] if target == "spark" else dbt_command()
    cmd = [
        *launcher,
        *(["--quiet"] if quiet else []),
        *args,
        "--project-dir", str(PROJECT_DIR),
        "--profiles-dir", str(PROJECT_DIR),
        # another target's manifest, run results and partial-parse state apart from DuckDB's, which the build plan
        # and publishing read
        "--target-path", str(h / ("dbt_target" if target in (None, "dev") else f"dbt_target_{target}")),
        "--log-path", str(h / "dbt_logs"),
        *(["--target", target] if target else []),
    ]
    return subprocess.call(cmd, env=env, cwd=PROJECT_DIR)
