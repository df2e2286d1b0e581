"""Running dbt from the jobs: same project, the home's own target/log dirs (so parallel homes never share state)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from python_jobs.core.config import HOME_ENV, PROJECT_DIR, WAREHOUSE_FILE, cache_dir, warehouse_home

DBT_ENV = "FINRAG_DBT"  # the dbt executable to run, when not the one installed beside this interpreter


def installed_dbt() -> Path:
    """dbt's console script, installed beside this interpreter."""
    return Path(sys.executable).with_name("dbt")


def dbt_command() -> list[str]:
    if os.environ.get(DBT_ENV):
        return [os.environ[DBT_ENV]]
    exe = installed_dbt()
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dbt.cli.main"]


# dbt's partial parse (<target-path>/partial_parse.msgpack) is rejected whole when the profile's rendered connection
# changed: with the home's path in it, every new home paid a full parse (~5 s of CPU per build, more than the models
# of a small home). DuckDB builds therefore run in the home with the profile's path set to the file's bare name (the
# same text for every home; FINRAG_HOME stays the home's absolute path, which the sources' views keep), and a home
# without a parse state starts from the last one written on this machine. dbt itself checks that state against
# every project file, var, env var and version, and re-parses what differs (all of it when the profile or the vars
# differ), so a stale copy costs nothing but the parse it would have paid anyway. The copy is kept per checkout: dbt
# does not re-check the project's own path, so a state written by another checkout kept that checkout's seed files
# (read from there, or "No files found" once it was deleted).
PARSE_STATE = "partial_parse.msgpack"
# beside a home's state: the checkout that wrote it (a home built from two checkouts, e.g. a bench home rebuilt from
# another worktree, held the first one's seed paths and handed them to the second checkout's cache)
PARSE_STATE_CHECKOUT = "partial_parse.checkout"
DUCKDB_PATH_ENV = "FINRAG_DUCKDB_PATH"  # profiles.yml: the DuckDB file, relative to dbt's working directory


def parse_cache() -> Path:
    checkout = hashlib.sha256(str(PROJECT_DIR.resolve()).encode()).hexdigest()[:12]
    return cache_dir() / f"dbt_{checkout}_{PARSE_STATE}"


def _checkout() -> str:
    return str(PROJECT_DIR.resolve())


def _seed_parse_state(target_dir: Path) -> None:
    state, cached, owner = target_dir / PARSE_STATE, parse_cache(), target_dir / PARSE_STATE_CHECKOUT
    if state.exists() and (not owner.exists() or owner.read_text() != _checkout()):
        state.unlink()  # another checkout's (or an unrecorded) state: its seed paths are not ours
    if not state.exists() and cached.exists():
        target_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # a cache being replaced under us: dbt parses in full
            shutil.copyfile(cached, state)
    target_dir.mkdir(parents=True, exist_ok=True)
    owner.write_text(_checkout())  # the state dbt leaves in the home now is this checkout's


def _keep_parse_state(target_dir: Path) -> None:
    state, cached = target_dir / PARSE_STATE, parse_cache()
    if not state.exists():
        return
    with contextlib.suppress(OSError):  # an unwritable cache only costs the next home its full parse
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, prefix=".parse-")
        os.close(fd)
        shutil.copyfile(state, tmp)
        os.replace(tmp, cached)  # atomic: parallel builds never read half a file


def target_path(home: Path, target: str | None = None) -> Path:
    """dbt's target dir for a home: DuckDB's (the default) holds the manifest and run results the build plan and
    publishing read; another target's manifest, run results and partial-parse state live apart from it."""
    return home / ("dbt_target" if target in (None, "dev") else f"dbt_target_{target}")


def run_dbt(args: list[str], home: str | os.PathLike[str] | None = None, quiet: bool = False,
            env: dict[str, str] | None = None, target: str | None = None) -> int:
    """Run `dbt <args>` against the warehouse at `home` (`env`: extra variables; `target`: a profiles.yml output,
    default its `dev`, DuckDB); returns dbt's exit code. The `spark` target runs dbt inside the process that makes
    the SparkSession (python_jobs/warehouse/spark_session.py)."""
    h = warehouse_home(home)
    h.mkdir(parents=True, exist_ok=True)
    duckdb_target = target in (None, "dev")
    env = {**os.environ, HOME_ENV: str(h), **({DUCKDB_PATH_ENV: WAREHOUSE_FILE} if duckdb_target else {}),
           **(env or {})}
    launcher = [sys.executable, "-m", "python_jobs.warehouse.spark_session"] if target == "spark" else dbt_command()
    target_dir = target_path(h, target)
    cmd = [
        *launcher,
        *(["--quiet"] if quiet else []),
        *args,
        "--project-dir", str(PROJECT_DIR),
        "--profiles-dir", str(PROJECT_DIR),
        "--target-path", str(target_dir),
        "--log-path", str(h / "dbt_logs"),
        *(["--target", target] if target else []),
    ]
    if not duckdb_target:
        return subprocess.call(cmd, env=env, cwd=PROJECT_DIR)
    # the project's own vars only: a state parsed under --vars would not fit the next home's plain build
    shared = not any(a == "--vars" or a.startswith("--vars=") for a in args)
    if shared:
        _seed_parse_state(target_dir)
    code = subprocess.call(cmd, env=env, cwd=h)
    if shared and code == 0:
        _keep_parse_state(target_dir)
    return code
