"""Drill-down: why did this question fail? Its gold evidence; per retrieval run the rank of the first gold unit at
each granularity, the chunks marked hit / miss and "in prompt" (full text on expand); every answer with its lexical
scores and the chunks in its prompt, and every judge verdict with its rationale or error. A run filter keeps the page
to the runs compared; `?question_id=Q&dataset=D&runs=A,B` (links from run vs run and judge agreement) opens it on
them."""

import polars as pl
import streamlit as st

from dashboards import ui
from dashboards.data import common
from dashboards.data import drilldown as data

SNIPPET = 300

home = ui.page("Drill-down")
everything = ui.require(data.questions(home), home, "questions")
catalog = common.run_catalog(home)
labels = catalog.labels
wanted = st.query_params.get("question_id")
wanted_dataset = everything.filter(pl.col("question_id") == wanted)["dataset"].to_list() if wanted else []
cols = st.columns([1, 3])
with cols[0]:
    dataset = ui.pick("Dataset", everything["dataset"].unique().sort().to_list(), key="dataset", param="dataset",
                      default=wanted_dataset[0] if wanted_dataset else None)
in_dataset = everything.filter(pl.col("dataset") == dataset)
texts = dict(zip(in_dataset["question_id"], in_dataset["question"], strict=True))
no_gold = set(in_dataset.filter(~pl.col("has_evidence"))["question_id"])
with_gold = in_dataset.filter(pl.col("has_evidence"))["question_id"]
with cols[1]:
    # by default the first question with gold evidence (a BEIR dataset's queries outside the qrels have none)
    question_id = ui.pick("Question", list(texts), key="question", param="question_id",
                          default=with_gold[0] if with_gold.len() else None,
                          format_func=lambda q: f"{q} — {texts[q][:100]}" + (" (no gold)" if q in no_gold else ""))
q = in_dataset.filter(pl.col("question_id") == question_id).row(0, named=True)

st.subheader(q["question"])
st.markdown(f"`{question_id}` · type **{q['question_type'] or '—'}** · doc type **{q['doc_type'] or '—'}** · "
            f"task **{q['task'] or '—'}** · company **{q['company'] or '—'}**")
st.markdown("**Reference answer(s):** " + " | ".join(q["reference_answers"] or ["— (none: no lexical metric "
                                                                              "can score this question)"]))

st.header("Gold evidence")
evidence = data.gold_evidence(home, dataset, question_id)
if evidence is None or evidence.is_empty():
    st.write("No gold evidence for this question: no retrieval metric scores it.")
else:
    ui.show_table(evidence.with_columns(pl.col("evidence_text").str.slice(0, SNIPPET)))

chunks = data.retrieved_chunks(home, dataset, question_id)
answers = data.answers(home, dataset, question_id)
verdicts = data.judge_verdicts(home, dataset, question_id)
prompt_chunks = data.prompt_chunks(home, dataset, question_id)
retrieval_runs = [] if chunks is None else chunks["run_id"].unique(maintain_order=True).to_list()
answer_runs = [] if answers is None else answers["run_id"].to_list()

# the runs shown: the URL's (and the runs they were made from), else the first few
parents = data.run_parents(home)
named = [r for r in (st.query_params.get("runs") or "").split(",") if r]
from_url = data.with_ancestors(parents, named)
# without a link: the retrieval runs answer runs answered over first (their chunks went into prompts), then others
used = data.with_ancestors(parents, answer_runs)
by_use = [r for r in retrieval_runs if r in used] + [r for r in retrieval_runs if r not in used]
default_retrieval = [r for r in from_url if r in retrieval_runs] or by_use[:ui.DEFAULT_TOP]
default_answers = [r for r in from_url if r in answer_runs] or answer_runs
with st.expander(f"Runs shown: {len(default_retrieval)} of {len(retrieval_runs)} retrieval runs, "
                 f"{len(default_answers)} of {len(answer_runs)} answer runs", expanded=not named):
    # the one run picker (by kind, dataset, sweep, text); its default the runs above
    shown = ui.run_picker(catalog, by_use + answer_runs, "runs", default=default_retrieval + default_answers)
shown_retrieval = [r for r in shown if r in retrieval_runs]
shown_answers = [r for r in shown if r in answer_runs]

st.header("Retrieval")
if chunks is None or chunks.is_empty():
    st.write("No retrieval run retrieved for this question.")
