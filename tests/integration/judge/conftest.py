"""Fixtures of the judge suites (implementations in support/judge_home.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.judge_home import copy_home, shared_base


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict:
    """FinanceBench questions and the 16 human-labelled answer runs, ingested once per test session into a home the
    judge modules share (support/shared_home.py): read it, never write it."""
    return shared_base(tmp_path_factory, shared_data)


@pytest.fixture
def wh(base: dict, tmp_path: Path) -> Path:
    """A copy of the base home for one test."""
    return copy_home(base, tmp_path / "warehouse")
