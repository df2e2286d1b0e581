"""Sweeps (`finrag sweep <grid>.yaml`): one sweep on one metric - per parameter, each value's mean over the sweep's runs
with its interval and the best value (mart_sweep_parameter_effects), then the sweep's runs with their setting and
mean, the ones statistically tied with the best marked (mart_sweep_run_results)."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common
from dashboards.data import sweeps as data

TIED = "✓ tied"


def interval(low: str, high: str) -> pl.Expr:
    """[low, high] as text, each end as every number is shown (display)."""
    return pl.when(pl.col(low).is_not_null()).then(pl.format(
        "[{}, {}]", pl.col(low).map_elements(ui.fmt, return_dtype=pl.String),
        pl.col(high).map_elements(ui.fmt, return_dtype=pl.String)))


home = ui.page("Sweeps")
found = ui.require(data.sweeps(home), home, "sweeps")

registry = common.metric_registry(home)
metric_labels = dict(zip(registry["metric"], registry["label"], strict=True))
metric_order = {m: i for i, m in enumerate(registry["metric"])}
labels = common.run_labels(home)
sweep_labels = {r["sweep_id"]: f"{r['sweep_id']}  [{r['kind']} sweep on {r['dataset']}]"
                for r in found.iter_rows(named=True)}
cols = st.columns(4)
with cols[0]:
    sweep_id = ui.pick("Sweep", list(sweep_labels), key="sweep", param="sweep", format_func=sweep_labels.get)
options = data.sweep_metrics(home, sweep_id)
# the registry's metric order (display)
metrics = sorted(options["metric"].unique().to_list(), key=lambda m: metric_order.get(m, len(metric_order)))
with cols[1]:
    metric = ui.pick("Metric", metrics, key="metric", param="metric", default="ndcg",
                     format_func=lambda m: metric_labels.get(m, m))
at_metric = options.filter(pl.col("metric") == metric)
# a retrieval sweep's metric: its granularities (finest first) and k's; an answer sweep's has none
granularity, k = ui.pick_granularity_k(at_metric, cols[2], cols[3], order=common.granularities(home),
                                       k_label="k (0 = the whole ranking)")
title = f"{metric_labels.get(metric, metric)}{f'@{k} ({granularity} level)' if granularity else ''}"

# ---------------------------------------------------------------------------------------------------- parameters
effects = data.sweep_parameter_effects(home, sweep_id, metric, granularity, k)
runs = data.sweep_run_results(home, sweep_id, metric, granularity, k)
if effects is None or effects.is_empty() or runs is None or runs.is_empty():
    ui.no_data(f"no scored run of {sweep_id} on {title}")
    st.stop()

st.header(f"Parameters × {title}")
st.caption("Each value's mean over the sweep's runs with that value (its mean over the other parameters' "
           "settings), with the t-interval of that mean over the runs (none with a single run); the parameter's "
           "best value in its own colour (mart_sweep_parameter_effects). A large spread between the best and the "
           "worst value: the parameter matters for the metric.")
parameters = effects["parameter"].unique(maintain_order=True).to_list()
chart_cols = st.columns(min(len(parameters), 3))
for i, parameter in enumerate(parameters):
    values = effects.filter(pl.col("parameter") == parameter).with_columns(
        pl.when(pl.col("is_best_value")).then(pl.lit("best")).otherwise(pl.lit("other")).alias("value_is"))
    frame = values.to_pandas()
    order = values["value"].to_list()  # the grid's order
    base = alt.Chart(frame).encode(x=alt.X("value:N", sort=order, title=parameter, axis=alt.Axis(labelAngle=0)))
    points = base.mark_point(filled=True, size=90).encode(
        y=alt.Y("mean:Q", title=title, scale=alt.Scale(zero=False)),
        color=alt.Color("value_is:N", title=None, scale=alt.Scale(domain=["best", "other"],
                                                                  range=["#d62728", "#1f77b4"])),
        tooltip=["value", "n_runs", alt.Tooltip("mean:Q", format=f".{ui.DECIMALS}f"),
                 alt.Tooltip("ci_low:Q", format=f".{ui.DECIMALS}f"),
                 alt.Tooltip("ci_high:Q", format=f".{ui.DECIMALS}f"),
                 alt.Tooltip("min_mean:Q", format=f".{ui.DECIMALS}f"),
                 alt.Tooltip("max_mean:Q", format=f".{ui.DECIMALS}f")])
    rules = base.mark_rule(strokeWidth=2, color="black").encode(y="ci_low:Q", y2="ci_high:Q")
    with chart_cols[i % len(chart_cols)]:
        st.altair_chart((rules + points).properties(title=parameter, height=260), width="stretch")

st.subheader("The best setting per parameter")
best = effects.filter(pl.col("is_best_value"))
ui.show_table(best.select("parameter", pl.col("value").alias("best value"), "mean", "ci_low", "ci_high", "n_runs",
                          pl.col("parameter_spread").alias("spread (best − worst value)")))

# ---------------------------------------------------------------------------------------------------- runs
st.header("The sweep's runs")
best_in_sweep = runs.filter(pl.col("is_best_in_sweep"))  # none when every run is an oracle bound
family_best = runs["best_run_id"].drop_nulls()
tiles = st.columns(2)
if best_in_sweep.height:
    top = best_in_sweep.row(0, named=True)
    tiles[0].metric(f"Best of the sweep: {top['setting']}  ({top['run_id']})", ui.fmt(top["mean"]))
if family_best.len():
    best_id = family_best[0]
    in_sweep = best_id in runs["run_id"].to_list()
    tiles[1].metric(f"Best of the dataset's runs{'' if in_sweep else ' (outside the sweep)'}: "
                    f"{common.run_label(labels, best_id)}", ui.fmt(runs["best_mean"].drop_nulls()[0]))
st.caption("Runs in their rank among the dataset's runs of this kind on the metric (the family). "
           f"{TIED}: the family's best run, or a run Tukey's HSD cannot tell from it (family-wise, over all pairs); "
           "Δ best: the run's mean minus the best's over the questions both were scored on, with its 95 % "
           "bootstrap interval, the randomization p and that p Holm-adjusted over every run compared with the "
           "best; Δ baseline: the same against the sweep's baseline run (mart_sweep_run_results).")
ui.show_table(runs.select(
    "run_id", "setting",
    pl.when(pl.col("tied_with_best")).then(pl.lit(TIED)).otherwise(pl.lit("")).alias("tied with the best"),
    "mean", "n_questions",
    pl.concat_str([pl.when(pl.col("is_best_in_sweep")).then(pl.lit("best of the sweep")),
                   pl.when(pl.col("is_baseline")).then(pl.lit("baseline"))], separator=", ", ignore_nulls=True)
    .alias("role"),
    "rank_in_family", pl.col("delta_vs_best").alias("Δ best"), interval("ci_low", "ci_high").alias("Δ best 95 % CI"),
    pl.col("p_holm").map_elements(ui.fmt_p, return_dtype=pl.String),
    pl.col("p_tukey").map_elements(ui.fmt_p, return_dtype=pl.String),
    pl.col("delta_vs_baseline").alias("Δ baseline"),
    interval("baseline_ci_low", "baseline_ci_high").alias("Δ baseline 95 % CI"),
    pl.col("baseline_p_holm").map_elements(ui.fmt_p, return_dtype=pl.String).alias("p_holm baseline")))
