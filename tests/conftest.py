"""Shared fixtures: a fresh warehouse home per test, the real benchmark files beside the checkout, the `finrag` CLI
bound to the home, and the toy retrieval corpus. Their implementations live in tests/support/."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.cli import run_finrag
from support.paths import SHARED_DATA
from support.toy_corpus import land_corpus

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# what the CLI sets where stderr is no terminal (python_jobs/cli.py main), set here before any fork server starts: the
# CLI run in-process would otherwise change a variable the servers started with, and each would be started again
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


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


@pytest.fixture
def finrag(home: Path):
    return lambda *args, **kw: run_finrag(home, *args, **kw)


@pytest.fixture
def toy(home: Path) -> Lake:
    """The toy retrieval corpus (support/toy_corpus.py), flat and parent-child chunkings, landed in `home`."""
    return land_corpus(home)


# The longest single fixture (a whole warehouse built on Spark, minutes on one worker) starts first, so the other
# worker runs the rest meanwhile instead of both waiting for it at the end. Its first step builds the dashboard suites'
# shared home (support/dashboard_home.py), so the dashboard modules go after the other integration modules: the
# other worker would otherwise start on them and wait for that build on its lock.
FIRST = ("tests/integration/test_spark_target.py",)
AFTER_THE_REST_OF_INTEGRATION = ("tests/integration/dashboard/",)


def pytest_configure(config: pytest.Config) -> None:
    # xdist's loadscope otherwise re-sorts modules by their number of tests (most first), which undoes the order
    # below: the Spark module (3 tests) started 14 minutes in, and one-test modules of whole builds came last
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def order(item: pytest.Item) -> int:
        if item.nodeid.startswith(FIRST):
            return 0
        if item.nodeid.startswith(AFTER_THE_REST_OF_INTEGRATION):
            return 2
        return 1 if item.nodeid.startswith("tests/integration/") else 3
    items.sort(key=order)  # stable: the collection order within each group
