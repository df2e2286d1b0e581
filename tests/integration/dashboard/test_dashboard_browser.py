"""End to end in a real browser: `finrag dashboard` serves on loopback, headless Chromium (Debian's chromium +
chromedriver, driven by selenium) opens every page and waits for known run ids and mart values to be visible,
and saves a screenshot per page ($FINRAG_SCREENSHOT_DIR, default test-artifacts/screenshots/). And the lock rule:
`finrag build` succeeds on the home the dashboard is serving, and the page still renders after it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import polars as pl
import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from support.cli import run_finrag
from support.dashboard_home import BUILD_ARGS, DashHome
from support.paths import PROJECT

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(os.environ.get("FINRAG_SCREENSHOT_DIR", PROJECT / "test-artifacts" / "screenshots"))


def fmt(value: float) -> str:
    return f"{value:.4f}"


def mart(home: Path, name: str) -> pl.DataFrame:
    return pl.read_parquet(home / "exports" / "marts" / f"{name}.parquet")


def open_paths(pid: int) -> set[str]:
    """What a process has open (/proc/<pid>/fd), skipping descriptors closed while we look."""
    paths = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            paths.add(os.readlink(fd))
        except OSError:
            pass
    return paths


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Dashboard:
    """`finrag dashboard` as a subprocess in its own process group (streamlit replaces the finrag process)."""

    def __init__(self, home: Path, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "python_jobs.cli", "--home", str(home), "dashboard", "--port", str(self.port)],
            cwd=PROJECT, env={**os.environ, "FINRAG_HOME": str(home)}, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"finrag dashboard exited {self.proc.returncode}: {log.read_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"dashboard not healthy after 90 s: {log.read_text()}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail("Debian's chromium and chromium-driver are needed (.ci/run installs them): "
                    "apt-get install -y chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1500,1900",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    # an explicit driver path: selenium-manager must not try to download a driver
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: webdriver.Chrome, url: str, expected: list[str], timeout: float = 60) -> str:
    """Load url and wait until every expected text is in the rendered page (Streamlit renders client-side)."""
    driver.get(url)

    def ready(d: webdriver.Chrome) -> str | bool:
        body = d.find_element(By.TAG_NAME, "body").text
        running = d.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
        return body if all(t in body for t in expected) and not running else False

    try:
        body = WebDriverWait(driver, timeout, poll_frequency=0.5).until(ready)
    except TimeoutException:
        body = driver.find_element(By.TAG_NAME, "body").text
        pytest.fail(f"{url}: never showed {[t for t in expected if t not in body]}; page text:\n{body[:3000]}")
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


def page_expectations(dash: DashHome) -> dict[str, tuple[dict[str, str], list[str]]]:
    """page -> (query parameters, texts that must be visible), the numbers read from the published marts."""
    f, home = dash.facts, dash.home
    board = mart(home, "mart_retrieval_leaderboard").filter(pl.col("k") == 5)
    page_rec = board.filter((pl.col("run_id") == f["bm25"]) & (pl.col("metric") == "page_rec"))["mean"].item()
    exact = mart(home, "mart_generation_leaderboard").filter(
        (pl.col("run_id") == f["rag"]) & (pl.col("metric") == "exact_match"))["mean"].item()
    cells = mart(home, "mart_topic_task_matrix").filter(
        (pl.col("run_id") == f["rag"]) & (pl.col("metric") == "exact_match") & (pl.col("topic_level") == 2))
    cell = cells.sort("topic_en", "task").row(0, named=True)
    gap = mart(home, "mart_oracle_gap").filter((pl.col("run_id") == f["bm25"]) & (pl.col("k") == 5)
                                               & (pl.col("metric") == "page_rec")).row(0, named=True)
    agreement = mart(home, "mart_judge_agreement").filter(pl.col("judge_run_id") == f["judge"]).row(0, named=True)
    question = mart(home, "dim_questions").filter(pl.col("question_id") == f["flip_question"]).row(0, named=True)
    return {
        "leaderboard": ({}, [f["bm25"], f["rag"], f["judge"], fmt(page_rec), fmt(exact)]),
        "heatmap": ({"run": f["rag"], "metric": "exact_match", "level": "2"},
                    [f["rag"], cell["topic_en"], fmt(cell["mean"])]),
        "slices": ({"run": f["bm25"], "k": "5", "dimension": "question_type"},
                   [f["bm25"], fmt(gap["mean"]), fmt(gap["oracle_page_mean"]), "PageRec@5 by question_type"]),
        "run_vs_run": ({"a": f["closed"], "b": f["rag"], "metric": "exact_match"},
                       [f["closed"], f["rag"], "Flipped questions (1)", f["flip_question"]]),
        "judge_agreement": ({}, [f["judge"], fmt(agreement["accuracy"]), fmt(agreement["kappa"])]),
        "drilldown": ({"question_id": f["flip_question"]},
                      [question["question"], "✓ hit", f["bm25"], question["reference_answers"][0]]),
    }


def test_every_page_in_chromium(dash: DashHome, browser: webdriver.Chrome, tmp_path: Path) -> None:
    server = Dashboard(dash.home, tmp_path / "dashboard.log")
    try:
        shots = {}
        for page, (params, expected) in page_expectations(dash).items():
            url = f"{server.url}/{page}" + (f"?{urlencode(params)}" if params else "")
            open_page(browser, url, expected)
            shots[page] = screenshot(browser, page)
        # the root page: links to every page and the published marts
        open_page(browser, server.url + "/", ["FinRAG Warehouse", "Published marts", "mart_retrieval_leaderboard"])
        shots["overview"] = screenshot(browser, "overview")
    finally:
        server.stop()
    assert sorted(shots) == sorted([*page_expectations(dash), "overview"])
    (SCREENSHOTS / "index.json").write_text(json.dumps({p: str(s) for p, s in shots.items()}, indent=1) + "\n")


def test_build_succeeds_while_the_dashboard_serves(dash: DashHome, browser: webdriver.Chrome, tmp_path: Path) -> None:
    home = dash.lock_home
    manifest = home / "exports" / "marts" / "_manifest.json"
    before = json.loads(manifest.read_text())["published_at"]
    server = Dashboard(home, tmp_path / "dashboard.log")
    try:
        expected = [dash.facts["bm25"], dash.facts["rag"]]
        open_page(browser, f"{server.url}/leaderboard", expected)
        open_page(browser, f"{server.url}/drilldown?question_id={dash.facts['flip_question']}", ["✓ hit"])
        # the server never has the warehouse file open (it reads Parquet only) ...
        open_files = open_paths(server.proc.pid)
        assert open_files and not [f for f in open_files if "finrag.duckdb" in f], open_files
        # ... so dbt, which opens it read-write, does not fail on a lock
        proc = run_finrag(home, "build", *BUILD_ARGS, check=False)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert "published" in proc.stderr
        assert json.loads(manifest.read_text())["published_at"] > before
        assert server.proc.poll() is None
        body = open_page(browser, f"{server.url}/leaderboard", expected)
        assert "No published marts" not in body
        screenshot(browser, "leaderboard_after_build")
    finally:
        server.stop()
