"""Judge agreement: a judge's labels against human labels (confusion matrix, accuracy, Cohen's kappa)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout root (dashboards is not installed)

import altair as alt  # noqa: E402
import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import data, ui  # noqa: E402

MAX_LINKS = 25

home = ui.home()
st.title("Judge agreement")
agreement = data.judge_agreement(home)
if agreement is None or agreement.is_empty():
    ui.empty_state(home, "agreement")
    st.stop()

st.caption("Agreement of LLM judges with human labels (mart_judge_agreement); a row without judge_run_id "
           "aggregates every judge run of that label set and metric.")
shown = [c for c in ["judge_run_id", "grain", "label_set", "metric", "judge_model", "answer_model", "eval_mode", "n",
                     "accuracy", "kappa"] if c in agreement.columns]
ui.show_table(agreement.select(shown).sort("label_set", "metric", "judge_run_id", nulls_last=True))

pairs = agreement.select("label_set", "metric").unique(maintain_order=True).sort("label_set", "metric")
pair_labels = [f"{r['label_set']} / {r['metric']}" for r in pairs.iter_rows(named=True)]
cols = st.columns(2)
with cols[0]:
    chosen = ui.pick("Label set / metric", pair_labels, key="pair", param="pair")
label_set, metric = pairs.row(pair_labels.index(chosen))
runs_here = agreement.filter((pl.col("label_set") == label_set) & (pl.col("metric") == metric))
judge_runs = [r for r in runs_here["judge_run_id"].unique(maintain_order=True).to_list() if r is not None]
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
    confusion = data.judge_confusion(home, r)
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
