"""Run vs run: is B better than A? Every metric's difference with its bootstrap 95 % interval, paired t-test and
randomization p-values (mart_run_comparison), then per-question differences for one metric, the questions that
flipped, and their texts (mart_run_pair_questions). The pairs are the ones the warehouse compares (fct_run_pairs).

Flipped: the question passes in one run and not in the other - its score reaches the metric's pass threshold in the
metric's direction (dim_metrics.pass_threshold and higher_is_better: for HAL a lower score passes), as the mart
decides it."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common
from dashboards.data import run_vs_run as data
from python_jobs.core.rules import RULES

MAX_LINKS = 25

home = ui.page("Run vs run")
pairs = ui.require(data.compared_pairs(home), home, "comparison")

runs = pairs.select(pl.col("run_a").alias("run_id"), "run_kind", "dataset").unique(maintain_order=True)
labels = ui.run_choices(common.run_labels(home), runs, "run_kind", "dataset")
cols = st.columns(2)
with cols[0]:
    run_a = ui.pick("Run A", list(labels), key="run_a", param="a", format_func=labels.get)
with_a = pairs.filter(pl.col("run_a") == run_a)
kind_a, dataset = with_a["run_kind"][0], with_a["dataset"][0]
with cols[1]:
    run_b = ui.pick("Run B", with_a["run_b"].unique(maintain_order=True).to_list(), key="run_b", param="b",
                    format_func=labels.get)
wanted_b = st.query_params.get("b")
if wanted_b and wanted_b != run_b:
    st.info(f"The warehouse does not compare {wanted_b} with {run_a}: runs of another kind or dataset, no shared "
            "question, or a dataset with more runs than var run_comparison_max_runs (name the pair in var "
            "run_comparison_pairs and run `finrag build`).")

of_pair = with_a.filter(pl.col("run_b") == run_b)
cols = st.columns(3)
with cols[0]:
    metric = ui.pick("Metric", of_pair["metric"].unique(maintain_order=True).to_list(), key="metric", param="metric",
                     default={"retrieval": "page_rec", "generation": "rouge_l", "judge": "correctness"}.get(kind_a))
at_metric = of_pair.filter(pl.col("metric") == metric)
granularity, k = ui.pick_granularity_k(at_metric, cols[1], cols[2])

st.header("Is B better than A?")
comparison = data.run_comparison(home, run_a, run_b, granularity, k)
if comparison is None:
    ui.empty_state(home, "comparison")
else:
    chosen = comparison.filter(pl.col("metric") == metric)
    if not chosen.is_empty():
        row = chosen.row(0, named=True)
        c = st.columns(4)
        c[0].metric(f"Δ {metric} (B − A)", ui.fmt(row["delta"]))
        c[1].metric("95 % interval", f"[{ui.fmt(row['ci_low'])}, {ui.fmt(row['ci_high'])}]")
        unpaired = row["stat_test"] == RULES.unpaired_test  # two versions' traffic: no shared questions to pair
        c[2].metric("p (Welch t-test)" if unpaired else "p (paired t-test)", ui.fmt_p(row["p_ttest"]))
        c[3].metric("p (randomization)", ui.fmt_p(row["p_randomization"]))
    at = "" if granularity is None else f" at {granularity} granularity, k = {k or 'all'}"
    tested = comparison.filter(pl.col("delta").is_not_null())
    if not tested.is_empty():
        # a forest plot: each metric's difference and its interval against the zero line
        points = alt.Chart(tested.to_pandas()).encode(
            y=alt.Y("metric:N", sort=None, title=None),
            tooltip=["metric", alt.Tooltip("delta:Q", format=".4f"), alt.Tooltip("ci_low:Q", format=".4f"),
                     alt.Tooltip("ci_high:Q", format=".4f"), alt.Tooltip("p_ttest:Q", format=".3g"),
                     alt.Tooltip("p_randomization:Q", format=".3g"), "n_questions"])
        st.altair_chart(
            alt.layer(
                points.mark_rule(strokeWidth=2).encode(x=alt.X("ci_low:Q", title="B − A (95 % interval)"),
                                                       x2="ci_high:Q"),
                points.mark_point(filled=True, size=60).encode(x="delta:Q"),
                alt.Chart().mark_rule(strokeDash=[4, 4], color="gray").encode(x=alt.datum(0)),
            ),
            width="stretch")
    shown = comparison.with_columns(pl.col(p).map_elements(ui.fmt_p, return_dtype=pl.String).fill_null("—")
                                    for p in ("p_ttest", "p_randomization", "p_holm"))
    if shown["n_not_ok_a"].is_null().all():
        shown = shown.drop("n_not_ok_a", "n_not_ok_b")
    ui.show_table(shown)
    st.caption(f"Every metric of the pair{at}, over the questions both runs scored. Interval: percentile bootstrap "
               "of the mean difference; p-values two-sided (paired t-test; randomization: random sign flips of "
               "the per-question differences, exact when few); p_holm: Holm-adjusted randomization p over the "
               "metrics shown. Judged metrics: n_not_ok_a / _b count the judgments left out. Runs that share no or "
               "too few questions (two versions' traffic) are compared unpaired (stat_test "
               f"{RULES.unpaired_test}) on each run's own n_a and n_b questions: a bootstrap of the difference of "
               "means and Welch's t-test.")

st.header("Per question")
diffs = data.run_vs_run(home, run_a, run_b, metric, granularity, k)
if diffs is None or diffs.is_empty():
    ui.no_data("no question scored by both runs")
    st.stop()
flipped = diffs.filter(pl.col("flipped"))
pair = None if comparison is None else comparison.filter(pl.col("metric") == metric)
pair = pair.row(0, named=True) if pair is not None and pair.height else {}
c = st.columns(5)
c[0].metric("Questions in both", diffs.height)
c[1].metric(f"Mean A ({metric})", ui.fmt(pair.get("mean_a")))
c[2].metric(f"Mean B ({metric})", ui.fmt(pair.get("mean_b")))
c[3].metric("Pass in B only", flipped.filter(pl.col("passes_in") == "b only").height)
c[4].metric("Pass in A only", flipped.filter(pl.col("passes_in") == "a only").height)
rule = diffs.row(0, named=True)
passing = f"≥ {rule['pass_threshold']}" if rule["higher_is_better"] else f"≤ {rule['pass_threshold']} (lower is better)"
st.caption(f"A = {run_a}, B = {run_b}. diff = B − A; outcome: B's win, loss or tie in the metric's direction. A "
           f"question passes when its score is {passing} (the metric registry's pass threshold) and flips when it "
           "passes in exactly one run. Means over the questions both runs scored (mart_run_comparison).")

st.subheader(f"Flipped questions ({flipped.height})")
if flipped.is_empty():
    st.write("No question flipped.")
else:
    st.markdown("**Why did it flip?** Open a question in the drill-down with both runs (A → B):")
    for r in flipped.head(MAX_LINKS).iter_rows(named=True):
        ui.drilldown_link(f"{r['question_id']} ({r['passes_in']}: {ui.fmt(r['value_a'])} → {ui.fmt(r['value_b'])}) — "
                          f"{(r['question'] or '')[:90]}", r["question_id"], dataset, [run_a, run_b])
    if flipped.height > MAX_LINKS:
        st.caption(f"The first {MAX_LINKS} of {flipped.height} (the largest differences); the table below has "
                   "every one, and the drill-down's question selector too.")

st.subheader("Per-question differences (B − A)")
st.altair_chart(
    alt.Chart(diffs.to_pandas()).mark_bar().encode(
        x=alt.X("question_id:N", sort="-y", axis=alt.Axis(labels=False, title="questions")),
        y=alt.Y("diff:Q", title="B − A"),
        color=alt.condition(alt.datum.flipped, alt.value("#d62728"), alt.value("#1f77b4")),
        tooltip=["question_id", "question", alt.Tooltip("value_a:Q", format=".4f"),
                 alt.Tooltip("value_b:Q", format=".4f"), "outcome", "flipped"]),
    width="stretch")
ui.show_dataframe(diffs.select("question_id", "passes_in", "value_a", "value_b", "diff", "outcome", "flipped",
                               "question"), key="per_question", height=420)
