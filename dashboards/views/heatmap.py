"""Topic x task heatmap (OmniEval's matrix view) for any metric of any run."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout root (dashboards is not installed)

import altair as alt  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import data, ui  # noqa: E402

home = ui.home()
st.title("Topic × task")
options = data.matrix_options(home)
if options is None:
    ui.empty_state(home, "matrix")
    st.stop()
if options.is_empty():
    ui.no_data("no scored question has both a topic and a task",
               "OmniEval-style questions carry them: `finrag generate-qa --dataset DATASET`, then retrieve or "
               "answer on the generated split and `finrag build` (FinanceBench and BEIR questions have neither).")
    st.stop()

runs = options.select("run_id", "run_kind", "dataset").unique(maintain_order=True)
run_labels = data.run_labels(home)
labels = {r["run_id"]: f"{data.run_label(run_labels, r['run_id'])}  [{r['run_kind']}, {r['dataset']}]"
          for r in runs.iter_rows(named=True)}
run_id = ui.pick("Run", list(labels), key="run", param="run", format_func=labels.get)
run_options = options.filter(pl.col("run_id") == run_id)
cols = st.columns(4)
with cols[0]:
    metric = ui.pick("Metric", run_options["metric"].unique(maintain_order=True).to_list(), key="metric",
                     param="metric")
metric_options = run_options.filter(pl.col("metric") == metric)
granularity, k = None, None
if metric_options["granularity"].drop_nulls().len():
    with cols[1]:
        granularity = ui.pick("Granularity", metric_options["granularity"].unique(maintain_order=True).to_list(),
                              key="granularity", param="granularity", default="page")
    with cols[2]:
        k = ui.pick("k", sorted(metric_options.filter(pl.col("granularity") == granularity)["k"].unique().to_list()),
                    key="k", param="k", default=5)
with cols[3]:
    level = ui.pick("Topic level", data.matrix_topic_levels(home, run_id), key="level", param="level", default=2)

cells = data.topic_task_matrix(home, run_id, metric, granularity, k, level)
if cells is None or cells.is_empty():
    ui.no_data(f"no cell at topic level {level} for this run and metric")
    st.stop()
st.caption(f"Mean {metric}{f'@{k} ({granularity})' if granularity else ''} of {run_id} per (topic, task) cell; "
           "n = questions in the cell (mart_topic_task_matrix).")
chart = alt.Chart(cells.to_pandas()).mark_rect().encode(
    x=alt.X("task:N", title="task", axis=alt.Axis(labelAngle=0)),
    y=alt.Y("topic_label:N", title=f"topic (level {level})"),
    color=alt.Color("mean:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title=metric),
    tooltip=["topic", "topic_label", "task", alt.Tooltip("mean:Q", format=f".{ui.DECIMALS}f"), "n"],
)
text = alt.Chart(cells.to_pandas()).mark_text(baseline="middle").encode(
    x="task:N", y="topic_label:N", text=alt.Text("mean:Q", format=f".{ui.DECIMALS}f"),
    color=alt.condition(alt.datum.mean > 0.5, alt.value("black"), alt.value("white")),
)
# a fixed band per topic row: a pixel height for the whole chart squeezes one or two rows into slivers
st.altair_chart((chart + text).properties(height=alt.Step(40)), width="stretch")
table = cells.pivot(on="task", index="topic_label", values="mean", aggregate_function="first").sort("topic_label")
ui.show_table(table)
