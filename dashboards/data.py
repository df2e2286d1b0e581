"""The dashboard's data: pure functions from a warehouse home (and filters) to Polars frames.

They read only Parquet: the marts published under <home>/exports/marts (python_jobs/publishing.py) and, for the
row-level artifacts no mart carries (retrieved chunks, answer texts), the lake's own partitions; and the JSON results
of the landing validations under <home>/gx (the overview's counts). Each query runs on
its own in-memory DuckDB connection that is closed at once; the warehouse file is never opened, so the dashboard
can never hold the lock `dbt build` needs. A function returns None when a mart it needs is not published yet (the
page then says "no data yet"); metrics are never recomputed here, only selected, pivoted and joined.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

EXPORTS = Path("exports") / "marts"

# the retrieval leaderboard's headline metrics, in display order; doc_rec / page_rec exist at their own granularity
RETRIEVAL_HEADLINE = ("doc_rec", "page_rec", "map", "mrr", "ndcg", "precision", "recall")
GENERATION_METRICS = ("rouge_l", "token_f1", "exact_match", "bleu", "numeric_match")
SLICE_DIMENSIONS = ("doc_type", "question_type", "dataset", "task", "topic_l1", "topic_l2", "topic_l3", "company",
                    "sector")
# what "flipped" means on the run-vs-run page: the question passes (value >= threshold) in one run and not in the
# other; scores are all in [0, 1], so 0.5 is the default (0/1 metrics: hit vs miss; judged correctness: correct vs not)
DEFAULT_FLIP_THRESHOLD = 0.5


def home_path(home: str | os.PathLike[str] | None = None) -> Path:
    raw = home if home is not None else os.environ.get("FINRAG_HOME", "warehouse")
    return Path(raw).expanduser().resolve()


def mart_file(home: Path, name: str) -> Path:
    return home / EXPORTS / f"{name}.parquet"


def has_mart(home: Path, name: str) -> bool:
    return mart_file(home, name).exists()


def landing_validations(home: Path) -> dict[str, Any]:
    """The home's stored landing validations (Great Expectations results, python_jobs/core/validation.py): counts of
    passed and failed, the latest failed ones, and whether the Data Docs index exists."""
    from python_jobs.core.config import data_docs_dir
    from python_jobs.core.validation import stored_results

    results = stored_results(home)
    failed = [r for r in results if not r["success"]]
    return {"n": len(results), "passed": len(results) - len(failed), "failed": len(failed),
            "latest_failed": [f"{r['suite']} {r['run_name']}" for r in failed[-3:]][::-1],
            "docs_index": (data_docs_dir(home) / "index.html").exists()}


def export_manifest(home: Path) -> dict[str, Any] | None:
    path = home / EXPORTS / "_manifest.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def query(home: Path, sql: str, params: Sequence[object] | None = None, marts: Iterable[str] = (),
          lake: Iterable[str] = ()) -> pl.DataFrame | None:
    """Run `sql` over views named after the marts (their Parquet exports) and `lake_<table>` (the lake's
    partitions). None when a mart is not published or a lake table does not exist."""
    views: list[str] = []
    for name in marts:
        path = mart_file(home, name)
        if not path.exists():
            return None
        views.append(f'create view "{name}" as select * from read_parquet({_literal(str(path))})')
    for table in lake:
        folder = home / "lake" / table
        if not any(folder.glob("*/*.parquet")):
            return None
        # hive_partitioning off: the partition column is stored in the files themselves
        views.append(f'create view "lake_{table}" as select * from read_parquet('
                     f'{_literal(str(folder / "*" / "*.parquet"))}, union_by_name = true, hive_partitioning = false)')
    con = duckdb.connect(":memory:")
    try:
        for view in views:
            con.execute(view)
        return con.sql(sql, params=list(params or [])).pl()
    finally:
        con.close()


def _in_list(column: str, values: Sequence[str] | None) -> tuple[str, list[str]]:
    """A `column in (?, ...)` filter, or no filter when values is None/empty."""
    if not values:
        return "true", []
    return f"{column} in ({', '.join('?' for _ in values)})", list(values)


# ---------------------------------------------------------------------------------------------------- leaderboard

def datasets(home: Path) -> list[str]:
    found: set[str] = set()
    for mart in ("mart_retrieval_leaderboard", "mart_generation_leaderboard", "mart_judge_leaderboard"):
        frame = query(home, f"select distinct dataset from {mart} where dataset is not null", marts=[mart])
        if frame is not None:
            found.update(frame["dataset"].to_list())
    return sorted(found)


def retrieval_ks(home: Path) -> list[int]:
    frame = query(home, "select distinct k from mart_retrieval_leaderboard order by k",
                  marts=["mart_retrieval_leaderboard"])
    return [] if frame is None else frame["k"].to_list()


def retrieval_leaderboard(home: Path, k: int, granularity: str = "page",
                          datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """One row per retrieval run: doc_rec@k (doc granularity), page_rec@k (page granularity) and map / mrr / ndcg /
    precision / recall @k at `granularity`, straight from mart_retrieval_leaderboard."""
    where, params = _in_list("dataset", datasets_)
    frame = query(home, f"""
        select
            run_id, dataset, retriever, condition,
            max(n_questions) as n_questions,
            max(mean) filter (where metric = 'doc_rec' and granularity = 'doc') as doc_rec,
            max(mean) filter (where metric = 'page_rec' and granularity = 'page') as page_rec,
            {", ".join(f"max(mean) filter (where metric = '{m}' and granularity = ?) as {m}"
                       for m in RETRIEVAL_HEADLINE[2:])}
        from mart_retrieval_leaderboard
        where k = ? and {where}
        group by run_id, dataset, retriever, condition
        order by dataset, condition, retriever, run_id
    """, [*([granularity] * 5), k, *params], marts=["mart_retrieval_leaderboard"])
    return frame


def generation_leaderboard(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select
            run_id, dataset, model, eval_mode, retrieval_run_id,
            max(n_questions) as n_questions, max(n_failed) as n_failed,
            {", ".join(f"max(mean) filter (where metric = '{m}') as {m}" for m in GENERATION_METRICS)}
        from mart_generation_leaderboard
        where {where}
        group by run_id, dataset, model, eval_mode, retrieval_run_id
        order by dataset, eval_mode, run_id
    """, params, marts=["mart_generation_leaderboard"])


