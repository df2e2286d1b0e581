"""End to end in a real browser: `finrag dashboard` serves on loopback, headless Chromium (Debian's chromium +
chromedriver, driven by selenium; helpers in support/browser.py) opens every page and waits for known run ids and mart
values to be visible, and saves a screenshot per page ($FINRAG_SCREENSHOT_DIR, default test-artifacts/screenshots/).
And the lock rule: `finrag build` succeeds on the home the dashboard is serving, and the page still renders after
it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import polars as pl
import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from dashboards.pages import PAGES
from support.browser import SCREENSHOTS, Dashboard, open_page, open_paths, screenshot, wait_for_texts
from support.cli import run_finrag
from support.dashboard_home import BUILD_ARGS, DashHome
from support.published import read_mart, slice_calibration_texts


def fmt(value: float) -> str:
    return f"{value:.4f}"


def mart(home: Path, name: str) -> pl.DataFrame:
    return read_mart(home, name)


def interval(low: float, high: float) -> str:
    return f"[{fmt(low)}, {fmt(high)}]"


def trust(dash: DashHome, judge_run: str, metric: str, state: str) -> dict:
    """The one mart_judge_trust row of a judged mean, in the state the home gives it (support/dashboard_home.py)."""
    row = mart(dash.home, "mart_judge_trust").filter(
        (pl.col("judge_run_id") == judge_run) & (pl.col("metric") == metric)).row(0, named=True)
    assert row["trust_state"] == state, row
    return row


def chance_text(t: dict) -> str:
    """How a page words a judged mean no better than chance against humans: the mart's kappa and its interval."""
    return (f"no better than chance against humans ({t['agreement_label_set']} {t['metric']}): Cohen's kappa "
            f"{fmt(t['kappa'])} {interval(t['kappa_lower'], t['kappa_upper'])}")


def calibrated_text(t: dict) -> str:
    """... and a calibrated one: label set, human metric, method, n labelled of all, the calibrated mean and
    interval."""
    return (f"calibrated against {t['label_set']} {t['human_metric']} (PPI++, {t['n_labelled']} labelled of "
            f"{t['n_labelled'] + t['n_unlabelled']}): {fmt(t['calibrated_mean'])} "
            f"{interval(t['calibrated_lower'], t['calibrated_upper'])}")


UNCALIBRATED = "uncalibrated: no human labels say what it is worth"


def alerts(browser: webdriver.Chrome, kind: str) -> list[str]:
    """The texts of the page's alert boxes of one kind (warning, success, info) as Chromium renders them (their
    markdown, without the icon's ligature name)."""
    return [e.text for e in browser.find_elements(
        By.CSS_SELECTOR, f'[data-testid="stAlertContent{kind.title()}"] [data-testid="stMarkdownContainer"]')]


