"""The tests' warm `finrag` interpreter (support/forkserver.py) against a plain `python -m python_jobs.cli`: the same
stdout, stderr and exit code for a landing and for a usage error, and the call's environment reaches the process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import forkserver
from support.paths import PROJECT, SHARED_DATA

pytestmark = pytest.mark.slow  # each plain call imports Great Expectations

QRELS = SHARED_DATA / "trec_eval_fixtures" / "qrels.test"


def plain(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", forkserver.CLI_MODULE, *args], capture_output=True, text=True,
                          env=env, cwd=PROJECT, timeout=300)


def test_a_fork_prints_and_exits_as_a_plain_process(tmp_path: Path) -> None:
    calls = {
        "landing": ["ingest", "trec-qrels", str(QRELS), "--dataset", "trec_test"],
        "usage error": ["ingest", "trec-qrels", str(tmp_path / "missing.qrels"), "--dataset", "trec_test"],
    }
    for name, args in calls.items():
        results = {}
        for how in ("fork", "plain"):
            home = tmp_path / how / name.replace(" ", "_")
            env = {**os.environ, "FINRAG_HOME": str(home)}
            argv = ["--home", str(home), *args]
            proc = forkserver.run(argv, env, PROJECT, 300) if how == "fork" else plain(argv, env)
            results[how] = (proc.returncode, proc.stdout, proc.stderr.replace(str(home), "HOME"))
        assert results["fork"] == results["plain"], name
    assert results["fork"][0] == 2 and "does not exist" in results["fork"][2]


def test_the_calls_environment_reaches_the_process(tmp_path: Path) -> None:
    # FINRAG_HOME from the call's environment alone (no --home): the landing goes there
    home = tmp_path / "from_env"
    proc = forkserver.run(["ingest", "trec-qrels", str(QRELS), "--dataset", "x"],
                          {**os.environ, "FINRAG_HOME": str(home)}, PROJECT, 300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "x"
    assert list((home / "lake" / "evidence").glob("load_id=x/*.parquet"))
