"""The drill-down page's data (views/drilldown.py): one question's evidence, retrieved chunks, prompts,
answers and judge verdicts, and the runs a run was made from."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import polars as pl

from dashboards.data.published import query


def run_parents(home: Path) -> dict[str, list[str]]:
    """run id -> the runs it was made from (dim_runs: an answer run's retrieval run; a judge run's answer run and
    that answer run's retrieval run), so a link naming a judge run also shows the runs behind it."""
    frame = query(home, "select run_id, answer_run_id, retrieval_run_id from dim_runs", marts=["dim_runs"])
    return {} if frame is None else {run: [p for p in parents if p] for run, *parents in frame.rows()}


def with_ancestors(parents: dict[str, list[str]], runs: Iterable[str]) -> list[str]:
    """The runs and every run they were made from, in order, each once."""
    out: list[str] = []
    todo = list(runs)
    while todo:
        run = todo.pop(0)
        if run and run not in out:
            out.append(run)
            todo.extend(parents.get(run, []))
    return out


def questions(home: Path, dataset: str | None = None) -> pl.DataFrame | None:
    """Every question with its attributes and has_evidence (the qrels have gold for it: retrieval metrics score it;
    a BEIR dataset's queries outside the qrels have none): mart_drilldown_questions."""
    return query(home, """
        select question_id, dataset, question, reference_answers, question_type, doc_type, task, topic_l1, topic_l2,
               company, has_evidence
        from mart_drilldown_questions
        where ? is null or dataset = ?
        order by question_id
    """, [dataset, dataset], marts=["mart_drilldown_questions"])


def gold_evidence(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    # question ids are unique within a dataset only (TREC topic ids repeat across collections)
    return query(home, """
        select doc_id, page_number, chunk_id, relevance, evidence_text
        from fct_evidence where dataset = ? and question_id = ?
        order by evidence_ordinal
    """, [dataset, question_id], marts=["fct_evidence"])


def retrieved_chunks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every retrieval run's shown results for the question (mart_drilldown_results): the chunk and its full text,
    the hit marks the metrics use (never re-decided here: chunk_hit, page_hit, doc_hit and each unit's rank) and
    in_prompt (an answer run over this retrieval run put the chunk into the question's prompt)."""
    return query(home, """
        select run_id, rank, result_position, chunk_id, doc_id, page_start, page_end, score, chunk_hit,
               chunk_relevance, page_hit, doc_hit, chunk_rank, page_rank, doc_rank, in_prompt, text
        from mart_drilldown_results
        where dataset = ? and question_id = ?
        order by run_id, result_position
    """, [dataset, question_id], marts=["mart_drilldown_results"])


def first_gold_ranks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Per retrieval run with results shown for the question (mart_drilldown_first_gold_ranks): the rank of the
    first gold unit at chunk, page and document granularity in the run's whole ranking (the rank RR is computed
    from; null: none retrieved, or the question is not judged at that granularity), then the hits among the results
    shown and the results shown."""
    # every first_gold_<granularity> column the mart has (one per dim_granularities row), not a spelled list
    return query(home, """
        select run_id, columns('^first_gold_'), hits, results
        from mart_drilldown_first_gold_ranks
        where dataset = ? and question_id = ?
        order by run_id
    """, [dataset, question_id], marts=["mart_drilldown_first_gold_ranks"])


def prompt_chunks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """The chunks each RAG answer run put into the question's prompt (mart_drilldown_prompt_chunks, in prompt
    order): answer run, its retrieval run, chunk id, position in the prompt (1-based)."""
    return query(home, """
        select answer_run_id, retrieval_run_id, chunk_id, prompt_position
        from mart_drilldown_prompt_chunks
        where dataset = ? and question_id = ?
        order by answer_run_id, prompt_position
    """, [dataset, question_id], marts=["mart_drilldown_prompt_chunks"])


def answers(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every answer run's answer to the question (mart_drilldown_answers: the full text, or its error) with the run's
    model, mode and retrieval run and its lexical scores, one column per lexical metric of the registry."""
    return query(home, """
        select * exclude (question_id, dataset)
        from mart_drilldown_answers
        where dataset = ? and question_id = ?
        order by run_id
    """, [dataset, question_id], marts=["mart_drilldown_answers"])


def judge_verdicts(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every judgment of the question's answers (fct_judge_scores): judge run, answer run, metric, repeat (a judge run
    with repeated judgments has a row per repeat), status (ok / not_applicable / failed), raw and normalised score,
    the judge's rationale and, when it failed, the error; in the registry's metric order, then by repeat."""
    return query(home, """
        select answer_run_id, judge_run_id, judge_model, metric, repeat, status, raw_score, normalized_score,
            rationale, error
        from fct_judge_scores
        where dataset = ? and question_id = ?
        order by answer_run_id, judge_run_id, metric_display_order, metric, repeat
    """, [dataset, question_id], marts=["fct_judge_scores"])
