"""Each dashboard page under Streamlit's AppTest: it runs without an exception, shows the known run ids, and the
numbers it shows are the published marts' values (read here straight from the Parquet exports)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from dashboards.ui import DEFAULT_TOP
from support.dashboard_home import DashHome
from support.paths import PROJECT
from support.published import read_mart, slice_calibration_texts

PAGES_DIR = PROJECT / "dashboards" / "views"


def fmt(value: float) -> str:
    return f"{value:.4f}"


def mart(home: Path, name: str) -> pl.DataFrame:
    return read_mart(home, name)


def run_page(home: Path, page: str, monkeypatch: pytest.MonkeyPatch, params: dict[str, str] | None = None) -> AppTest:
    monkeypatch.setenv("FINRAG_HOME", str(home))
    at = AppTest.from_file(str(PAGES_DIR / f"{page}.py"), default_timeout=60)
    at.query_params.update(params or {})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def trust_rows(home: Path, judge_run_id: str, metric: str) -> list[dict]:
    return mart(home, "mart_judge_trust").filter(
        (pl.col("judge_run_id") == judge_run_id) & (pl.col("metric") == metric)).to_dicts()


def interval(low: float, high: float) -> str:
    return f"[{fmt(low)}, {fmt(high)}]"


def shown_run(dash: DashHome, run_id: str) -> str:
    """How a page names a run: its dim_runs label, then its id."""
    label = mart(dash.home, "dim_runs").filter(pl.col("run_id") == run_id)["label"].item()
    return f"{label}  ({run_id})"


def chance_text(t: dict) -> str:
    """What a page says of a judged mean no better than chance: the mart's kappa and interval, 4 decimals."""
    return (f"no better than chance against humans ({t['agreement_label_set']} {t['metric']}): Cohen's kappa "
            f"{fmt(t['kappa'])} {interval(t['kappa_lower'], t['kappa_upper'])}")


def calibrated_text(t: dict) -> str:
    return (f"calibrated against {t['label_set']} {t['human_metric']} (PPI++, {t['n_labelled']} labelled of "
            f"{t['n_labelled'] + t['n_unlabelled']}): {fmt(t['calibrated_mean'])} "
            f"{interval(t['calibrated_lower'], t['calibrated_upper'])}")


def assert_three_states(dash: DashHome) -> tuple[dict, dict, dict]:
    """The home's three judged means (tests/support/dashboard_home.py): the FakeLLM judge run's correctness no better
    than chance, the landed judge run's correctness calibrated (PPI++ on 12 spot-check labels of 30 answers), its
    faithfulness uncalibrated; one row each."""
    f = dash.facts
    (chance,) = trust_rows(dash.home, f["judge"], "correctness")
    (calibrated,) = trust_rows(dash.home, f["landed_judge"], "correctness")
    (uncalibrated,) = trust_rows(dash.home, f["landed_judge"], "faithfulness")
    assert (chance["trust_state"], chance["agreement_label_set"], chance["calibrated_mean"]) == \
        ("no_better_than_chance", "financebench_human", None)
    assert chance["kappa_lower"] <= 0 <= chance["kappa_upper"]
    assert (calibrated["trust_state"], calibrated["calibration_method"], calibrated["label_set"],
            calibrated["n_labelled"], calibrated["n_unlabelled"]) == ("calibrated", "ppi++", f["spot_check"], 12, 18)
    assert (uncalibrated["trust_state"], uncalibrated["label_set"], uncalibrated["kappa"]) == \
        ("uncalibrated", None, None)
    return chance, calibrated, uncalibrated


def table(at: AppTest, i: int) -> list[dict]:
    return at.table[i].value.to_dict("records")


def row_of(rows: list[dict], **match: str) -> dict:
    found = [r for r in rows if all(r[k] == v for k, v in match.items())]
    assert len(found) == 1, (match, rows)
    return found[0]


def frames_with(at: AppTest, column: str) -> list[list[dict]]:
    """The rows of each st.dataframe (the sortable tables: raw values, not formatted text) with this column."""
    return [d.value.to_dict("records") for d in at.dataframe if column in d.value.columns]


def frame_rows(at: AppTest, column: str) -> list[dict]:
    found = frames_with(at, column)
    assert len(found) == 1, (column, [list(d.value.columns) for d in at.dataframe])
    return found[0]


