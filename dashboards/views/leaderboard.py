"""Leaderboard: runs x headline metrics (retrieval, generation, judged), filterable by dataset."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout root (dashboards is not installed)

import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import data, ui  # noqa: E402

home = ui.home()
st.title("Leaderboard")
all_datasets = data.datasets(home)
if not all_datasets:
    ui.no_data("no published leaderboard has a run")
    st.stop()
chosen = st.multiselect("Datasets", all_datasets, default=all_datasets, key="datasets")

st.header("Retrieval")
ks = data.retrieval_ks(home)
if not ks:
    ui.no_data("no retrieval run scored")
else:
    left, right = st.columns(2)
    with left:
        k = ui.pick("k (0 = the whole ranking)", ks, key="k", param="k", default=5)
    own = data.own_granularity_metrics(home)  # doc_rec / page_rec: shown at their own granularity
    with right:
        granularity = ui.pick("Granularity of the other metrics", ["page", "doc", "chunk"], key="granularity",
                              param="granularity")
    board = data.retrieval_leaderboard(home, k, granularity, chosen)
    st.caption("".join(f"{metric} = {label}@{k} ({g} level); " for metric, g, label in own)
               + f"the other metrics @{k} at {granularity} level. "
               "Means over the questions each run retrieved for (mart_retrieval_leaderboard).")
    if board is None or board.is_empty():
        ui.no_data("no retrieval run for these datasets")
    else:
        ui.show_table(board)

st.header("Generation")
generation = data.generation_leaderboard(home, chosen)
if generation is None or generation.is_empty():
    ui.no_data("no answer run scored")
else:
    st.caption("Lexical metrics, mean over scored answers (mart_generation_leaderboard); numeric_match over "
               "questions with a numeric gold.")
    ui.show_table(generation)

st.header("Judged")
judged = data.judge_leaderboard(home, chosen)
if judged is None or judged.is_empty():
    ui.no_data("no judge run", "Run `finrag judge --answer-run RUN`, then `finrag build`.")
else:
    st.caption("Normalised judge scores in [0, 1], mean over ok judgments; not applicable and failed counted apart "
               "(mart_judge_leaderboard).")
    index = ["judge_run_id", "answer_run_id", "judge_model", "answer_model", "eval_mode", "dataset"]
    wide = judged.pivot(on="metric", index=index, values="mean", aggregate_function="first")
    counts = judged.group_by(index).agg(pl.col("n_ok").sum(), pl.col("n_not_applicable").sum(),
                                        pl.col("n_failed").sum())
    ui.show_table(wide.join(counts, on=index, how="left", nulls_equal=True).sort(index))
