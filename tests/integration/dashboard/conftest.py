"""Fixtures of the dashboard suites (implementations in support/dashboard_home.py and support/browser.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium import webdriver

from support.browser import chrome
from support.dashboard_home import DashHome, dashboard_home


@pytest.fixture(scope="session")
def dash(tmp_path_factory: pytest.TempPathFactory) -> DashHome:
    """The dashboard's warehouse home, built once per test session (shared by pytest-xdist workers)."""
    return dashboard_home(tmp_path_factory)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    """Headless Chromium, one per test module."""
    driver = chrome(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()