def test_leaderboard(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(dash.home, "leaderboard", monkeypatch, {"top": "0"})  # every run (test_the_run_picker: the best)
    assert [t.value for t in at.title] == ["Leaderboard"]
    retrieval = mart(dash.home, "mart_retrieval_leaderboard").filter(pl.col("k") == 5)
    # the finest granularity with data is the default: the synthetic corpus has chunk-level evidence
    assert at.selectbox(key="granularity").value == "chunk"
    at.selectbox(key="granularity").set_value("page").run()
    bm25 = row_of(frame_rows(at, "retriever"), run_id=dash.facts["bm25"])
    for metric, granularity in [("doc_rec", "doc"), ("page_rec", "page"), ("ndcg", "page"), ("map", "page")]:
        expected = retrieval.filter((pl.col("run_id") == dash.facts["bm25"]) & (pl.col("metric") == metric)
                                    & (pl.col("granularity") == granularity))["mean"].item()
        assert bm25[metric] == pytest.approx(expected, abs=1e-12)
    # run labels say what the run is, not its hash
    assert bm25["run"] == "bm25 · full · k=5 · split test"
    # the chart first: the best run on the chosen metric as a tile - the family's best (mart_run_families), a
    # full-condition run: the oracle-page run scores highest on nDCG but is an upper bound, a reference line
    ndcg = retrieval.filter((pl.col("metric") == "ndcg") & (pl.col("granularity") == "page"))
    family_best = mart(dash.home, "mart_run_families").filter(
        (pl.col("run_kind") == "retrieval") & (pl.col("metric") == "ndcg") & (pl.col("granularity") == "page")
        & (pl.col("k") == 5))["best_run_id"].item()
    best = ndcg.filter(pl.col("run_id") == family_best).row(0, named=True)
    oracle = ndcg.filter(pl.col("run_id") == dash.facts["oracle"]).row(0, named=True)
    assert best["condition"] == "full" and oracle["mean"] > best["mean"]
    label = dict(mart(dash.home, "dim_runs").select("run_id", "label").rows())[best["run_id"]]
    shown = {m.label: m.value for m in at.metric}
    assert shown[f"Best: {label}  ({best['run_id']})"] == fmt(best["mean"])
    assert any("Dashed lines: oracle bounds" in c.value for c in at.caption)
    assert len(at.get("vega_lite_chart")) >= 2  # the ranking and the metric-vs-k curves
    # the way to "why": a run behind links to run vs run against the best one, and the best to the bound above it
    compare = [m.value for m in at.markdown if "run_vs_run?" in m.value]
    behind = ndcg.filter((pl.col("condition") == "full") & (pl.col("run_id") != best["run_id"]))["run_id"][0]
    assert any(f"a={behind}&b={best['run_id']}&metric=ndcg&granularity=page&k=5" in c for c in compare)
    assert any(f"a={best['run_id']}&b={oracle['run_id']}&metric=ndcg&granularity=page&k=5" in c for c in compare)
    assert not any(f"a={oracle['run_id']}&" in c for c in compare)  # a bound is never behind
    # each run against its family's best at any count of runs (mart_run_vs_best): interval, p, Holm, tied marker
    versus = mart(dash.home, "mart_run_vs_best").filter(
        (pl.col("run_kind") == "retrieval") & (pl.col("metric") == "ndcg") & (pl.col("granularity") == "page")
        & (pl.col("k") == 5))
    shown_vs = next(rows for rows in frames_with(at, "vs_best") if any(r["run_id"] == best["run_id"] for r in rows))
    assert sorted(r["run_id"] for r in shown_vs) == sorted(versus["run_id"]) and len(shown_vs) == 5
    for r in shown_vs:
        v = versus.filter(pl.col("run_id") == r["run_id"]).row(0, named=True)
        assert r["best_run_id"] == best["run_id"]
        assert r["vs_best"] == ("oracle bound" if v["is_oracle_bound"] else
                                "tied with the best" if v["tied_with_best"] else "")
        for column in ("delta_vs_best", "ci_low", "ci_high", "p_holm", "p_tukey"):
            assert pd.isna(r[column]) if v[column] is None else r[column] == pytest.approx(v[column]), column
    generation = mart(dash.home, "mart_generation_leaderboard")
    rag = row_of(frame_rows(at, "retrieval_run_id"), run_id=dash.facts["rag"])
    assert rag["exact_match"] == pytest.approx(generation.filter(
        (pl.col("run_id") == dash.facts["rag"]) & (pl.col("metric") == "exact_match"))["mean"].item())
    assert rag["run"].startswith("rag · fake-model · split test over [bm25 · full")
    # each metric's own count: numeric_match over the questions with a numeric gold only
    for metric in ("exact_match", "numeric_match"):
        assert rag[f"n_{metric}"] == generation.filter((pl.col("run_id") == dash.facts["rag"])
                                                       & (pl.col("metric") == metric))["n"].item()
    # judged: one row per judge run and metric, its own counts (never summed over metrics)
    judged = mart(dash.home, "mart_judge_leaderboard").filter(
        (pl.col("judge_run_id") == dash.facts["judge"]) & (pl.col("metric") == "correctness")).row(0, named=True)
    judge_rows = frame_rows(at, "judge_run_id")
    judge = row_of(judge_rows, judge_run_id=dash.facts["judge"], metric="correctness")
    assert judge["mean"] == pytest.approx(judged["mean"])
    assert (judge["n_ok"], judge["n_not_applicable"], judge["n_failed"]) == (30, 0, 0)
    assert len(judge_rows) == 3  # + the landed judge run's correctness and faithfulness
    # every judged mean of the table beside its state (mart_judge_trust)
    states = {(r["judge_run_id"], r["metric"]): r["trust_state"] for r in judge_rows}
    assert states == {(dash.facts["judge"], "correctness"): "no_better_than_chance",
                      (dash.facts["landed_judge"], "correctness"): "calibrated",
                      (dash.facts["landed_judge"], "faithfulness"): "uncalibrated"}
    # beside the chosen judged metric's means (correctness), each one's state (mart_judge_trust): a warning for the
    # judge no better than chance, the calibrated mean of the calibrated one
    chance, calibrated, _ = assert_three_states(dash)
    assert [w.value for w in at.warning] == [
        f"{shown_run(dash, dash.facts['judge'])} — mean {fmt(chance['mean'])}: {chance_text(chance)}"]
    assert [s.value for s in at.success] == [
        f"{shown_run(dash, dash.facts['landed_judge'])} — mean {fmt(calibrated['mean'])}: "
        f"{calibrated_text(calibrated)}"]
    # the run filter: one retrieval run left
    at.multiselect(key="retrieval_runs").set_value([dash.facts["bm25"]]).run()
    assert [r["run_id"] for r in frame_rows(at, "retriever")] == [dash.facts["bm25"]]
    # the dataset filter: financebench only leaves no retrieval run, and only its answer runs
    at.multiselect(key="datasets").set_value(["financebench"]).run()
    assert not at.exception
    assert {r["run_id"] for r in frame_rows(at, "retrieval_run_id")} == set(dash.facts["fb_runs"])
    assert not frames_with(at, "retriever")
    # the real cause: FinanceBench is ingested without PDFs here, so it has no chunk to retrieve from
    assert any("financebench has documents but no chunks" in i.value
               and "finrag chunk --dataset financebench" in i.value for i in at.info), [i.value for i in at.info]


def best_runs(home: Path, run_kind: str, metric: str, granularity: str | None = None, k: int | None = None,
              top: int = DEFAULT_TOP, runs: list[str] | None = None) -> list[str]:
    """The run picker's default, worked from mart_run_vs_best: each dataset's best `top` runs of the family (of
    `runs` when given) by rank_in_family, best first, then its oracle bounds (never the best: reference lines)."""
    family = mart(home, "mart_run_vs_best").filter(
        (pl.col("run_kind") == run_kind) & (pl.col("metric") == metric)
        & (pl.col("granularity").is_null() if granularity is None else pl.col("granularity") == granularity)
        & (pl.col("k").is_null() if k is None else pl.col("k") == k)
        & (pl.col("run_id").is_in(runs) if runs is not None else True))
    ordered = family.sort("rank_in_family", "dataset", "run_id")
    contenders = ordered.filter(~pl.col("is_oracle_bound")).group_by("dataset", maintain_order=True).head(top)
    return [*contenders["run_id"], *ordered.filter(pl.col("is_oracle_bound"))["run_id"]]


def test_the_run_picker(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    """The one run picker (ui.run_picker) on the leaderboard: by default each dataset's best DEFAULT_TOP runs on the
    page's metric as mart_run_vs_best ranks them (not every run); filters by sweep (mart_sweep_runs), text and
    dataset; Top N 0 is every run; a sweep's runs are named by their setting in the chips and the chart."""
    at = run_page(dash.home, "leaderboard", monkeypatch, {"metric": "page_rec", "granularity": "page", "k": "5"})
    retrieval = at.multiselect(key="retrieval_runs")
    every = mart(dash.home, "mart_retrieval_leaderboard").filter(pl.col("k") == 5)["run_id"].unique().to_list()
    top = best_runs(dash.home, "retrieval", "page_rec", "page", 5)
    bounds = mart(dash.home, "dim_runs").filter(pl.col("is_oracle_bound") & (pl.col("kind") == "retrieval"))[
        "run_id"].to_list()
    assert retrieval.value == top and len(top) == DEFAULT_TOP + 1 < len(every) and top[-1] in bounds
    # the page follows the picker: the table holds the best runs only
    assert {r["run_id"] for r in frame_rows(at, "retriever")} == set(top)
    # answer runs: the best of each dataset on the default lexical metric (ROUGE-L)
    assert at.multiselect(key="generation_runs").value == best_runs(dash.home, "generation", "rouge_l")
    # a sweep's run says its setting (the sweep's parameters); the ranking chart names it by the setting alone
    swept = mart(dash.home, "mart_sweep_runs").filter(pl.col("sweep_id") == dash.facts["sweep"]) \
        .select("run_id", "setting").unique()
    setting = dict(swept.iter_rows())
    label = dict(mart(dash.home, "dim_runs").select("run_id", "label").iter_rows())
    bm25 = dash.facts["bm25"]
    assert f"{label[bm25]} · {setting[bm25]}" in retrieval.options
    (chart, *_) = at.get("vega_lite_chart")[0].proto.datasets  # the runs' rows, as Arrow (then the bounds')
    rows = pl.from_arrow(pa.ipc.open_stream(chart.data.data).read_all())
    names = {r["run_id"]: (r["run"], r["sweep"]) for r in rows.iter_rows(named=True)}
    assert names[bm25] == (setting[bm25], dash.facts["sweep"])
    assert set(names) == set(top) - set(bounds)  # the oracle bound is a reference line, not a bar
    # the sweep filter: the sweep's runs, its best three by default; runs in no sweep: the oracle run
    at.selectbox(key="retrieval_runs_sweep").set_value(dash.facts["sweep"]).run()
    assert len(at.multiselect(key="retrieval_runs").options) == len(setting) == 4
    assert at.multiselect(key="retrieval_runs").value == best_runs(dash.home, "retrieval", "page_rec", "page", 5,
                                                                   runs=list(setting))
    at.selectbox(key="retrieval_runs_sweep").set_value("(in no sweep)").run()
    assert at.multiselect(key="retrieval_runs").value == [dash.facts["oracle"]] == bounds
    # the text filter (label, id, sweep or setting) and Top N = 0: every run that matches
    at.selectbox(key="retrieval_runs_sweep").set_value("(any)")
    at.text_input(key="retrieval_runs_text").set_value("retriever=keywords")
    at.number_input(key="retrieval_runs_top").set_value(0).run()
    keywords = sorted(r for r, s in setting.items() if "retriever=keywords" in s)
    assert sorted(at.multiselect(key="retrieval_runs").value) == keywords and len(keywords) == 2
    # the dataset filter, on the answer runs of two datasets
    at.selectbox(key="generation_runs_dataset").set_value("financebench").run()
    assert sorted(at.multiselect(key="generation_runs").value) == sorted(dash.facts["fb_runs"])
    assert not at.exception
    # the URL's runs (a link's): those, where the section has them; the others keep their best runs
    at = run_page(dash.home, "leaderboard", monkeypatch, {"runs": dash.facts["oracle"]})
    assert at.multiselect(key="retrieval_runs").value == [dash.facts["oracle"]]
    assert at.multiselect(key="judge_runs").value == best_runs(dash.home, "judge", "correctness")


def test_heatmap(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    if not any(PROJECT.glob("models/**/mart_topic_task_matrix.sql")):
        pytest.skip("mart_topic_task_matrix is not in models/ yet")
    at = run_page(dash.home, "heatmap", monkeypatch)
    at.selectbox(key="run").set_value(dash.facts["rag"]).run()
    at.selectbox(key="metric").set_value("exact_match").run()
    at.selectbox(key="level").set_value(2).run()
    assert not at.exception
    cells = mart(dash.home, "mart_topic_task_matrix").filter(
        (pl.col("run_id") == dash.facts["rag"]) & (pl.col("metric") == "exact_match") & (pl.col("topic_level") == 2))
    rows = table(at, 0)
    assert {r["topic_label"] for r in rows} == set(cells["topic_en"])
    for cell in cells.iter_rows(named=True):
        assert row_of(rows, topic_label=cell["topic_en"])[cell["task"]] == fmt(cell["mean"])
    assert len(at.get("vega_lite_chart")) == 1


def test_slices(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(dash.home, "slices", monkeypatch)
    bm25 = dash.facts["bm25"]
    assert at.selectbox(key="run").value == bm25  # the first full-corpus run by default
    at.selectbox(key="dimension").set_value("question_type").run()
    gap = mart(dash.home, "mart_oracle_gap").filter((pl.col("run_id") == bm25) & (pl.col("k") == 5))
    page_gap = gap.filter(pl.col("metric") == "page_rec").row(0, named=True)
    assert page_gap["oracle_page_run_id"] == dash.facts["oracle"]
    shown = {m.label: m.value for m in at.metric}
    assert shown["PageRec@5 (this run)"] == fmt(page_gap["mean"])
    assert shown["PageRec@5 Oracle-Page"] == fmt(page_gap["oracle_page_mean"])
    slices = mart(dash.home, "mart_retrieval_by_slice").filter(
        (pl.col("dimension") == "question_type") & (pl.col("k") == 5) & (pl.col("metric") == "page_rec"))
    page_rows = table(at, 1)  # DocRec first, then PageRec
    for s in slices.filter(pl.col("run_id") == bm25).iter_rows(named=True):
        row = row_of(page_rows, value=s["dimension_value"])
        oracle = slices.filter((pl.col("run_id") == dash.facts["oracle"])
                               & (pl.col("dimension_value") == s["dimension_value"]))["mean"].item()
        assert (row["mean"], row["oracle_page_mean"], row["oracle_doc_mean"]) == (fmt(s["mean"]), fmt(oracle), "—")
    # answer runs
    at.radio(key="kind").set_value("Generation").run()
    at.selectbox(key="answer_run").set_value(dash.facts["rag"]).run()
    at.selectbox(key="answer_dimension").set_value("question_type").run()
    at.selectbox(key="answer_metric").set_value("exact_match").run()
    assert not at.exception
    expected = mart(dash.home, "mart_generation_by_slice").filter(
        (pl.col("run_id") == dash.facts["rag"]) & (pl.col("dimension") == "question_type")
        & (pl.col("metric") == "exact_match"))
    rows = table(at, 0)
    assert len(rows) == expected.height
    for e in expected.iter_rows(named=True):
        assert row_of(rows, value=e["value"])["mean"] == fmt(e["mean"])


def test_run_vs_run(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    if not any(PROJECT.glob("models/**/fct_question_metric_scores.sql")):
        pytest.skip("fct_question_metric_scores is not in models/ yet")
    at = run_page(dash.home, "run_vs_run", monkeypatch)
    at.selectbox(key="run_a").set_value(dash.facts["closed"]).run()
    at.selectbox(key="run_b").set_value(dash.facts["rag"]).run()
    at.selectbox(key="metric").set_value("exact_match").run()
    assert not at.exception
    # the pair's statistics, as mart_run_comparison holds them: the chosen metric's tiles, then every metric's row
    compared = mart(dash.home, "mart_run_comparison").filter(
        (pl.col("run_a") == dash.facts["closed"]) & (pl.col("run_b") == dash.facts["rag"]))
    exact = compared.filter(pl.col("metric") == "exact_match").row(0, named=True)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Δ exact_match (B − A)"] == fmt(exact["delta"]) and exact["delta"] > 0
    assert shown["95 % interval"] == f"[{fmt(exact['ci_low'])}, {fmt(exact['ci_high'])}]"
    assert shown["p (randomization)"] == f"{exact['p_randomization']:.3g}"
    assert shown["p (paired t-test)"] == f"{exact['p_ttest']:.3g}"
    rows = table(at, 0)
    assert {r["metric"] for r in rows} == set(compared["metric"])
    assert row_of(rows, metric="exact_match")["ci_high"] == fmt(exact["ci_high"])
    flipped = [r for r in frame_rows(at, "flipped") if r["flipped"]]
    assert [r["question_id"] for r in flipped] == [dash.facts["flip_question"]]
    assert (flipped[0]["value_a"], flipped[0]["value_b"], flipped[0]["passes_in"]) == (0.0, 1.0, "b only")
    scores = mart(dash.home, "fct_question_metric_scores").filter(pl.col("metric") == "exact_match")
    assert shown["Mean B (exact_match)"] == fmt(scores.filter(pl.col("run_id") == dash.facts["rag"])["value"].mean())
    assert shown["Pass in B only"] == "1" and shown["Pass in A only"] == "0"
    # the flipped question links to the drill-down with both runs (a plain link outside the app's navigation)
    links = [m.value for m in at.markdown if "drilldown?" in m.value]
    assert len(links) == 1 and f"question_id={dash.facts['flip_question']}" in links[0]
    assert f"{dash.facts['flip_question']} (b only: 0.0000 → 1.0000)" in links[0]
    assert f"runs={dash.facts['closed']}%2C{dash.facts['rag']}" in links[0] and "dataset=demo_synthetic" in links[0]


def test_judge_agreement(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(dash.home, "judge_agreement", monkeypatch, {"judge_run": dash.facts["judge"]})
    # the humans as a rater: the labelled runs' shares by the first slice dimension, as the mart has them
    dimension = at.selectbox(key="label_dimension").value
    assert at.selectbox(key="rated").value == "financebench_human / correctness"
    labels = mart(dash.home, "mart_human_label_by_slice").filter(
        (pl.col("dimension") == dimension) & (pl.col("label_set") == "financebench_human"))
    by_slice = table(at, 0)
    assert len(by_slice) == labels.select("answer_run_id", "value").n_unique() > 0
    for r in labels.iter_rows(named=True):
        assert row_of(by_slice, answer_run_id=r["answer_run_id"], value=r["value"])["n_labelled"] == \
            str(r["n_labelled"])
    assert at.selectbox(key="judge_run").value == dash.facts["judge"]
    agreement = mart(dash.home, "mart_judge_agreement").filter(pl.col("judge_run_id") == dash.facts["judge"])
    row = agreement.row(0, named=True)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Accuracy"] == fmt(row["accuracy"]) and shown["Cohen's kappa"] == fmt(row["kappa"])
    kappa_interval = f"Cohen's kappa's interval: {interval(row['kappa_lower'], row['kappa_upper'])} ("
    assert any(c.value.startswith(kappa_interval) for c in at.caption), [c.value for c in at.caption]
    assert shown["Questions labelled by both"] == str(row["n"]) == "30"
    # the judge run is no better than chance against the humans: the page warns, with the mart's kappa and interval
    chance, _, _ = assert_three_states(dash)
    assert [w.value for w in at.warning] == [
        f"{shown_run(dash, dash.facts['judge'])} — mean {fmt(chance['mean'])}: {chance_text(chance)}"]
    # the confusion matrix: the mart's counts, judge class x human class
    confusion = mart(dash.home, "mart_judge_confusion").filter(pl.col("judge_run_id") == dash.facts["judge"])
    matrix = table(at, 2)
    for c in confusion.iter_rows(named=True):
        assert row_of(matrix, **{"judge \\ human": c["judge_class"]})[c["human_class"]] == str(c["n"])
    # the scripted judge said -1 (incorrect) 10 times and 2 (correct) 20 times
    sums = dict(confusion.group_by("judge_class").agg(pl.col("n").sum()).rows())
    assert (sums["incorrect"], sums["correct"]) == (10, 20)
    # the disagreements, each a link to the drill-down with the judge run
    disagree = mart(dash.home, "fct_judge_human_pairs").filter(
        (pl.col("judge_run_id") == dash.facts["judge"]) & pl.col("is_scored")
        & (pl.col("judge_class") != pl.col("human_class")))
    assert disagree.height == row["n"] - round(row["accuracy"] * row["n"])
    assert {r["question_id"] for r in table(at, 3)} == set(disagree["question_id"])
    links = [m.value for m in at.markdown if "drilldown?" in m.value]
    assert len(links) == min(25, disagree.height)
    assert all(f"runs={dash.facts['judge']}" in link for link in links)


def test_drilldown(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(dash.home, "drilldown", monkeypatch)
    qid = dash.facts["flip_question"]
    at.selectbox(key="dataset").set_value("demo_synthetic").run()
    at.selectbox(key="question").set_value(qid).run()
    assert not at.exception
    question = mart(dash.home, "dim_questions").filter(pl.col("question_id") == qid).row(0, named=True)
    assert at.subheader[0].value == question["question"]
    gold = mart(dash.home, "fct_evidence").filter(pl.col("question_id") == qid)
    evidence = table(at, 0)
    assert [(r["doc_id"], r["page_number"]) for r in evidence] == \
        [(d, str(p)) for d, p in zip(gold["doc_id"], gold["page_number"], strict=True)]
    # the rank of the first gold unit per run and granularity: the rank RR is computed from (k = 0), which the
    # results shown (as fct_retrieval_results_judged marks them) agree with when it is among them
    judged = mart(dash.home, "fct_retrieval_results_judged").filter(pl.col("question_id") == qid)
    scores = mart(dash.home, "fct_retrieval_question_scores").filter(
        (pl.col("question_id") == qid) & (pl.col("k") == 0))
    ranks = table(at, 1)
    for run in (dash.facts["bm25"], dash.facts["oracle"]):
        rows = judged.filter(pl.col("run_id") == run)
        row = row_of(ranks, run_id=run)
        for granularity, mark, rank in (("chunk", "is_chunk_relevant", "chunk_rank"),
                                        ("doc", "is_doc_relevant", "doc_rank")):
            first = scores.filter((pl.col("run_id") == run) & (pl.col("granularity") == granularity))
            assert row[f"first_gold_{granularity}"] == str(first["first_relevant_rank"].item())
            assert row[f"first_gold_{granularity}"] == str(rows.filter(pl.col(mark))[rank].min())
        assert row["results"] == str(rows.height)
    # one table per retrieval run, labelled by what the run is, hits marked; the RAG run's prompt chunks marked
    headers = [s.value for s in at.subheader[1:]]
    assert any(h.startswith("bm25 · full · k=5 · split test — ") for h in headers)
    assert any(h.startswith("bm25 · oracle_page · k=5 · split test — ") for h in headers)
    bm25_rows, oracle_rows = table(at, 2), table(at, 3)
    marks = [r["hit"] for r in bm25_rows + oracle_rows]
    assert "✓ hit" in marks and set(marks) <= {"✓ hit", "✗ miss"}
    answers = mart(dash.home, "fct_generation_question_scores")  # the RAG run answered from bm25's top 3
    assert [r["in_prompt"] for r in bm25_rows] == ["✓", "✓", "✓", "", ""]
    assert {r["in_prompt"] for r in oracle_rows} == {""}
    # full texts on expand: every chunk's whole text
    full = {t.value for t in at.text}
    chunks = pl.read_parquet(dash.home / "lake" / "chunks" / "*" / "*.parquet")
    top = judged.filter((pl.col("run_id") == dash.facts["bm25"]) & (pl.col("result_position") == 1))["chunk_id"][0]
    assert chunks.filter(pl.col("chunk_id") == top)["text"][0] in full
    # the answers: the RAG answer is the gold answer and its lexical scores
    assert answers.filter((pl.col("run_id") == dash.facts["rag"]) & (pl.col("question_id") == qid))["exact_match"] \
        .item() == 1.0
    assert any(m.value.startswith("> " + question["reference_answers"][0]) for m in at.markdown)
    # the run filter: only the oracle run
    at.multiselect(key="runs").set_value([dash.facts["oracle"]]).run()
    assert not any(h.value.startswith("bm25 · full") for h in at.subheader)


def test_drilldown_shows_judge_verdicts_for_linked_runs(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opened as judge agreement links it: ?question_id&dataset&runs=<judge run>; the judge run's answer run is
    shown with every verdict and its rationale."""
    scores = mart(dash.home, "fct_judge_scores").filter(
        (pl.col("raw_score") == -1) & (pl.col("judge_run_id") == dash.facts["judge"])).sort("question_id")
    verdict = scores.row(0, named=True)
    monkeypatch.setenv("FINRAG_HOME", str(dash.home))
    at = AppTest.from_file(str(PAGES_DIR / "drilldown.py"), default_timeout=60)
    at.query_params.update({"question_id": verdict["question_id"], "dataset": "financebench",
                            "runs": dash.facts["judge"]})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key="runs").value == [dash.facts["judged_run"]]
    verdicts = table(at, len(at.table) - 1)
    assert verdicts == [{"metric": "correctness", "status": "ok", "raw_score": "-1.0000", "score": "0.0000",
                         "rationale / error": "scripted: incorrect", "judge_model": "fake-model",
                         "judge_run_id": dash.facts["judge"]}]


def test_sweeps(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixture's sweep (2 chunk sizes x bm25 / keywords, the bm25 run its baseline) on PageRec@5: a chart per
    parameter, the best value per parameter and the runs with their setting, the tied ones marked, as the sweep
    marts hold them."""
    sweep = dash.facts["sweep"]
    monkeypatch.setenv("FINRAG_HOME", str(dash.home))
    at = AppTest.from_file(str(PAGES_DIR / "sweeps.py"), default_timeout=60)
    at.query_params.update({"sweep": sweep, "metric": "page_rec", "k": "5"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Sweeps"]
    assert at.selectbox(key="sweep").value == sweep and at.selectbox(key="metric").value == "page_rec"
    assert at.selectbox(key="granularity").value == "page"  # PageRec exists at page level only
    effects = mart(dash.home, "mart_sweep_parameter_effects").filter(
        (pl.col("sweep_id") == sweep) & (pl.col("metric") == "page_rec") & (pl.col("k") == 5))
    assert set(effects["parameter"]) == {"chunk_size", "retriever"}
    assert len(at.get("vega_lite_chart")) == 2  # one chart per parameter
    best = {r["parameter"]: r for r in table(at, 0)}
    for r in effects.filter(pl.col("is_best_value")).iter_rows(named=True):
        assert best[r["parameter"]]["best value"] == r["value"] and best[r["parameter"]]["mean"] == fmt(r["mean"])
    # the runs: every run of the sweep, its setting and mean; tied with the best exactly where the mart says so
    results = mart(dash.home, "mart_sweep_run_results").filter(
        (pl.col("sweep_id") == sweep) & (pl.col("metric") == "page_rec") & (pl.col("k") == 5))
    rows = {r["run_id"]: r for r in table(at, 1)}
    assert set(rows) == set(results["run_id"]) and len(rows) == 4
    for r in results.iter_rows(named=True):
        shown = rows[r["run_id"]]
        assert (shown["setting"], shown["mean"]) == (r["setting"], fmt(r["mean"]))
        assert (shown["tied with the best"] == "✓ tied") == r["tied_with_best"]
        assert shown["Δ best"] == ("—" if r["delta_vs_best"] is None else fmt(r["delta_vs_best"]))
    baseline = rows[dash.facts["bm25"]]  # the bm25 run the sweep found landed: its baseline and best
    assert baseline["setting"] == "chunk_size=256, retriever=bm25" and "baseline" in baseline["role"]
    # every sweep run is tied with the best full-corpus run on PageRec@5 (the oracle-page run, which some were not
    # tied with, is a bound, not the best)
    assert results["tied_with_best"].all() and not results["is_best"].all()
    shown = {m.label: m.value for m in at.metric}
    top = results.filter(pl.col("is_best_in_sweep")).row(0, named=True)
    assert shown[f"Best of the sweep: {top['setting']}  ({top['run_id']})"] == fmt(top["mean"])


def test_sweeps_without_a_sweep_says_how_to_make_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(tmp_path, "sweeps", monkeypatch)
    assert any("finrag" in i.value for i in at.info), [i.value for i in at.info]


def test_app_navigates_every_page(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINRAG_HOME", str(dash.home))
    at = AppTest.from_file(str(PROJECT / "dashboards" / "app.py"), default_timeout=60).run()
    assert not at.exception and at.title[0].value == "FinRAG Warehouse"
    # what the lake holds (what `finrag ls` prints), then the published marts
    lake = {r["dataset"]: r for r in table(at, 0)}
    # bm25, oracle_page and the sweep's three new runs
    assert (lake["demo_synthetic"]["n_retrieval_runs"], lake["financebench"]["n_judge_runs"]) == ("5", "2")
    assert {r["run_id"] for r in frame_rows(at, "kind")} >= {dash.facts["bm25"], dash.facts["judge"]}
    published = {r["model"]: r["rows"] for r in table(at, 1)}
    manifest = json.loads((dash.home / "exports" / "marts" / "_manifest.json").read_text())
    assert published == {m["name"]: str(m["rows"]) for m in manifest["models"]}
    titles = {"heatmap": "Topic × task", "slices": "Slices", "run_vs_run": "Run vs run",
              "judge_agreement": "Judge agreement", "drilldown": "Drill-down", "leaderboard": "Leaderboard",
              "judged": "Judged answers", "qa_generation": "QA generation", "costs": "Costs", "sweeps": "Sweeps"}
    for page, title in titles.items():
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.title[0].value == title


def test_costs(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(dash.home, "costs", monkeypatch)
    costs = mart(dash.home, "mart_llm_costs")
    shown = {m.label: m.value for m in at.metric}
    assert shown["LLM calls"] == f"{costs['n_calls'].sum():,}"
    assert shown["Served from the cache"] == f"{costs['n_cached_calls'].sum():,}"
    assert shown["Prompt tokens"] == f"{costs['prompt_tokens'].sum():,}"
    assert shown["Cost (USD)"] == "—"  # the fake model has no price
    assert any("no price in the seed for fake-model" in c.value for c in at.caption)
    rows = frame_rows(at, "job_subject")
    assert len(rows) == costs.height
    judge = row_of(rows, job="judge")
    expected = costs.filter(pl.col("job") == "judge").row(0, named=True)
    assert (judge["n_calls"], judge["latency_p95_ms"]) == (expected["n_calls"], expected["latency_p95_ms"])
    assert len(at.get("vega_lite_chart")) == 2
    at.multiselect(key="jobs").set_value(["answer"]).run()
    assert {r["job"] for r in frame_rows(at, "job_subject")} == {"answer"}


def test_judged_answers(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(dash.home, "judged", monkeypatch, {"judge_run": dash.facts["judge"]})
    board = mart(dash.home, "mart_answer_file_leaderboard").filter(
        pl.col("judge_run_id") == dash.facts["judge"]).row(0, named=True)
    row = row_of(frame_rows(at, "mean_combined"), judge_run_id=dash.facts["judge"])
    assert row["mean_correctness"] == pytest.approx(board["mean_correctness"])
    assert row["n_correctness_ok"] == board["n_correctness_ok"] == 30
    # per question, worst first: the ten the scripted judge called incorrect (normalised 0) come first
    scores = frame_rows(at, "combined_score")
    assert len(scores) == 30 and [r["correctness"] for r in scores[:10]] == [0.0] * 10
    links = [m.value for m in at.markdown if "drilldown?" in m.value]
    assert len(links) == 15 and f"question_id={scores[0]['question_id']}" in links[0]
    # by slice: mart_judge_by_slice's means
    at.selectbox(key="dimension").set_value("question_type").run()
    slices = mart(dash.home, "mart_judge_by_slice").filter(
        (pl.col("judge_run_id") == dash.facts["judge"]) & (pl.col("dimension") == "question_type"))
    rows = table(at, 0)
    assert len(rows) == slices.height
    for s in slices.iter_rows(named=True):
        assert row_of(rows, value=s["value"], metric=s["metric"])["mean"] == fmt(s["mean"])
    # how far the judge run's means can be trusted (mart_judge_trust): this one is no better than chance ...
    chance, calibrated, uncalibrated = assert_three_states(dash)
    assert [w.value for w in at.warning] == [f"Correctness — mean {fmt(chance['mean'])}: {chance_text(chance)}"]
    assert not at.success
    # judged once: no noise floor, and how to measure one
    assert any(c.value.startswith("Judged once") and "--repeats 3" in c.value for c in at.caption)
    # ... the landed judge run's correctness is calibrated, its faithfulness uncalibrated; its faithfulness was
    # judged twice: the noise floor is mart_judge_reliability's
    at.selectbox(key="judge_run").set_value(dash.facts["landed_judge"]).run()
    noise = mart(dash.home, "mart_judge_reliability").filter(
        (pl.col("judge_run_id") == dash.facts["landed_judge"]) & (pl.col("metric") == "faithfulness")).row(
        0, named=True)
    assert noise["n_repeats"] == 2 and noise["n_answers"] == 30 and noise["n_flipping"] == 3  # answers 1, 7, 19
    shown = row_of(table(at, 0), metric="faithfulness")
    assert shown["alpha"] == fmt(noise["alpha"]) and shown["share_flipping"] == fmt(noise["share_flipping"])
    assert not at.exception and not at.warning
    # ... and by question type (the dimension picked above) per type and combined (mart_judge_calibrated_by_slice)
    by_slice = slice_calibration_texts(dash.home, dash.facts["landed_judge"], "question_type", "Correctness")
    assert len(by_slice) == 3 and all(b["calibrated"] for b in by_slice)
    assert [s.value for s in at.success] == [
        f"Correctness — mean {fmt(calibrated['mean'])}: {calibrated_text(calibrated)}", *[b["text"] for b in by_slice]]
    assert [i.value for i in at.info] == [f"Faithfulness — mean {fmt(uncalibrated['mean'])}: uncalibrated: no human "
                                          "labels say what it is worth"]


def test_qa_generation_without_a_run_says_how_to_make_one(dash: DashHome, monkeypatch: pytest.MonkeyPatch) -> None:
    at = run_page(dash.home, "qa_generation", monkeypatch)
    assert [i.value for i in at.info] == ["No data: no QA-generation run.  \nFix: `finrag generate-qa --dataset "
                                          "demo_synthetic`"]


def test_a_beir_home_opens_at_the_finest_granularity_with_data(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """FinanceRAG's FinQABench (BEIR format: documents without pages, queries without reference answers), bm25,
    built: the leaderboard opens at chunk granularity with numbers (never page, all "—"), says why there is no page
    level, and the generation section names the real cause."""
    from support.cli import run_finrag
    from support.paths import SHARED_DATA

    home = tmp_path / "warehouse"
    dataset = "financerag_finqabench"
    run_finrag(home, "ingest", "beir", "--dir", str(SHARED_DATA / "financerag_icaif24" / "FinQABench"),
               "--dataset", dataset, "--quiet")
    run = run_finrag(home, "retrieve", "--retriever", "bm25", "--dataset", dataset, "--k", "10",
                     "--quiet").stdout.strip()
    run_finrag(home, "build", "--quiet", "--exclude", "resource_type:test", "resource_type:unit_test")
    at = run_page(home, "leaderboard", monkeypatch)
    assert at.selectbox(key="granularity").options == ["chunk", "doc"]
    assert at.selectbox(key="granularity").value == "chunk"
    row = row_of(frame_rows(at, "retriever"), run_id=run)
    expected = mart(home, "mart_retrieval_leaderboard").filter(
        (pl.col("metric") == "ndcg") & (pl.col("granularity") == "chunk") & (pl.col("k") == 5))["mean"].item()
    assert row["ndcg"] == pytest.approx(expected) and pd.isna(row["page_rec"])
    assert any(c.value.startswith(f"No page granularity: {dataset} has no pages") for c in at.caption)
    infos = [i.value for i in at.info]
    assert f"No data: no answer run on {dataset}.  \nFix: `finrag answer --closed-book --dataset {dataset}  (or " \
        "--retrieval-run RUN for RAG)`" in infos
    # the drill-down opens on the first question with gold (most queries are outside the qrels)
    at = run_page(home, "drilldown", monkeypatch)
    first_gold = mart(home, "fct_evidence")["question_id"].min()
    assert at.selectbox(key="question").value == first_gold
    assert mart(home, "dim_questions")["question_id"].min() != first_gold
