"""The tests' warm `finrag` interpreter (support/forkserver.py) against a plain `python -m python_jobs.cli`: the same
stdout, stderr and exit code for a landing and for a usage error, and the call's environment reaches the process.
The same for its warm `dbt` (the shim run_finrag gives `finrag build` as FINRAG_DBT) against dbt's own script, and a
shim killed takes its dbt with it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from python_jobs.warehouse.dbt_runner import installed_dbt
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


def test_the_dbt_shim_prints_and_exits_as_dbt(tmp_path: Path) -> None:
    shim, dbt = forkserver.dbt_shim(), str(installed_dbt())
    calls = {
        "version": ["--version"],
        # dbt's own error, exit code and stderr: a project directory without a project
        "no project": ["parse", "--project-dir", str(tmp_path), "--profiles-dir", str(PROJECT)],
    }
    for name, args in calls.items():
        results = {}
        for how, exe in (("shim", shim), ("dbt", dbt)):
            proc = subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                                  env={**os.environ, "FINRAG_SHIM_CHECK": how})
            results[how] = tuple(re.sub(r"\d\d:\d\d:\d\d", "T", str(v)) for v in (proc.returncode, proc.stdout,
                                                                              proc.stderr))
        assert results["shim"] == results["dbt"], name
    assert results["shim"][0] == "2" and "dbt_project.yml" in results["shim"][1] + results["shim"][2]


def test_a_killed_shim_takes_its_dbt_with_it(tmp_path: Path) -> None:
    """A timeout kills the `finrag` process's group, the shim with it: the dbt forked for it must not outlive it."""
    # `dbt debug` against a profile whose path is a FIFO nobody writes: the forked dbt blocks reading it
    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: shim_check\nversion: '1'\nconfig-version: 2\nprofile: p\n")
    os.mkfifo(project / "profiles.yml")
    shim_path = forkserver.dbt_shim()
    server = forkserver._dbt_server.proc.pid
    before = _forked_by(server)
    shim = subprocess.Popen([shim_path, "debug", "--project-dir", str(project), "--profiles-dir", str(project)],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        forked: set[int] = set()
        while not forked and time.monotonic() < deadline:
            forked = _forked_by(server) - before
            time.sleep(0.1)
        assert forked, "no dbt was forked for the shim"
    finally:
        shim.send_signal(signal.SIGKILL)
        shim.wait()
    deadline = time.monotonic() + 30
    while _forked_by(server) & forked and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _forked_by(server) & forked


def _forked_by(server: int) -> set[int]:
    """The live processes the server's handlers forked (grandchildren of the server), by pid."""
    parents = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            parents[int(proc.name)] = int(fields[1])
    return {pid for pid, parent in parents.items() if parents.get(parent) == server}


def test_a_startup_variable_set_in_the_test_process_gets_a_new_server(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Code run in the test process sets variables a server read when it started (the CLI run in-process sets
    HF_HUB_DISABLE_PROGRESS_BARS): the next call starts a server with them and forks from it, rather than every
    later call of the worker running plain."""
    def ls() -> subprocess.CompletedProcess:
        env = {**os.environ, "FINRAG_HOME": str(tmp_path)}
        assert forkserver.usable(env)
        return forkserver.run(["--home", str(tmp_path), "ls"], env, PROJECT, 300)

    assert ls().returncode == 0
    before = forkserver._server
    monkeypatch.setenv("HF_FINRAG_TEST_MARKER", "1")
    try:
        assert ls().returncode == 0
        assert forkserver._server is not before and forkserver._server.env["HF_FINRAG_TEST_MARKER"] == "1"
        assert before.proc.poll() is None  # the old server is left to its calls under way
    finally:
        forkserver._server = before  # it fits the worker's environment again once the marker is gone: no third start