else:
    st.caption("Per run: the rank of the first gold unit at each granularity in the whole ranking (— = none "
               "retrieved), the rank RR is computed from (fct_retrieval_question_scores); hits and results count the "
               "results shown. In the tables, as the metrics judge them (fct_retrieval_results_judged): hit = the "
               "chunk is relevant (named by the gold evidence, or covering a gold page of the gold document); page = "
               "it covers a gold page; doc = its document is a gold document; in prompt = an answer run of this "
               "retrieval run put it into the prompt.")
    ranks = data.first_gold_ranks(home, dataset, question_id).filter(pl.col("run_id").is_in(shown_retrieval)) \
        .with_columns(ui.run_column(labels))
    ui.show_table(ranks.select("run", *(f"first_gold_{g}" for g in common.granularities(home)), "hits", "results",
                               "run_id"))
    shown_counts = {r["run_id"]: r for r in ranks.iter_rows(named=True)}  # hits and results, counted once
    for run_id in shown_retrieval:
        run_chunks = chunks.filter(pl.col("run_id") == run_id)
        counts = shown_counts[run_id]
        st.subheader(f"{labels.get(run_id, run_id)} — {counts['hits']} hit(s) in {counts['results']}")
        st.caption(f"`{run_id}`")
        ui.show_table(run_chunks.select(
            pl.col("result_position").alias("rank"),
            pl.when(pl.col("chunk_hit")).then(pl.lit("✓ hit")).otherwise(pl.lit("✗ miss")).alias("hit"),
            pl.when(pl.col("page_hit")).then(pl.lit("✓")).otherwise(pl.lit("✗")).alias("page"),
            pl.when(pl.col("doc_hit")).then(pl.lit("✓")).otherwise(pl.lit("✗")).alias("doc"),
            pl.when(pl.col("in_prompt")).then(pl.lit("✓")).otherwise(pl.lit("")).alias("in_prompt"),
            "doc_id",
            pl.format("{}-{}", "page_start", pl.coalesce("page_end", "page_start")).alias("pages"),
            "score",
            pl.col("text").str.slice(0, SNIPPET),
        ))
        with st.expander(f"Full texts of the {run_chunks.height} chunks"):
            for c in run_chunks.iter_rows(named=True):
                mark = "✓ hit" if c["chunk_hit"] else "✗ miss"
                prompt = " · in prompt" if c["in_prompt"] else ""
                st.markdown(f"**#{c['result_position']} {mark}{prompt}** · `{c['chunk_id']}` · {c['doc_id']} "
                            f"p. {c['page_start']}–{c['page_end'] if c['page_end'] is not None else c['page_start']}")
                st.text(c["text"] or "")

st.header("Answers")
if answers is None or answers.is_empty():
    st.write("No answer run answered this question.")
else:
    lexical = common.metric_names(home, "lexical")
    for run in answers.filter(pl.col("run_id").is_in(shown_answers)).iter_rows(named=True):
        st.subheader(labels.get(run["run_id"], run["run_id"]))
        st.caption(f"`{run['run_id']}`")
        if run["error"]:
            st.error(f"The answer failed: {run['error']}")
        st.markdown("> " + (run["answer"] or "—").replace("\n", "\n> "))
        in_prompt = None if prompt_chunks is None else prompt_chunks.filter(pl.col("answer_run_id") == run["run_id"])
        if in_prompt is not None and in_prompt.height:
            listed = " · ".join(f"{r['prompt_position']}. `{r['chunk_id']}`" for r in in_prompt.iter_rows(named=True))
            st.caption(f"In its prompt, in order (from `{in_prompt['retrieval_run_id'][0]}`): {listed}")
        scores = {m: run[m] for m in lexical if m in run}
        if any(v is not None for v in scores.values()):
            ui.show_table(pl.DataFrame([scores]))
        run_verdicts = None if verdicts is None else verdicts.filter(pl.col("answer_run_id") == run["run_id"])
        if run_verdicts is not None and run_verdicts.height:
            st.markdown("**Judge verdicts**")
            # a judge run with repeated judgments lists each repeat, numbered; one without shows no such column
            repeats = ["repeat"] if run_verdicts["repeat"].max() > 1 else []
            ui.show_table(run_verdicts.select(
                "metric", *repeats, "status", "raw_score", pl.col("normalized_score").alias("score"),
                pl.coalesce(pl.when(pl.col("status") == "ok").then(pl.col("rationale")),
                            pl.concat_str(pl.lit("error: "), pl.col("error")), pl.col("rationale"))
                .alias("rationale / error"),
                "judge_model", "judge_run_id"))
    hidden = [r for r in answer_runs if r not in shown_answers]
    if hidden:
        st.caption(f"{len(hidden)} answer run(s) hidden by the run filter above.")