def page_expectations(dash: DashHome) -> dict[str, tuple[dict[str, str], list[str]]]:
    """page -> (query parameters, texts that must be visible), the numbers read from the published marts."""
    f, home = dash.facts, dash.home
    board = mart(home, "mart_retrieval_leaderboard").filter(pl.col("k") == 5)
    # the leaderboard's tables are canvas (st.dataframe): the numbers in text are the best runs' tiles, the best
    # of the runs that are not oracle bounds (dim_runs.is_oracle_bound: reference lines, not contenders)
    contender = ~pl.col("run_id").is_in(mart(home, "dim_runs").filter(pl.col("is_oracle_bound"))["run_id"].to_list())
    page_rec = board.filter((pl.col("metric") == "page_rec") & contender)["mean"].max()
    exact = mart(home, "mart_generation_leaderboard").filter(
        (pl.col("metric") == "exact_match") & contender)["mean"].max()
    cells = mart(home, "mart_topic_task_matrix").filter(
        (pl.col("run_id") == f["rag"]) & (pl.col("metric") == "exact_match") & (pl.col("topic_level") == 2))
    cell = cells.sort("topic_en", "task").row(0, named=True)
    gap = mart(home, "mart_oracle_gap").filter((pl.col("run_id") == f["bm25"]) & (pl.col("k") == 5)
                                               & (pl.col("metric") == "page_rec")).row(0, named=True)
    agreement = mart(home, "mart_judge_agreement").filter(pl.col("judge_run_id") == f["judge"]).row(0, named=True)
    chance = trust(dash, f["judge"], "correctness", "no_better_than_chance")
    calibrated = trust(dash, f["landed_judge"], "correctness", "calibrated")
    compared = mart(home, "mart_run_comparison").filter(
        (pl.col("run_a") == f["closed"]) & (pl.col("run_b") == f["rag"]) & (pl.col("metric") == "exact_match")
    ).row(0, named=True)
    question = mart(home, "dim_questions").filter(pl.col("question_id") == f["flip_question"]).row(0, named=True)
    calls = mart(home, "mart_llm_costs")["n_calls"].sum()
    worst = mart(home, "mart_answer_file_scores").filter(
        (pl.col("judge_run_id") == f["judge"]) & (pl.col("correctness") == 0))["question_id"].min()
    swept = mart(home, "mart_sweep_run_results").filter(
        (pl.col("sweep_id") == f["sweep"]) & (pl.col("metric") == "page_rec") & (pl.col("k") == 5))
    sweep_best = swept.filter(pl.col("is_best_in_sweep")).row(0, named=True)
    return {
        "leaderboard": ({"metric": "page_rec", "generation_metric": "exact_match"},
                        [f["bm25"], f["rag"], f["judge"], "bm25 · full · k=5 · split test", "PageRec@5 (page level)",
                         fmt(page_rec), fmt(exact), chance_text(chance), calibrated_text(calibrated)]),
        "heatmap": ({"run": f["rag"], "metric": "exact_match", "level": "2"},
                    [f["rag"], cell["topic_en"], fmt(cell["mean"])]),
        "slices": ({"run": f["bm25"], "k": "5", "dimension": "question_type"},
                   [f["bm25"], fmt(gap["mean"]), fmt(gap["oracle_page_mean"]), "PageRec@5 by question_type"]),
        "run_vs_run": ({"a": f["closed"], "b": f["rag"], "metric": "exact_match"},
                       [f["closed"], f["rag"], "Is B better than A?",
                        f"[{fmt(compared['ci_low'])}, {fmt(compared['ci_high'])}]",
                        f"{compared['p_randomization']:.3g}", "Flipped questions (1)", f["flip_question"]]),
        "judge_agreement": ({"judge_run": f["judge"]},
                            [f["judge"], fmt(agreement["accuracy"]), fmt(agreement["kappa"]),
                             interval(agreement["kappa_lower"], agreement["kappa_upper"]), chance_text(chance)]),
        "drilldown": ({"question_id": f["flip_question"]},
                      [question["question"], "✓ hit", f["bm25"], question["reference_answers"][0]]),
        "judged": ({"dimension": "question_type", "judge_run": f["judge"]},
                   ["Answer-file score per judge run", "How far its means can be trusted", chance_text(chance),
                    "Per question, worst first", "By slice", f"{worst} — correctness 0.0000"]),
        "qa_generation": ({}, ["No data: no QA-generation run", "finrag generate-qa --dataset demo_synthetic"]),
        "costs": ({}, ["LLM calls", f"{calls:,}", "Per job run", "Latency per call", f["judged_run"], "fake-model"]),
        "sweeps": ({"sweep": f["sweep"], "metric": "page_rec", "k": "5"},
                   ["Parameters × PageRec@5 (page level)", "The best setting per parameter", sweep_best["run_id"],
                    fmt(sweep_best["mean"]), "✓ tied"]),
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
    # every page of the dashboard's one list (dashboards/pages.py) was opened
    assert sorted(shots) == sorted(page.url_path for page in PAGES)
    (SCREENSHOTS / "index.json").write_text(json.dumps({p: str(s) for p, s in shots.items()}, indent=1) + "\n")


def test_build_succeeds_while_the_dashboard_serves(dash: DashHome, browser: webdriver.Chrome, tmp_path: Path) -> None:
    home = dash.lock_home
    manifest = home / "exports" / "marts" / "_manifest.json"
    before = json.loads(manifest.read_text())["published_at"]
    server = Dashboard(home, tmp_path / "dashboard.log")
    try:
        # the runs as the page labels them (ids show where a run is the best or linked)
        expected = [dash.facts["bm25"], "rag · fake-model · split test over [bm25 · full · k=5 · split test]"]
        open_page(browser, f"{server.url}/leaderboard", expected)
        open_page(browser, f"{server.url}/drilldown?question_id={dash.facts['flip_question']}", ["✓ hit"])
        # the server never has the warehouse file open (it reads Parquet only) ...
        open_files = open_paths(server.proc.pid)
        assert open_files and not [f for f in open_files if "finrag.duckdb" in f], open_files
        # ... so dbt, which opens it read-write, does not fail on a lock
        proc = run_finrag(home, "build", *BUILD_ARGS, check=False)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert json.loads(manifest.read_text())["published_at"] > before  # republished (--quiet: no note says so)
        assert server.proc.poll() is None
        body = open_page(browser, f"{server.url}/leaderboard", expected)
        assert "No published marts" not in body
        screenshot(browser, "leaderboard_after_build")
    finally:
        server.stop()


def test_a_flipped_question_links_to_its_drilldown(dash: DashHome, browser: webdriver.Chrome, tmp_path: Path) -> None:
    """Run vs run → click the flipped question → the drill-down opens on it with both runs: the answers, the
    chunks that went into the RAG prompt."""
    f = dash.facts
    question = mart(dash.home, "dim_questions").filter(pl.col("question_id") == f["flip_question"]).row(0, named=True)
    server = Dashboard(dash.home, tmp_path / "dashboard.log")
    try:
        params = urlencode({"a": f["closed"], "b": f["rag"], "metric": "exact_match"})
        open_page(browser, f"{server.url}/run_vs_run?{params}", ["Why did it flip?", f["flip_question"]])
        link = browser.find_element(By.PARTIAL_LINK_TEXT, f"{f['flip_question']} (b only: 0.0000 → 1.0000)")
        link.click()
        # both answer runs are waited for: Streamlit renders the page in pieces, and a body read between two
        # pieces once held the first answer only
        body = wait_for_texts(browser, [question["question"], "Gold evidence", "in_prompt", "Answers",
                                        question["reference_answers"][0], "closed_book · fake-model",
                                        "rag · fake-model"], what="the drill-down")
        assert "drilldown" in browser.current_url and f"question_id={f['flip_question']}" in browser.current_url
        assert body.rfind("closed_book · fake-model") > body.index("Answers")
        assert body.rfind("rag · fake-model") > body.index("Answers")
        screenshot(browser, "drilldown_from_run_vs_run")
    finally:
        server.stop()


def test_three_clicks_from_the_leaderboard_to_why_a_question_failed(dash: DashHome, browser: webdriver.Chrome,
                                                                     tmp_path: Path) -> None:
    """Leaderboard → (1) "the best vs the oracle bound …" → run vs run, bm25 (the best full-corpus run on nDCG@5)
    against the oracle-page run → (2) a question that passes only in the oracle run → the drill-down on it with both
    runs → (3) the full texts of bm25's chunks."""
    f = dash.facts
    server = Dashboard(dash.home, tmp_path / "dashboard.log")
    try:
        open_page(browser, f"{server.url}/leaderboard?metric=ndcg&granularity=page",
                  ["How far below the bound?", "nDCG@5 (page level)", f"({f['oracle']})"])
        WebDriverWait(browser, 30).until(lambda d: d.find_element(
            By.XPATH, f"//a[contains(., 'vs the oracle bound') and contains(., '({f['oracle']})')]")).click()
        # 1 ^
        wait_for_texts(browser, ["Is B better than A?", "Why did it flip?", "Δ ndcg (B − A)", "(b only:"],
                       what="run vs run")
        assert f"a={f['bm25']}" in browser.current_url and f"b={f['oracle']}" in browser.current_url
        link = browser.find_element(By.PARTIAL_LINK_TEXT, "(b only:")
        question_id = parse_qs(urlparse(link.get_attribute("href")).query)["question_id"][0]
        link.click()  # 2
        question = mart(dash.home, "dim_questions").filter(pl.col("question_id") == question_id).row(0, named=True)
        wait_for_texts(browser, [question["question"], "first_gold_chunk", "bm25 · oracle_page", "✓ hit"],
                       what="the drill-down")
        assert f"question_id={question_id}" in browser.current_url
        screenshot(browser, "walkthrough_drilldown")
        browser.find_elements(By.XPATH, "//summary[contains(., 'Full texts of the')]")[0].click()  # 3
        wait_for_texts(browser, ["#1 ", "TARNWICK"], what="the full texts")
        screenshot(browser, "walkthrough_full_texts")
    finally:
        server.stop()


def test_the_sweep_page_marks_the_runs_tied_with_the_best(dash: DashHome, browser: webdriver.Chrome,
                                                            tmp_path: Path) -> None:
    """The fixture's sweep on PageRec@5: every run of the sweep in the runs table with its setting and mean, the runs
    tied with the family's best marked (on this fixture every one: the best is the best full-corpus run, the
    oracle-page run a bound), the best value per parameter."""
    f = dash.facts
    runs = mart(dash.home, "mart_sweep_run_results").filter(
        (pl.col("sweep_id") == f["sweep"]) & (pl.col("metric") == "page_rec") & (pl.col("k") == 5))
    effects = mart(dash.home, "mart_sweep_parameter_effects").filter(
        (pl.col("sweep_id") == f["sweep"]) & (pl.col("metric") == "page_rec") & (pl.col("k") == 5)
        & pl.col("is_best_value"))
    server = Dashboard(dash.home, tmp_path / "dashboard.log")
    try:
        params = urlencode({"sweep": f["sweep"], "metric": "page_rec", "k": "5"})
        open_page(browser, f"{server.url}/sweeps?{params}", ["The sweep's runs", *runs["run_id"]])
        table = browser.find_elements(By.CSS_SELECTOR, '[data-testid="stTable"]')[-1]
        rows = {r.find_elements(By.TAG_NAME, "td")[0].text: [c.text.strip() for c in r.find_elements(By.TAG_NAME, "td")]
                for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")}
        assert set(rows) == set(runs["run_id"]) and len(rows) == 4
        for r in runs.iter_rows(named=True):
            cells = rows[r["run_id"]]
            assert cells[1:4] == [r["setting"], "✓ tied" if r["tied_with_best"] else "", fmt(r["mean"])]
        # Tukey's HSD cannot tell any sweep run from the best full-corpus run on PageRec@5 (it could from the
        # oracle-page run, no longer a contender)
        assert runs["tied_with_best"].all() and not runs["is_best"].all()
        assert "chunk_size=256, retriever=bm25" in rows[f["bm25"]]  # the bm25 run is the sweep's baseline
        best = browser.find_elements(By.CSS_SELECTOR, '[data-testid="stTable"]')[0].text
        for e in effects.iter_rows(named=True):
            assert f"{e['parameter']}" in best and fmt(e["mean"]) in best
        screenshot(browser, "sweeps")
    finally:
        server.stop()


@pytest.fixture(scope="module")
def served(dash: DashHome, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dashboard]:
    """One dashboard on the shared home for the three trust-state tests below (a server start each would cost)."""
    server = Dashboard(dash.home, tmp_path_factory.mktemp("trust") / "dashboard.log")
    try:
        yield server
    finally:
        server.stop()


def test_a_judge_no_better_than_chance_is_a_visible_warning(dash: DashHome, browser: webdriver.Chrome,
                                                             served: Dashboard) -> None:
    """The FakeLLM judge run's correctness (kappa about 0 against FinanceBench's labels, its interval holding 0): the
    judge agreement page warns, in a warning box, with the mart's mean, kappa and interval beside the kappa tiles."""
    f = dash.facts
    chance = trust(dash, f["judge"], "correctness", "no_better_than_chance")
    assert chance["kappa_lower"] <= 0 <= chance["kappa_upper"]
    open_page(browser, f"{served.url}/judge_agreement?{urlencode({'judge_run': f['judge']})}",
              [f"Cohen's kappa's interval: {interval(chance['kappa_lower'], chance['kappa_upper'])}",
               chance_text(chance)])
    warnings = alerts(browser, "warning")
    assert len(warnings) == 1 and f["judge"] in warnings[0]
    assert warnings[0].endswith(f"— mean {fmt(chance['mean'])}: {chance_text(chance)}"), warnings
    screenshot(browser, "trust_no_better_than_chance")


def test_a_calibrated_mean_shows_its_calibration(dash: DashHome, browser: webdriver.Chrome,
                                                 served: Dashboard) -> None:
    """The landed judge run's correctness, calibrated against the spot-check labels by PPI++ (12 labelled of 30):
    the judged page shows, in a success box beside its mean, the label set, method, n labelled of all, the
    calibrated mean and its interval as the mart has them (and no warning); by question type, a success box per
    type and one for the types combined (stratified PPI++, mart_judge_calibrated_by_slice)."""
    f = dash.facts
    calibrated = trust(dash, f["landed_judge"], "correctness", "calibrated")
    assert (calibrated["calibration_method"], calibrated["n_labelled"], calibrated["n_unlabelled"]) == ("ppi++", 12, 18)
    expected = f"Correctness — mean {fmt(calibrated['mean'])}: {calibrated_text(calibrated)}"
    assert "(PPI++, 12 labelled of 30)" in expected
    # by question type (the page's slice): PPI++ on each type's labelled answers, and the types combined
    by_slice = slice_calibration_texts(dash.home, f["landed_judge"], "question_type", "Correctness")
    assert [b["calibrated"] for b in by_slice] == [True, True, True]  # 7 and 5 of the 12 labels
    stratified = by_slice[-1]["text"]
    assert "stratified over question_type: calibrated against spot_check correctness (PPI++, 12 labelled of 30)" \
        in stratified and stratified.endswith("; 2 of 2 strata, 100.0% of the answers")
    params = urlencode({"judge_run": f["landed_judge"], "dimension": "question_type"})
    open_page(browser, f"{served.url}/judged?{params}", ["How far its means can be trusted", expected, stratified])
    assert alerts(browser, "success") == [expected, *[b["text"] for b in by_slice]]
    assert alerts(browser, "warning") == []
    screenshot(browser, "trust_calibrated")


def test_an_uncalibrated_mean_says_so(dash: DashHome, browser: webdriver.Chrome, served: Dashboard) -> None:
    """The landed judge run's faithfulness (no human label of faithfulness anywhere): the leaderboard, on the judged
    metric faithfulness, says "uncalibrated" beside the run's mean, in an info box."""
    f = dash.facts
    uncalibrated = trust(dash, f["landed_judge"], "faithfulness", "uncalibrated")
    params = urlencode({"metric": "page_rec", "judged_metric": "faithfulness"})
    open_page(browser, f"{served.url}/leaderboard?{params}",
              ["How far each Faithfulness mean can be trusted", UNCALIBRATED])
    (line,) = [a for a in alerts(browser, "info") if UNCALIBRATED in a]
    assert f["landed_judge"] in line and line.endswith(f"— mean {fmt(uncalibrated['mean'])}: {UNCALIBRATED}"), line
    assert alerts(browser, "warning") == [] and alerts(browser, "success") == []
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", browser.find_element(
        By.XPATH, "//*[contains(text(), 'How far each Faithfulness mean can be trusted')]"))
    screenshot(browser, "trust_uncalibrated")


