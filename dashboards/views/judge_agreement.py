"""Judge agreement: a judge's labels against human labels (confusion matrix, accuracy, Cohen's kappa and its
interval), and how far the judge run's mean can be trusted (mart_judge_trust: a warning where it is no better than
chance against humans, its calibrated mean where a calibration exists)."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common
from dashboards.data import judge_agreement as data
from python_jobs.marts.trust import interval

MAX_LINKS = 25


def pick_label_set_metric(frame: pl.DataFrame, key: str) -> tuple[str, str]:
    """A (label set, metric) of the frame's rows, in their order, picked by the URL's `?<key>=` or the first."""
    pairs = frame.select("label_set", "metric").unique(maintain_order=True)
    names = [f"{label_set} / {metric}" for label_set, metric in pairs.iter_rows()]
    return pairs.row(names.index(ui.pick("Label set / metric", names, key=key, param=key)))


home = ui.page("Judge agreement")

# the humans as a rater of their own (FinanceBench's headline table): shares of each label per answer run
labels = data.human_label_leaderboard(home)
if labels is not None and not labels.is_empty():
    st.header("Human labels as a rater")
    label_cols = st.columns(2)
    with label_cols[0]:
        rated_set, rated_metric = pick_label_set_metric(labels, "rated")
    shares = labels.filter((pl.col("label_set") == rated_set) & (pl.col("metric") == rated_metric))
    run_order = shares["answer_run_id"].unique(maintain_order=True).to_list()  # the mart's order: best mean first
    label_order = shares["label"].unique(maintain_order=True).to_list()
    st.altair_chart(alt.Chart(shares.to_pandas()).mark_bar().encode(
        x=alt.X("share:Q", title="share of the run's labels", axis=alt.Axis(format="%")),
        y=alt.Y("answer_run_id:N", title=None, sort=run_order),
        color=alt.Color("label:N", sort=label_order),
        tooltip=["answer_run_id", "label", "n", "n_labelled", alt.Tooltip("share:Q", format=".1%"),
                 alt.Tooltip("mean:Q", format=".3f")]).properties(height=22 * len(run_order) + 40), width="stretch")
    dimension_labels = common.slice_dimension_labels(home)
    with label_cols[1]:
        slice_dimension = ui.pick("By slice", common.slice_dimensions(home, question_columns_only=True),
                                  key="label_dimension", param="label_dimension",
                                  format_func=lambda d: dimension_labels.get(d, d))
    by_slice = data.human_label_by_slice(home, rated_set, rated_metric, slice_dimension)
    if by_slice is not None and not by_slice.is_empty():
        ui.show_table(by_slice.pivot(on="label", index=["answer_run_id", "value", "n_labelled", "mean"],
                                     values="share", aggregate_function="first"))

st.header("LLM judges against the humans")
agreement = ui.require(data.judge_agreement(home), home, "agreement")

st.caption("Agreement of LLM judges with human labels (mart_judge_agreement); a row without judge_run_id "
           "aggregates every judge run of that label set and metric.")
shown = [c for c in ["judge_run_id", "grain", "label_set", "metric", "judge_model", "answer_model", "eval_mode", "n",
                     "accuracy", "kappa", "kappa_lower", "kappa_upper"] if c in agreement.columns]
ui.show_table(agreement.select(shown).sort("label_set", "metric", "judge_run_id", nulls_last=True))

cols = st.columns(2)
with cols[0]:
    label_set, metric = pick_label_set_metric(agreement.sort("label_set", "metric"), "pair")
runs_here = agreement.filter((pl.col("label_set") == label_set) & (pl.col("metric") == metric))
judge_runs = [r for r in runs_here["judge_run_id"].unique(maintain_order=True).to_list() if r is not None]
run_names = common.run_labels(home)
with cols[1]:
    judge_run = ui.pick("Judge run", judge_runs or [None], key="judge_run", param="judge_run",
                        format_func=lambda r: "all judge runs" if r is None else r)

# one judge run, or "all judge runs": the judge model's pooled row over every run, eval mode and answer model (an
# answer judged by several runs counts once there, with its latest judgment)
grain = "judge_run" if judge_run is not None else "judge_model_overall"
row = runs_here.filter(pl.col("judge_run_id").eq_missing(judge_run) & (pl.col("grain") == grain)).head(1)
confusion = None
if row.height:
    r = row.row(0, named=True)
    c = st.columns(3)
    c[0].metric("Questions labelled by both", r["n"])
    c[1].metric("Accuracy", ui.fmt(r["accuracy"]))
    c[2].metric("Cohen's kappa", ui.fmt(r["kappa"]))
    kappa_interval = interval(r["kappa_lower"], r["kappa_upper"], ui.fmt)
    st.caption(f"Cohen's kappa's interval: {kappa_interval} (normal, with Cohen's large-sample standard error; "
               "mart_judge_agreement).")
    confusion = data.judge_confusion(home, r)
# the judge run's mean on this metric and how far it can be trusted: against every label set, not only this one
trust = common.judge_trust(home, [judge_run] if judge_run is not None else judge_runs, [metric]) \
    if judge_run is not None or judge_runs else None
if trust is not None and not trust.is_empty():
    st.markdown(f"**How far the judge's {metric} mean can be trusted** (mart_judge_trust; no better than chance: "
                "its least favourable kappa against human labels of the metric has an interval reaching 0):")
    ui.show_trust(trust, lambda t: common.run_label(run_names, t["judge_run_id"]))
st.header("Confusion matrix")
if confusion is None or confusion.is_empty():
    ui.no_data("no confusion counts for this selection")
else:
    # the classes in the mart's order (worst to best), not alphabetical
    judge_order = confusion["judge_class"].unique(maintain_order=True).to_list()
    human_order = confusion["human_class"].unique(maintain_order=True).to_list()
    base = alt.Chart(confusion.to_pandas()).encode(
        x=alt.X("human_class:N", title="human label", sort=human_order, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("judge_class:N", title="judge label", sort=judge_order))
    st.altair_chart(
        (base.mark_rect().encode(color=alt.Color("n:Q", scale=alt.Scale(scheme="blues")),
                                 tooltip=["judge_class", "human_class", "n"])
         + base.mark_text(fontSize=14).encode(text="n:Q")).properties(height=60 * len(judge_order)),
        width="stretch")
    matrix = confusion.with_columns(pl.col("human_class").cast(pl.String).alias("human_class"),
                                    pl.col("judge_class").cast(pl.String).alias("judge \\ human"))
    ui.show_table(matrix.pivot(on="human_class", index="judge \\ human", values="n", aggregate_function="sum")
                  .fill_null(0))

st.header("Where the judge and the humans disagree")
if judge_run is None:
    st.caption("Pick one judge run to list its disagreements.")
else:
    disagreements = data.judge_disagreements(home, judge_run, metric, label_set)
    if disagreements is None or disagreements.is_empty():
        st.write("None: the judge agrees with every human label of this selection.")
    else:
        st.caption(f"{disagreements.height} question(s) where the judge's class is not the human's "
                   "(fct_judge_human_pairs). Open one in the drill-down: the answer, the judge's rationale, the "
                   "chunks that went into the prompt.")
        ui.show_table(disagreements.select("question_id", "judge_class", "human_class", "human_label",
                                           pl.col("question").str.slice(0, 120)))
        for r in disagreements.head(MAX_LINKS).iter_rows(named=True):
            ui.drilldown_link(f"{r['question_id']}: judge {r['judge_class']}, human {r['human_class']} — "
                              f"{(r['question'] or '')[:80]}", r["question_id"], r["dataset"], [judge_run])
        if disagreements.height > MAX_LINKS:
            st.caption(f"The first {MAX_LINKS} of {disagreements.height} as links.")
