"""The dashboard in a real browser: `finrag dashboard` as a subprocess on loopback ports (the Streamlit app and the
Data Docs server beside it), headless Chromium (Debian's chromium + chromedriver, driven by selenium), and helpers to
wait for rendered text and save screenshots ($FINRAG_SCREENSHOT_DIR, default test-artifacts/screenshots/)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support.paths import PROJECT

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(os.environ.get("FINRAG_SCREENSHOT_DIR", PROJECT / "test-artifacts" / "screenshots"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def open_paths(pid: int) -> set[str]:
    """What a process has open (/proc/<pid>/fd), skipping descriptors closed while we look."""
    paths = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            paths.add(os.readlink(fd))
        except OSError:
            pass
    return paths


def wait_for_url(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90,
                 ready=lambda body: True) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            pytest.fail(f"finrag dashboard exited {proc.returncode}: {log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if ready(r.read()):
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{url} not up after {timeout} s: {log.read_text()}")
        time.sleep(0.5)


class Dashboard:
    """`finrag dashboard` as a subprocess in its own process group (streamlit replaces the finrag process; the Data
    Docs server is its child in the same group)."""

    def __init__(self, home: Path, log: Path):
        self.port, self.docs_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.docs_url = f"http://127.0.0.1:{self.docs_port}/index.html"
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "python_jobs.cli", "--home", str(home), "dashboard", "--port", str(self.port),
             "--docs-port", str(self.docs_port)],
            cwd=PROJECT, env={**os.environ, "FINRAG_HOME": str(home)}, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for_url(f"{self.url}/_stcore/health", self.proc, log, ready=lambda body: body.strip() == b"ok")
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        try:  # the Data Docs server (same process group) if it outlived the dashboard
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.log.close()


def chrome(profile_dir: Path) -> webdriver.Chrome:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("Debian's chromium and chromium-driver are needed (.ci/run installs them): "
                    "apt-get install -y chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1500,1900", f"--user-data-dir={profile_dir}"):
        options.add_argument(flag)
    # an explicit driver path: selenium-manager must not try to download a driver
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    return driver


def wait_for_texts(driver: webdriver.Chrome, expected: list[str], timeout: float = 60, what: str = "") -> str:
    """Wait until every expected text is in the page's rendered body text; returns it."""
    def ready(d: webdriver.Chrome) -> str | bool:
        body = d.find_element(By.TAG_NAME, "body").text
        running = d.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
        return body if all(t in body for t in expected) and not running else False

    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.5).until(ready)
    except TimeoutException:
        body = driver.find_element(By.TAG_NAME, "body").text
        pytest.fail(f"{what or driver.current_url}: never showed {[t for t in expected if t not in body]}; "
                    f"page text:\n{body[:3000]}")


def open_page(driver: webdriver.Chrome, url: str, expected: list[str], timeout: float = 60) -> str:
    """Load a dashboard url and wait until every expected text is in the rendered page (Streamlit renders
    client-side)."""
    driver.get(url)
    body = wait_for_texts(driver, expected, timeout, url)
    assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stException"]'), body[:3000]
    assert "Page not found" not in body, url  # Streamlit falls back to the main page on an unknown url
    return body


def screenshot(driver: webdriver.Chrome, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    time.sleep(1.0)  # let the charts draw
    assert driver.save_screenshot(str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, f"{path}: {len(data)} bytes"
    return path
