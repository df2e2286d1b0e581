"""The tests' warm `finrag` interpreter (support/forkserver.py) against a plain `python -m python_jobs.cli`: the same
stdout, stderr and exit code for a landing and for a usage error, and the call's environment reaches the process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import forkserver
from support.paths import PROJECT, SHARED_DATA

pytestmark = pytest.mark.slow  # each plain call imports Great Expectations

QRELS = SHARED_DATA / "trec_eval_fixtures" / "qrels.test"


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
            run = forkserver.run if how == "fork" else forkserver.run_plain
            proc = run(argv, env, PROJECT, 300)
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


def test_a_call_that_starts_another_interpreter_is_not_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the server starts as after: a PYTHON* variable other than the server's environment means a plain run."""
    monkeypatch.delenv(forkserver.ENABLE_ENV, raising=False)
    monkeypatch.setattr(forkserver, "_server", None)  # not started yet: the environment it would start with
    assert forkserver.usable(dict(os.environ))
    assert not forkserver.usable({**os.environ, "PYTHONPATH": "/elsewhere"})
