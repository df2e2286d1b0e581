"""Topic x task heatmap (OmniEval's matrix view) for any metric of any run."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common
from dashboards.data import heatmap as data

home = ui.page("Topic × task")
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
labels = ui.run_choices(common.run_labels(home), runs, "run_kind", "dataset")
run_id = ui.pick("Run", list(labels), key="run", param="run", format_func=labels.get)
run_options = options.filter(pl.col("run_id") == run_id)
cols = st.columns(4)
with cols[0]:
    metric = ui.pick("Metric", run_options["metric"].unique(maintain_order=True).to_list(), key="metric",
                     param="metric")
granularity, k = ui.pick_granularity_k(run_options.filter(pl.col("metric") == metric), cols[1], cols[2])
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
