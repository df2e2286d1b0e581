"""Run vs run: per-question differences for one metric, the questions that flipped, and their texts.

Flipped: the question passes (score >= the threshold, default 0.5) in one run and not in the other."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout root (dashboards is not installed)

import altair as alt  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import data, ui  # noqa: E402

home = ui.home()
st.title("Run vs run")
options = data.comparable_metrics(home)
if options is None or options.is_empty():
    ui.no_data("no per-question scores (fct_question_metric_scores)")
    st.stop()

runs = options.select("run_id", "run_kind", "dataset").unique(maintain_order=True)
labels = {r["run_id"]: f"{r['run_id']}  ({r['run_kind']}, {r['dataset']})" for r in runs.iter_rows(named=True)}
run_ids = list(labels)
cols = st.columns(2)
with cols[0]:
    run_a = ui.pick("Run A", run_ids, key="run_a", param="a", format_func=labels.get)
kind_a = runs.filter(pl.col("run_id") == run_a)["run_kind"][0]
same_kind = [r for r in run_ids if r != run_a and runs.filter(pl.col("run_id") == r)["run_kind"][0] == kind_a]
with cols[1]:
    run_b = ui.pick("Run B", [r for r in run_ids if r != run_a] or run_ids, key="run_b", param="b",
                    format_func=labels.get, default=same_kind[0] if same_kind else None)

metrics_a = options.filter(pl.col("run_id") == run_a).select("metric", "granularity", "k")
metrics_b = options.filter(pl.col("run_id") == run_b).select("metric", "granularity", "k")
common = metrics_a.join(metrics_b, on=["metric", "granularity", "k"], nulls_equal=True)
if common.is_empty():
    ui.no_data("the two runs share no metric", "Pick two runs of the same kind.")
    st.stop()
cols = st.columns(4)
with cols[0]:
    metric = ui.pick("Metric", common["metric"].unique(maintain_order=True).to_list(), key="metric", param="metric",
                     default={"retrieval": "page_rec", "generation": "rouge_l", "judge": "correctness"}.get(kind_a))
at_metric = common.filter(pl.col("metric") == metric)
granularity, k = None, None
if at_metric["granularity"].drop_nulls().len():
    with cols[1]:
        granularity = ui.pick("Granularity", at_metric["granularity"].unique(maintain_order=True).to_list(),
                              key="granularity", param="granularity", default="page")
    with cols[2]:
        k = ui.pick("k", sorted(at_metric.filter(pl.col("granularity") == granularity)["k"].unique().to_list()),
                    key="k", param="k", default=5)
with cols[3]:
    threshold = st.number_input("Pass threshold", min_value=0.0, max_value=1.0, step=0.05,
                                value=data.DEFAULT_FLIP_THRESHOLD, key="threshold")

diffs = data.run_vs_run(home, run_a, run_b, metric, granularity, k, threshold)
if diffs is None or diffs.is_empty():
    ui.no_data("no question scored by both runs")
    st.stop()
flipped = diffs.filter(pl.col("flipped"))
c = st.columns(5)
c[0].metric("Questions in both", diffs.height)
c[1].metric(f"Mean A ({metric})", ui.fmt(diffs["value_a"].mean()))
c[2].metric(f"Mean B ({metric})", ui.fmt(diffs["value_b"].mean()))
c[3].metric("Pass in B only", flipped.filter(pl.col("passes_in") == "b only").height)
c[4].metric("Pass in A only", flipped.filter(pl.col("passes_in") == "a only").height)
st.caption(f"A = {run_a}, B = {run_b}. diff = B − A. A question flips when its score is ≥ {threshold} in exactly "
           "one run. Means here are over the questions both runs scored.")

st.header(f"Flipped questions ({flipped.height})")
if flipped.is_empty():
    st.write("No question flipped.")
else:
    ui.show_table(flipped.select("question_id", "passes_in", "value_a", "value_b", "diff", "question"))

st.header("Every question")
st.altair_chart(
    alt.Chart(diffs.to_pandas()).mark_bar().encode(
        x=alt.X("question_id:N", sort="-y", axis=alt.Axis(labels=False, title="questions")),
        y=alt.Y("diff:Q", title="B − A"),
        color=alt.condition(alt.datum.flipped, alt.value("#d62728"), alt.value("#1f77b4")),
        tooltip=["question_id", "question", alt.Tooltip("value_a:Q", format=".4f"),
                 alt.Tooltip("value_b:Q", format=".4f"), "flipped"]),
    width="stretch")
ui.show_table(diffs.select("question_id", "value_a", "value_b", "diff", "flipped", "question"))