def judge_leaderboard(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """Long: judge run x metric with mean and the ok / not applicable / failed counts (mart_judge_leaderboard)."""
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select judge_run_id, answer_run_id, judge_model, answer_model, eval_mode, dataset, metric, mean,
               cast(n_ok as bigint) as n_ok, cast(n_not_applicable as bigint) as n_not_applicable,
               cast(n_failed as bigint) as n_failed
        from mart_judge_leaderboard
        where {where}
        order by dataset, judge_run_id, metric
    """, params, marts=["mart_judge_leaderboard"])


# ---------------------------------------------------------------------------------------------------- heatmap

def matrix_options(home: Path) -> pl.DataFrame | None:
    """Every (run, metric, granularity, k) the topic x task matrix holds."""
    return query(home, """
        select distinct run_id, run_kind, dataset, metric, granularity, k
        from mart_topic_task_matrix
        order by run_kind, run_id, metric, granularity, k
    """, marts=["mart_topic_task_matrix"])


def topic_task_matrix(home: Path, run_id: str, metric: str, granularity: str | None, k: int | None,
                      topic_level: int) -> pl.DataFrame | None:
    return query(home, """
        select topic, coalesce(topic_en, topic) as topic_label, task, mean, n
        from mart_topic_task_matrix
        where run_id = ? and metric = ? and granularity is not distinct from ? and k is not distinct from ?
          and topic_level = ?
        order by topic, task
    """, [run_id, metric, granularity, k, topic_level], marts=["mart_topic_task_matrix"])


# ---------------------------------------------------------------------------------------------------- slices

def retrieval_runs(home: Path) -> pl.DataFrame | None:
    return query(home, """
        select distinct run_id, dataset, retriever, condition
        from mart_retrieval_leaderboard order by dataset, condition, retriever, run_id
    """, marts=["mart_retrieval_leaderboard"])


def retrieval_slices(home: Path, run_id: str, dimension: str, metric: str, granularity: str,
                     k: int) -> pl.DataFrame | None:
    """The run's means by slice value, and beside them its Oracle-Doc / Oracle-Page counterparts' means on the same
    slice (the counterparts are the ones mart_oracle_gap pairs with the run)."""
    return query(home, """
        with counterparts as (
            select any_value(oracle_doc_run_id) as oracle_doc_run_id, any_value(oracle_page_run_id) as oracle_page_run_id
            from mart_oracle_gap where run_id = ?
        ),
        slices as (
            select run_id, dimension_value, mean, n_questions
            from mart_retrieval_by_slice
            where dimension = ? and metric = ? and granularity = ? and k = ?
        )
        select
            run_slices.dimension_value as value,
            run_slices.mean,
            run_slices.n_questions,
            oracle_doc.mean as oracle_doc_mean,
            oracle_page.mean as oracle_page_mean
        from slices as run_slices
        left join counterparts on true
        left join slices as oracle_doc
            on oracle_doc.run_id = counterparts.oracle_doc_run_id
            and oracle_doc.dimension_value = run_slices.dimension_value
        left join slices as oracle_page
            on oracle_page.run_id = counterparts.oracle_page_run_id
            and oracle_page.dimension_value = run_slices.dimension_value
        where run_slices.run_id = ?
        order by value
    """, [run_id, dimension, metric, granularity, k, run_id], marts=["mart_retrieval_by_slice", "mart_oracle_gap"])


def runs_with_oracle_counterparts(home: Path) -> list[str]:
    """Full-corpus runs that mart_oracle_gap pairs with an Oracle-Doc or Oracle-Page run."""
    frame = query(home, """
        select distinct run_id from mart_oracle_gap
        where oracle_doc_run_id is not null or oracle_page_run_id is not null
        order by run_id
    """, marts=["mart_oracle_gap"])
    return [] if frame is None else frame["run_id"].to_list()


def oracle_gap(home: Path, run_id: str, metric: str, granularity: str, k: int) -> pl.DataFrame | None:
    return query(home, """
        select run_id, mean, oracle_doc_run_id, oracle_doc_mean, oracle_doc_gap,
               oracle_page_run_id, oracle_page_mean, oracle_page_gap
        from mart_oracle_gap
        where run_id = ? and metric = ? and granularity = ? and k = ?
    """, [run_id, metric, granularity, k], marts=["mart_oracle_gap"])


def generation_runs(home: Path) -> pl.DataFrame | None:
    return query(home, """
        select distinct run_id, dataset, model, eval_mode
        from mart_generation_leaderboard order by dataset, eval_mode, run_id
    """, marts=["mart_generation_leaderboard"])


def generation_slices(home: Path, run_id: str, dimension: str, metric: str) -> pl.DataFrame | None:
    return query(home, """
        select value, mean, n
        from mart_generation_by_slice
        where run_id = ? and dimension = ? and metric = ?
        order by value
    """, [run_id, dimension, metric], marts=["mart_generation_by_slice"])


# ---------------------------------------------------------------------------------------------------- run vs run

def comparable_metrics(home: Path) -> pl.DataFrame | None:
    """Every (run, kind, dataset, metric, granularity, k) with per-question scores."""
    return query(home, """
        select distinct run_id, run_kind, dataset, metric, granularity, k
        from fct_question_metric_scores
        order by run_kind, run_id, metric, granularity, k
    """, marts=["fct_question_metric_scores"])


def run_vs_run(home: Path, run_a: str, run_b: str, metric: str, granularity: str | None, k: int | None,
               threshold: float = DEFAULT_FLIP_THRESHOLD) -> pl.DataFrame | None:
    """Per question scored by both runs: value_a, value_b, diff (b - a), and `flipped`: passes (value >= threshold)
    in exactly one of the two runs. Question texts from dim_questions. Sorted: flips first, then by |diff|."""
    return query(home, """
        with scores as (
            select run_id, question_id, value
            from fct_question_metric_scores
            where metric = ? and granularity is not distinct from ? and k is not distinct from ?
        ),
        paired as (
            select a.question_id, a.value as value_a, b.value as value_b
            from scores as a
            inner join scores as b on b.question_id = a.question_id
            where a.run_id = ? and b.run_id = ?
        )
        select
            paired.question_id,
            dim_questions.question,
            paired.value_a,
            paired.value_b,
            paired.value_b - paired.value_a as diff,
            (paired.value_a >= ?) <> (paired.value_b >= ?) as flipped,
            case
                when paired.value_b >= ? and paired.value_a < ? then 'b only'
                when paired.value_a >= ? and paired.value_b < ? then 'a only'
            end as passes_in
        from paired
        left join dim_questions using (question_id)
        order by flipped desc, abs(paired.value_b - paired.value_a) desc, paired.question_id
    """, [metric, granularity, k, run_a, run_b, *([threshold] * 6)],
        marts=["fct_question_metric_scores", "dim_questions"])


# ---------------------------------------------------------------------------------------------------- judge agreement

def judge_agreement(home: Path) -> pl.DataFrame | None:
    return query(home, "select * from mart_judge_agreement", marts=["mart_judge_agreement"])


def judge_confusion(home: Path, judge_run_id: str | None, label_set: str, metric: str) -> pl.DataFrame | None:
    """Long confusion counts (judge_class x human_class) of one judge run (or all runs when None) on a label set."""
    return query(home, """
        select judge_class, human_class, cast(sum(n) as bigint) as n
        from mart_judge_confusion
        where (? is null or judge_run_id = ?) and label_set = ? and metric = ?
        group by judge_class, human_class
        order by min(judge_class_order), min(human_class_order)
    """, [judge_run_id, judge_run_id, label_set, metric], marts=["mart_judge_confusion"])


# ---------------------------------------------------------------------------------------------------- drill-down

def questions(home: Path, dataset: str | None = None) -> pl.DataFrame | None:
    return query(home, """
        select question_id, dataset, question, reference_answers, question_type, doc_type, task, topic_l1, topic_l2,
               company
        from dim_questions
        where ? is null or dataset = ?
        order by question_id
    """, [dataset, dataset], marts=["dim_questions"])


def gold_evidence(home: Path, question_id: str) -> pl.DataFrame | None:
    return query(home, """
        select doc_id, page_number, chunk_id, relevance, evidence_text
        from fct_evidence where question_id = ?
        order by evidence_ordinal
    """, [question_id], marts=["fct_evidence"])


def retrieved_chunks(home: Path, question_id: str) -> pl.DataFrame | None:
    """Every retrieval run's ranked results for the question, with the chunk text and hit marks against the gold
    evidence: doc_hit (the chunk's document is a gold document) and chunk_hit (the chunk is named by the evidence, or
    covers a gold page of the gold document: the chunk-relevance rule of int_retrieval_judgments)."""
    return query(home, """
        with evidence as (
            select doc_id, page_number, chunk_id from fct_evidence where question_id = ? and relevance > 0
        ),
        results as (
            select run_id, rank, chunk_id, doc_id, page_start, page_end, score
            from lake_retrieval_results where question_id = ?
        ),
        texts as (
            select chunk_id, text from lake_chunks where chunk_id in (select chunk_id from results)
        )
        select
            results.run_id,
            results.rank,
            results.chunk_id,
            results.doc_id,
            results.page_start,
            results.page_end,
            results.score,
            exists (select 1 from evidence where evidence.doc_id = results.doc_id) as doc_hit,
            exists (
                select 1 from evidence
                where evidence.chunk_id = results.chunk_id
                   or (evidence.chunk_id is null and evidence.doc_id = results.doc_id
                       and evidence.page_number between results.page_start
                                                    and coalesce(results.page_end, results.page_start))
            ) as chunk_hit,
            texts.text
        from results
        left join texts using (chunk_id)
        order by results.run_id, results.rank
    """, [question_id, question_id], marts=["fct_evidence"], lake=["retrieval_results", "chunks"])


def answers(home: Path, question_id: str) -> pl.DataFrame | None:
    """Every answer run's answer to the question (the lake's full text), with its lexical scores from
    fct_generation_question_scores."""
    return query(home, """
        with runs as (
            select run_id, model, eval_mode, retrieval_run_id from lake_generation_runs
        )
        select
            lake_answers.run_id,
            runs.model,
            runs.eval_mode,
            runs.retrieval_run_id,
            lake_answers.answer,
            lake_answers.error,
            scores.rouge_l,
            scores.token_f1,
            scores.exact_match,
            scores.numeric_match
        from lake_answers
        left join runs using (run_id)
        left join fct_generation_question_scores as scores
            on scores.run_id = lake_answers.run_id and scores.question_id = lake_answers.question_id
        where lake_answers.question_id = ?
        order by lake_answers.run_id
    """, [question_id], marts=["fct_generation_question_scores"], lake=["answers", "generation_runs"])
