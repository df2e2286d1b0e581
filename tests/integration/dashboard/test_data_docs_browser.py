"""The Data Docs from the dashboard, in a real browser: a home with a good load and a malformed one
(support/validation_home.py), `finrag dashboard` serving it (and its Data Docs on a port of their own), headless
Chromium clicks the overview's Data Docs link and finds the passed and the failed validations listed, opens the
failed one and finds the unknown topic; a screenshot goes to test-artifacts/screenshots/data_docs.png."""

from __future__ import annotations

from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from support.browser import Dashboard, open_page, screenshot, wait_for_texts
from support.validation_home import BAD_RUN, GOOD, UNKNOWN_TOPIC, land_good_and_bad


def test_overview_links_to_the_data_docs(browser: webdriver.Chrome, tmp_path: Path) -> None:
    home = tmp_path / "warehouse"
    home.mkdir()
    v = land_good_and_bad(home, tmp_path)
    assert v.failed.returncode == 2, v.failed.stderr
    server = Dashboard(home, tmp_path / "dashboard.log")
    try:
        open_page(browser, server.url + "/", ["FinRAG Warehouse", "Landing validations", "1 failed"])
        link = browser.find_element(By.PARTIAL_LINK_TEXT, "Data Docs")
        assert link.get_attribute("href") == server.docs_url
        tabs = set(browser.window_handles)
        link.click()  # Streamlit opens markdown links in a new tab
        WebDriverWait(browser, 30).until(lambda d: len(d.window_handles) > len(tabs))
        browser.switch_to.window((set(browser.window_handles) - tabs).pop())
        body = wait_for_texts(browser, ["Validation Results", f"run_id={BAD_RUN}", f"load_id={GOOD}", "Failed",
                                        "Success", "retrieval_results"], what="Data Docs index")
        assert browser.current_url == server.docs_url
        assert body.count("Failed") == 1, body  # the malformed run's results; everything else passed
        screenshot(browser, "data_docs")
        # the failed validation's own page names the unexpected value
        browser.find_element(By.LINK_TEXT, "Failed").click()
        wait_for_texts(browser, ["retrieval_results", UNKNOWN_TOPIC, "unexpected"], what="the failed validation")
        screenshot(browser, "data_docs_failed_validation")
    finally:
        server.stop()
