"""Slices: DocRec@k / PageRec@k and any metric by doc type and question type (or any slice dimension), with the
run's Oracle-Doc / Oracle-Page counterparts beside it; answer runs' metrics by the same dimensions."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common
from dashboards.data import slices as data

home = ui.page("Slices")
dimension_labels = common.slice_dimension_labels(home)
kind = st.radio("Runs", ["Retrieval", "Generation"], horizontal=True, key="kind",
                index=1 if st.query_params.get("kind") == "generation" else 0)


def slice_chart(frame: pl.DataFrame, value_columns: list[str], title: str) -> None:
    long = frame.unpivot(index="value", on=value_columns, variable_name="run", value_name="score").drop_nulls("score")
    if long.is_empty():
        return
    st.altair_chart(
        alt.Chart(long.to_pandas(), title=title).mark_bar().encode(
            x=alt.X("score:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("value:N", title=None),
            yOffset="run:N", color="run:N",
            tooltip=["value", "run", alt.Tooltip("score:Q", format=f".{ui.DECIMALS}f")]),
        width="stretch")


if kind == "Retrieval":
    runs = ui.require(data.retrieval_runs(home), home, "retrieval")
    labels = ui.run_choices(common.run_labels(home), runs, "dataset")
    # default: a full-corpus run with oracle counterparts to show beside it, else any full-corpus run
    full_runs = (data.runs_with_oracle_counterparts(home)
                 + runs.filter(pl.col("condition") == "full")["run_id"].to_list())
    cols = st.columns(3)
    with cols[0]:
        run_id = ui.pick("Run", list(labels), key="run", param="run", format_func=labels.get,
                         default=full_runs[0] if full_runs else None)
    with cols[1]:
        k = ui.pick("k (0 = the whole ranking)", common.retrieval_ks(home), key="k", param="k", default=5)
    with cols[2]:
        dimension = ui.pick("Dimension", common.slice_dimensions(home), key="dimension", param="dimension",
                            format_func=lambda d: dimension_labels.get(d, d))

    st.caption(f"Run **{run_id}**; means over the questions of each slice, its Oracle-Doc / Oracle-Page "
               "counterparts' means on the same slice beside it (mart_retrieval_slices_with_oracle; the counterparts "
               "as mart_oracle_gap pairs them).")
    # the retrieval-gap study's DocRec@k / PageRec@k: the registry's metrics that exist at one granularity only
    for metric, granularity, label in common.own_granularity_metrics(home):
        title = f"{label}@{k}"
        st.header(f"{title} by {dimension}")
        gap = data.oracle_gap(home, run_id, metric, granularity, k)
        if gap is not None and gap.height:
            g = gap.row(0, named=True)
            c = st.columns(3)
            c[0].metric(f"{title} (this run)", ui.fmt(g["mean"]))
            if g["oracle_doc_run_id"]:
                c[1].metric(f"{title} Oracle-Doc", ui.fmt(g["oracle_doc_mean"]), delta=ui.fmt(g["oracle_doc_gap"]))
            if g["oracle_page_run_id"]:
                c[2].metric(f"{title} Oracle-Page", ui.fmt(g["oracle_page_mean"]), delta=ui.fmt(g["oracle_page_gap"]))
        frame = data.retrieval_slices(home, run_id, dimension, metric, granularity, k)
        if frame is None or frame.is_empty():
            ui.no_data(f"no {dimension} slice of this run")
            continue
        slice_chart(frame.rename({"mean": "this run"}), ["this run", "oracle_doc_mean", "oracle_page_mean"], title)
        ui.show_table(frame)

    st.header(f"Any metric by {dimension}")
    cols = st.columns(2)
    with cols[0]:
        metric = ui.pick("Metric", common.metric_names(home, "retrieval"), key="metric", param="metric",
                         default="ndcg")
    with cols[1]:
        granularity = ui.pick("Granularity", data.metric_granularities(home, metric), key="granularity",
                              param="granularity", default="page")
    frame = data.retrieval_slices(home, run_id, dimension, metric, granularity, k)
    if frame is None or frame.is_empty():
        ui.no_data(f"no {metric} at {granularity} level by {dimension} for this run")
    else:
        ui.show_table(frame)
else:
    runs = ui.require(data.generation_runs(home), home, "generation")
    labels = ui.run_choices(common.run_labels(home), runs, "dataset")
    cols = st.columns(3)
    with cols[0]:
        run_id = ui.pick("Answer run", list(labels), key="answer_run", param="run", format_func=labels.get)
    with cols[1]:
        dimension = ui.pick("Dimension", common.slice_dimensions(home, question_columns_only=True),
                            key="answer_dimension", param="dimension", format_func=lambda d: dimension_labels.get(d, d))
    with cols[2]:
        metric = ui.pick("Metric", common.metric_names(home, "lexical"), key="answer_metric", param="metric")
    frame = data.generation_slices(home, run_id, dimension, metric)
    st.header(f"{metric} by {dimension}")
    st.caption(f"Answer run **{run_id}** (mart_generation_by_slice).")
    if frame is None or frame.is_empty():
        ui.no_data(f"no {dimension} slice of this run")
    else:
        slice_chart(frame.rename({"mean": metric}), [metric], metric)
        ui.show_table(frame)
