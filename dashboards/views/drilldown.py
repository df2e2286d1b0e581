"""Drill-down: one question with its gold evidence, every run's retrieved chunks (hit or miss marked) and every
run's answer."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout root (dashboards is not installed)

import polars as pl  # noqa: E402
import streamlit as st  # noqa: E402

from dashboards import data, ui  # noqa: E402

SNIPPET = 400

home = ui.home()
st.title("Drill-down")
everything = data.questions(home)
if everything is None or everything.is_empty():
    ui.no_data("no question (dim_questions)")
    st.stop()
wanted = st.query_params.get("question_id")
wanted_dataset = everything.filter(pl.col("question_id") == wanted)["dataset"].to_list() if wanted else []
cols = st.columns([1, 3])
with cols[0]:
    dataset = ui.pick("Dataset", everything["dataset"].unique().sort().to_list(), key="dataset", param="dataset",
                      default=wanted_dataset[0] if wanted_dataset else None)
in_dataset = everything.filter(pl.col("dataset") == dataset)
texts = dict(zip(in_dataset["question_id"], in_dataset["question"], strict=True))
with cols[1]:
    question_id = ui.pick("Question", list(texts), key="question", param="question_id",
                          format_func=lambda q: f"{q} — {texts[q][:100]}")
q = in_dataset.filter(pl.col("question_id") == question_id).row(0, named=True)

st.subheader(q["question"])
st.markdown(f"`{question_id}` · type **{q['question_type'] or '—'}** · doc type **{q['doc_type'] or '—'}** · "
            f"task **{q['task'] or '—'}** · company **{q['company'] or '—'}**")
st.markdown("**Reference answer(s):** " + " | ".join(q["reference_answers"] or ["—"]))

st.header("Gold evidence")
evidence = data.gold_evidence(home, dataset, question_id)
if evidence is None or evidence.is_empty():
    st.write("No gold evidence for this question.")
else:
    ui.show_table(evidence.with_columns(pl.col("evidence_text").str.slice(0, SNIPPET)))

st.header("Retrieved chunks")
chunks = data.retrieved_chunks(home, dataset, question_id)
if chunks is None or chunks.is_empty():
    st.write("No retrieval run retrieved for this question.")
else:
    st.caption("As the retrieval metrics judge them (fct_retrieval_results_judged): hit = the chunk is relevant "
               "(named by the gold evidence, or covering a gold page of the gold document); page = it covers a gold "
               "page; doc = its document is a gold document. rank = the result's position in the run's ranking.")
    for run_id in chunks["run_id"].unique(maintain_order=True):
        run_chunks = chunks.filter(pl.col("run_id") == run_id)
        n_hits = int(run_chunks["chunk_hit"].sum())
        st.subheader(f"{run_id} — {n_hits} hit(s) in {run_chunks.height}")
        ui.show_table(run_chunks.select(
            pl.col("result_position").alias("rank"),
            pl.when(pl.col("chunk_hit")).then(pl.lit("✓ hit")).otherwise(pl.lit("✗ miss")).alias("hit"),
            pl.when(pl.col("page_hit")).then(pl.lit("✓")).otherwise(pl.lit("✗")).alias("page"),
            pl.when(pl.col("doc_hit")).then(pl.lit("✓")).otherwise(pl.lit("✗")).alias("doc"),
            "doc_id",
            pl.format("{}-{}", "page_start", pl.coalesce("page_end", "page_start")).alias("pages"),
            "score",
            pl.col("text").str.slice(0, SNIPPET),
        ))

st.header("Answers")
answers = data.answers(home, dataset, question_id)
if answers is None or answers.is_empty():
    st.write("No answer run answered this question.")
else:
    ui.show_table(answers)
