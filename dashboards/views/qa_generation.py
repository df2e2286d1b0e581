"""QA generation: OmniEval-style generated questions - how many of each topic x task cell the LLM inspector kept
(acceptance ratio, a heatmap) and humans accepted, and how far the LLM inspector agrees with the humans
(mart_qa_generation_acceptance, mart_qa_generation_inspection_agreement)."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import qa_generation as data

home = ui.page("QA generation")
runs = ui.require(data.qa_generation_runs(home), home, "qa_generation")
labels = {r["generation_run_id"]: f"{r['generation_run_id']}  ({r['dataset']}, {r['n_attempts']} attempts)"
          for r in runs.iter_rows(named=True)}
cols = st.columns([3, 1, 1])
with cols[0]:
    run = ui.pick("Generation run", list(labels), key="run", param="run", format_func=labels.get)
with cols[1]:
    level = ui.pick("Topic level", data.qa_topic_levels(home, run), key="level", param="level")
with cols[2]:
    measure = ui.pick("Show", ["acceptance_ratio", "human_acceptance_ratio"], key="measure", param="measure",
                      format_func={"acceptance_ratio": "LLM inspector kept",
                                   "human_acceptance_ratio": "humans accepted"}.get)

st.header("Acceptance per topic × task")
cells = data.qa_acceptance(home, run, level)
if cells is None or cells.is_empty():
    st.info(f"No cell at topic level {level}: the run's topics stop above it.")
else:
    st.caption("acceptance_ratio = kept by the LLM inspector / generated; human_acceptance_ratio = kept or fixed by "
               "a human / inspected (null until `finrag import-inspection`). n = attempts, failed ones included.")
    frame = cells.to_pandas()
    base = alt.Chart(frame).encode(
        x=alt.X("task:N", title="task", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("topic_label:N", title=f"topic (level {level})", axis=alt.Axis(labelLimit=400)))
    st.altair_chart(
        (base.mark_rect().encode(
            color=alt.Color(f"{measure}:Q", scale=alt.Scale(scheme="viridis", domain=[0, 1]), title=measure),
            tooltip=["topic", "topic_label", "task", "n_attempts", "n_failed", "n_generated", "n_kept",
                     alt.Tooltip("acceptance_ratio:Q", format=".4f"), "n_human_inspected",
                     alt.Tooltip("human_acceptance_ratio:Q", format=".4f")])
         + base.mark_text(baseline="middle").encode(
             text=alt.Text(f"{measure}:Q", format=".2f"),
             color=alt.condition(f"datum.{measure} > 0.5", alt.value("black"), alt.value("white"))))
        .properties(height=alt.Step(36)),
        width="stretch")
    ui.show_table(cells.drop("topic"))

st.header("LLM inspector against humans")
agreement = data.inspection_agreement(home)
if agreement is None or agreement.filter(pl.col("generation_run_id") == run).is_empty():
    st.info("No human inspection of this run yet. Fix: `finrag export-inspection` (a file for annotators), then "
            "`finrag import-inspection FILE` and `finrag build`.")
else:
    st.caption("Per task: questions both inspected (n), the share where keep / drop agree, and Cohen's kappa "
               "(mart_qa_generation_inspection_agreement).")
    ui.show_table(agreement.filter(pl.col("generation_run_id") == run).drop("generation_run_id"))
