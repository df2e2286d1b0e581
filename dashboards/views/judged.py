"""Judged answers: the answer-file guideline's combined score per judge run (mart_answer_file_leaderboard), how far
the chosen judge run's means can be trusted (mart_judge_trust: calibrated against human labels, uncalibrated, or no
better than chance), the judge's noise floor over repeated judgments (mart_judge_reliability: Krippendorff's alpha
and the share of answers whose verdict flips), each question's correctness / faithfulness verdicts
(mart_answer_file_scores, worst first, linked to the drill-down), and a judge run's scores by slice
(mart_judge_by_slice) with its calibrated means per slice (mart_judge_calibrated_by_slice: PPI++ per stratum and the
strata combined)."""

import altair as alt
import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common
from dashboards.data import judged as data

MAX_LINKS = 15

home = ui.page("Judged answers")
board = ui.require(data.answer_file_leaderboard(home), home, "judged")
labels = common.run_labels(home)

st.header("Answer-file score per judge run")
st.caption("combined = mean over questions of (normalised correctness + faithfulness) / 2 where both are ok "
           "(n_combined of n_questions); correctness and faithfulness each over their own ok judgments "
           "(mart_answer_file_leaderboard).")
ui.show_dataframe(board.select(ui.run_column(labels, "judge_run_id"), pl.all()), key="answer_file_board")

judge_runs = board["judge_run_id"].to_list()
judge_run = ui.pick("Judge run", judge_runs, key="judge_run", param="judge_run",
                    format_func=lambda r: common.run_label(labels, r))

registry = common.metric_registry(home)
metric_labels = {} if registry is None else dict(registry.select("metric", "label").rows())

st.header("How far its means can be trusted")
trust = common.judge_trust(home, [judge_run])
if trust is None or trust.is_empty():
    st.write("No judged mean of this judge run (mart_judge_trust).")
else:
    st.caption("Each metric's mean (mart_judge_leaderboard) and its state (mart_judge_trust): calibrated against a "
               "human label set (`finrag calibrate`: PPI++, or the human mean where every answer is labelled), "
               "uncalibrated (no human labels say what it is worth), or no better than chance (its Cohen's kappa "
               "against human labels has an interval reaching 0).")
    ui.show_trust(trust, lambda r: metric_labels.get(r["metric"], r["metric"]))

st.header("The judge's noise floor")
reliability = data.judge_reliability(home, judge_run)
if reliability is None or reliability.is_empty() or reliability["n_answers"].max() == 0:
    st.caption("Judged once: no test-retest agreement. `finrag judge --repeats 3` judges every answer three times "
               "(sampling on, one seed per repeat) and measures how often the verdict flips.")
else:
    st.caption("Test-retest agreement of the judge's repeated judgments of the same answers (mart_judge_reliability):"
               " Krippendorff's alpha at the metric's level of measurement (1 perfect, 0 no better than shuffled), and"
               " the share of answers whose repeats fall on both sides of the pass threshold (a single judgment "
               "decides their verdict by chance). Means and comparisons use each answer's mean over its repeats.")
    ui.show_table(reliability)

st.header("Per question, worst first")
scores = data.answer_file_scores(home, judge_run)
if scores is None or scores.is_empty():
    st.write("No answer-file score for this judge run.")
else:
    failed = scores.filter((pl.col("correctness_status") == "failed") | (pl.col("faithfulness_status") == "failed"))
    if failed.height:
        st.warning(f"{failed.height} question(s) with a failed judgment: the drill-down shows each error.")
    ui.show_dataframe(scores, key="answer_file_scores")
    st.markdown("**Open the lowest-scored questions in the drill-down** (answer, judge rationale, prompt chunks):")
    for r in scores.head(MAX_LINKS).iter_rows(named=True):
        ui.drilldown_link(f"{r['question_id']} — correctness {ui.fmt(r['correctness'])}, faithfulness "
                          f"{ui.fmt(r['faithfulness'])}", r["question_id"], r["dataset"], [judge_run])

st.header("By slice")
dimensions = data.judge_slice_dimensions(home, judge_run)
if not dimensions:
    st.write("No slice of this judge run (mart_judge_by_slice).")
else:
    dimension = ui.pick("Dimension", dimensions, key="dimension", param="dimension", default="question_type")
    slices = data.judge_by_slice(home, judge_run, dimension)
    st.caption("Mean normalised score of the ok judgments per slice value; n = judgments in the mean "
               "(mart_judge_by_slice).")
    st.altair_chart(
        alt.Chart(slices.to_pandas()).mark_bar().encode(
            x=alt.X("mean:Q", scale=alt.Scale(domain=[0, 1]), title="mean (normalised)"),
            y=alt.Y("value:N", title=None, axis=alt.Axis(labelLimit=400)), yOffset="metric:N", color="metric:N",
            tooltip=["metric", "value", alt.Tooltip("mean:Q", format=".4f"), "mean_raw", "n"]),
        width="stretch")
    ui.show_table(slices)
    calibration = data.judge_calibration_by_slice(home, judge_run, dimension)
    if calibration is not None and not calibration.is_empty():
        st.markdown(f"**How far its means can be trusted, by {dimension}** (mart_judge_calibrated_by_slice: PPI++ on "
                    "each slice's labelled answers, and the slices combined by their share of the answers; a slice "
                    "with fewer than 2 labels is shown, not calibrated, and left out of the combination):")
        ui.show_slice_trust(calibration, lambda r: metric_labels.get(r["predictor"], r["predictor"]))
