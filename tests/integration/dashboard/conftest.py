"""Fixtures of the dashboard suites (implementation in support/dashboard_home.py)."""

from __future__ import annotations

import pytest
from support.dashboard_home import DashHome, dashboard_home


@pytest.fixture(scope="session")
def dash(tmp_path_factory: pytest.TempPathFactory) -> DashHome:
    """The dashboard's warehouse home, built once per test session (shared by pytest-xdist workers)."""
    return dashboard_home(tmp_path_factory)