def picker_chips(browser: webdriver.Chrome, label: str) -> list[str] | None:
    """The runs a run picker (ui.run_picker) holds, as its chips say them in Chromium (None: not drawn yet, or
    redrawn while read)."""
    try:
        widgets = browser.find_elements(By.XPATH, "//div[@data-testid='stMultiSelect']"
                                        f"[.//*[@data-testid='stWidgetLabel'][normalize-space()='{label}']]")
        if len(widgets) != 1:
            return None
        return [t.get_attribute("title") for t in widgets[0].find_elements(By.XPATH, ".//span[@data-tag]/span[@title]")
                if not t.find_elements(By.XPATH, "ancestor::template")]
    except StaleElementReferenceException:
        return None


def wait_for_chips(browser: webdriver.Chrome, label: str, expected: list[str], ordered: bool = True) -> None:
    def held(d: webdriver.Chrome) -> bool:
        chips = picker_chips(d, label)
        return chips is not None and (chips == expected if ordered else sorted(chips) == sorted(expected))
    try:
        WebDriverWait(browser, 30, poll_frequency=0.25).until(held)
    except TimeoutException:
        pytest.fail(f"{label}: {picker_chips(browser, label)} != {expected}")


def test_the_run_picker_defaults_to_the_best_runs_and_filters(dash: DashHome, browser: webdriver.Chrome,
                                                              served: Dashboard) -> None:
    """The run picker in Chromium: the leaderboard holds each dataset's best 3 runs on its metric (mart_run_vs_best's
    rank), not every run, each chip saying what the run is (a sweep's run its setting); the text filter typed in;
    the sweep, dataset (?sweep=, ?dataset=) and kind (?kind=, on the drill-down) filters; Top N 0 (?top=0)."""
    f = dash.facts
    versus = mart(dash.home, "mart_run_vs_best").filter(
        (pl.col("run_kind") == "retrieval") & (pl.col("metric") == "page_rec") & (pl.col("granularity") == "page")
        & (pl.col("k") == 5)).sort("rank_in_family", "run_id")
    label = dict(mart(dash.home, "dim_runs").select("run_id", "label").iter_rows())
    setting = dict(mart(dash.home, "mart_sweep_runs").filter(pl.col("sweep_id") == f["sweep"])
                   .select("run_id", "setting").unique().iter_rows())
    def chip(run: str) -> str:
        return f"{label[run]} · {setting[run]}" if run in setting else label[run]
    # the best 3 contenders, then the oracle bound (a reference line, never the best)
    best = [*versus.filter(~pl.col("is_oracle_bound"))["run_id"].head(3), *versus.filter(
        pl.col("is_oracle_bound"))["run_id"]]
    assert versus.height == 5 and len(setting) == 4 and len(best) == 4
    base = f"{served.url}/leaderboard?" + urlencode({"metric": "page_rec", "granularity": "page", "k": "5"})
    open_page(browser, base, ["Retrieval runs", "PageRec@5 (page level)", "4 shown of 5 runs after the filters"])
    wait_for_chips(browser, "Retrieval runs", [chip(r) for r in best])
    body = browser.find_element(By.TAG_NAME, "body").text
    assert not [r for r in versus["run_id"] if r not in best and r in body]  # the others are nowhere on the page
    # the text filter, typed: the sweep's keyword-expansion runs
    box = browser.find_elements(By.CSS_SELECTOR, 'input[aria-label="Filter runs by text"]')[0]
    box.send_keys("retriever=keywords", Keys.ENTER)
    keywords = [r for r in versus["run_id"] if "retriever=keywords" in setting.get(r, "")]
    wait_for_chips(browser, "Retrieval runs", [chip(r) for r in keywords])
    # the sweep filter and Top N 0: every run of the sweep, best first; the dataset filter on the answer runs
    open_page(browser, f"{base}&{urlencode({'sweep': f['sweep'], 'dataset': 'financebench', 'top': '0'})}",
              ["Retrieval runs", "4 shown of 4 runs after the filters"])
    wait_for_chips(browser, "Retrieval runs", [chip(r) for r in versus["run_id"] if r in setting])
    fb = mart(dash.home, "mart_run_vs_best").filter(
        (pl.col("run_kind") == "generation") & (pl.col("metric") == "rouge_l") & (pl.col("dataset") == "financebench")
    ).sort("is_oracle_bound", "rank_in_family", "run_id")  # the contenders, then the bounds
    wait_for_chips(browser, "Answer runs", [chip(r) for r in fb["run_id"]])
    # the kind filter on the drill-down (retrieval and answer runs): its answer runs only
    open_page(browser, f"{served.url}/drilldown?{urlencode({'question_id': f['flip_question'], 'kind': 'answer'})}",
              ["Runs shown", "Answers", "rag · fake-model"])
    wait_for_chips(browser, "Runs", [chip(r) for r in (f["closed"], f["rag"])], ordered=False)
    assert "— 1 hit(s) in" not in browser.find_element(By.TAG_NAME, "body").text  # no retrieval run's chunks
    screenshot(browser, "run_picker")
