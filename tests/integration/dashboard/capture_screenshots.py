"""Full-page screenshots of every dashboard page of a home, and of the three-click walk from the leaderboard to why
one question failed, for docs/img/ (not a test: run it by hand on the demo home after `finrag demo`):

    PYTHONPATH=.:tests .venv/bin/python tests/integration/dashboard/capture_screenshots.py warehouse docs/img \
        "hybrid · full · k=5 · split test"

The walk: the leaderboard's "<run> … vs the best" link of the run named by the third argument (default: the first
link, the run just behind the best) → run vs run → its first question that passes only in the best run and has an
answer → the drill-down → the first run's full chunk texts. Uses the browser tests' helpers
(tests/support/browser.py)."""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import polars as pl
from PIL import Image
from selenium.webdriver.common.by import By

from support.browser import Dashboard, chrome, open_page, wait_for_texts

WIDTH = 1500
MAX_HEIGHT = 7000

PAGES = [  # (file name, url path, a text that says the page is drawn)
    ("overview", "", "Published marts"),
    ("leaderboard", "leaderboard", "Every retrieval metric"),
    ("heatmap", "heatmap", "Topic × task"),
    ("slices", "slices", "Any metric by"),
    ("run_vs_run", "run_vs_run", "Per-question differences"),
    ("dashboard-sweeps", "sweeps?metric=page_rec", "The sweep's runs"),
    ("judge_agreement", "judge_agreement", "Where the judge and the humans disagree"),
    ("drilldown", "drilldown", "Answers"),
    ("judged", "judged", "By slice"),
    ("qa_generation", "qa_generation", "LLM inspector against humans"),
    ("costs", "costs", "Every job run and purpose"),
]


def full_page(driver, path: Path) -> None:
    """The whole page in one image: the window grown to the main block's height, then saved as a 256-colour PNG
    (a third of the size, no visible loss on a UI)."""
    time.sleep(2)
    height = driver.execute_script(
        "const m = document.querySelector('[data-testid=stMain]');"
        "return Math.max(document.body.scrollHeight, m ? m.scrollHeight : 0)")
    driver.set_window_size(WIDTH, min(max(height + 120, 900), MAX_HEIGHT))
    time.sleep(2)
    driver.save_screenshot(str(path))
    Image.open(path).convert("RGB").quantize(256).save(path, optimize=True)
    driver.set_window_size(WIDTH, 1900)
    print(path, height)


def main(home: Path, out: Path, run: str = "") -> None:
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="finrag-capture-"))
    server = Dashboard(home, scratch / "dashboard.log")
    driver = chrome(scratch / "chromium")
    try:
        for name, url_path, ready in PAGES:
            open_page(driver, f"{server.url}/{url_path}", [ready], timeout=120)
            full_page(driver, out / f"{name}.png")
        # the walk: three clicks from the leaderboard to why one question failed
        open_page(driver, f"{server.url}/leaderboard", ["Why is a run behind?"], timeout=120)  # = leaderboard.png
        driver.find_element(By.XPATH, f"//a[contains(., '{run}') and contains(., 'vs the best')]").click()
        wait_for_texts(driver, ["Is B better than A?", "Why did it flip?"], timeout=120)
        full_page(driver, out / "walk_1_run_vs_run.png")
        # the first question that passes only in the best run and that an answer run answered (the demo answers a few)
        answered = set(pl.read_parquet(home / "lake" / "answers" / "*" / "*.parquet")["question_id"])
        links = driver.find_elements(By.PARTIAL_LINK_TEXT, "(b only")
        chosen = [a for a in links if parse_qs(urlparse(a.get_attribute("href")).query)["question_id"][0] in answered]
        (chosen or links)[0].click()
        wait_for_texts(driver, ["first_gold_chunk", "Answers"], timeout=120)
        full_page(driver, out / "walk_2_drilldown.png")
        driver.find_elements(By.XPATH, "//summary[contains(., 'Full texts of the')]")[0].click()
        wait_for_texts(driver, ["#1 "], timeout=60)
        full_page(driver, out / "walk_3_full_texts.png")
    finally:
        driver.quit()
        server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), *sys.argv[3:4])
