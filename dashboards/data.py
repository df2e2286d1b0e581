"""The dashboard's data: pure functions from a warehouse home (and filters) to Polars frames.

They read only Parquet: the marts published under <home>/exports/marts (python_jobs/warehouse/publishing.py) and, for
the row-level artifacts no mart carries (retrieved chunks, answer texts), the lake's own partitions; and the JSON
results of the landing validations under <home>/gx (the overview's counts). Each query runs on
its own in-memory DuckDB connection that is closed at once; the warehouse file is never opened, so the dashboard
can never hold the lock `dbt build` needs. A function returns None when a mart it needs is not published yet (the
page then says "no data yet"); metrics are never recomputed here, only selected, pivoted and joined. Which metrics
exist, their labels, order and granularities come from the metric registry (dim_metrics), never from a list here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from python_jobs.core.rules import GRANULARITIES

EXPORTS = Path("exports") / "marts"

# what "flipped" means on the run-vs-run page: the question passes (value >= threshold) in one run and not in the
# other; scores are all in [0, 1], so 0.5 is the default (0/1 metrics: hit vs miss; judged correctness: correct vs not)
DEFAULT_FLIP_THRESHOLD = 0.5


def home_path(home: str | os.PathLike[str] | None = None) -> Path:
    raw = home if home is not None else os.environ.get("FINRAG_HOME", "warehouse")
    return Path(raw).expanduser().resolve()


def published(home: Path) -> dict[str, list[Path]] | None:
    """Published name -> its Parquet files, from the one manifest (python_jobs/warehouse/publishing.py); None when
    nothing is published or the published state is stale (publishing_problem says which)."""
    from python_jobs.warehouse.publishing import PublishError, published_tables

    try:
        return published_tables(home)
    except PublishError:
        return None


def publishing_problem(home: Path) -> str | None:
    """Why nothing can be read (nothing published, or stale: a newer build was not published), or None."""
    from python_jobs.warehouse.publishing import PublishError, read_manifest

    try:
        read_manifest(home)
    except PublishError as exc:
        return str(exc)
    return None


def has_mart(home: Path, name: str) -> bool:
    tables = published(home)
    return tables is not None and name in tables


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
    """The published state's manifest (build and publish times, every model with its rows and columns); None when
    nothing is published or it is stale."""
    from python_jobs.warehouse.publishing import PublishError, read_manifest

    try:
        manifest = read_manifest(home)
    except PublishError:
        return None
    return {"build_id": manifest.build_id, "built_at": manifest.built_at.isoformat(),
            "published_at": manifest.published_at.isoformat(),
            "models": [{"name": m.name, "rows": m.rows, "columns": m.columns} for m in manifest.models.values()]}


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def query(home: Path, sql: str, params: Sequence[object] | None = None, marts: Iterable[str] = (),
          lake: Iterable[str] = ()) -> pl.DataFrame | None:
    """Run `sql` over views named after the marts (their Parquet exports) and `lake_<table>` (the lake's
    partitions). None when a mart is not published or a lake table does not exist."""
    views: list[str] = []
    tables = published(home) if marts else {}
    for name in marts:
        if tables is None or name not in tables:
            return None
        paths = ", ".join(_literal(str(f)) for f in tables[name])
        views.append(f'create view "{name}" as select * from read_parquet([{paths}], union_by_name = true)')
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


def _pivot_metrics(long: pl.DataFrame, index: list[str], metrics: Sequence[str]) -> pl.DataFrame:
    """Long (index..., metric, mean) rows as one row per index with a column per metric, in the given order (a
    metric without a value is a null column)."""
    if long.is_empty():
        return long.select(index).with_columns(pl.lit(None, pl.Float64).alias(m) for m in metrics)
    wide = long.pivot(on="metric", index=index, values="mean", aggregate_function="first")
    return wide.with_columns(pl.lit(None, pl.Float64).alias(m) for m in metrics if m not in wide.columns) \
        .select(*index, *metrics)


# ---------------------------------------------------------------------------------------------------- metrics

def metric_registry(home: Path) -> pl.DataFrame | None:
    """Every metric (dim_metrics, the published seed `metrics`): family, label, direction, scale, granularities,
    trec_eval names, in display order."""
    return query(home, "select * from dim_metrics order by display_order", marts=["dim_metrics"])


def metric_names(home: Path, family: str) -> list[str]:
    """The registry's metrics of one family (retrieval, lexical, evidence_overlap, judged), in display order."""
    registry = metric_registry(home)
    return [] if registry is None else registry.filter(pl.col("family") == family)["metric"].to_list()


def metric_granularities(home: Path, metric: str) -> list[str]:
    """The granularities a metric exists at (doc_rec: doc only), as the registry lists them."""
    registry = metric_registry(home)
    if registry is None:
        return []
    found = registry.filter(pl.col("metric") == metric)["granularities"].to_list()
    return list(found[0] or []) if found else []


def own_granularity_metrics(home: Path) -> list[tuple[str, str, str]]:
    """(metric, granularity, label) of the retrieval metrics that exist at one granularity only (the retrieval-gap
    study's DocRec at doc and PageRec at page): shown at their own granularity whatever the page's choice."""
    registry = metric_registry(home)
    if registry is None:
        return []
    own = registry.filter((pl.col("family") == "retrieval") & (pl.col("granularities").list.len() == 1))
    return [(r["metric"], r["granularities"][0], r["label"]) for r in own.iter_rows(named=True)]


# ---------------------------------------------------------------------------------------------------- leaderboard

# granularities from the finest to the coarsest (the rules' order): the leaderboard's default is the finest with data


def run_labels(home: Path) -> dict[str, str]:
    """run id -> a label that says what the run is (retriever, condition, k, split, embedder; an answer run's mode,
    model and retrieval run; a judge run's model and answer run): python_jobs/warehouse/inventory.py, from the
    lake's run tables. Empty when the home has no lake."""
    from python_jobs.warehouse import inventory

    lake = inventory.existing_lake(home)
    return {} if lake is None else inventory.run_labels(lake)


def run_label(labels: dict[str, str], run_id: str) -> str:
    """How a selector shows a run: its label, then its id (ids stay visible: links and the CLI take them)."""
    label = labels.get(run_id)
    return f"{label}  ({run_id})" if label else run_id


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


def retrieval_granularities(home: Path, datasets_: Sequence[str] | None = None) -> list[str]:
    """The granularities at which the multi-granularity retrieval metrics (MAP, nDCG, ...) have a scored run in
    these datasets, finest first: a BEIR dataset has no pages, so it has chunk and doc only."""
    where, params = _in_list("dataset", datasets_)
    frame = query(home, f"""
        select distinct board.granularity
        from mart_retrieval_leaderboard as board
        inner join dim_metrics using (metric)
        where len(dim_metrics.granularities) > 1 and board.mean is not null and {where}
    """, params, marts=["mart_retrieval_leaderboard", "dim_metrics"])
    found = set() if frame is None else set(frame["granularity"].to_list())
    return [g for g in GRANULARITIES if g in found] + sorted(found - set(GRANULARITIES))


def retrieval_metric_by_k(home: Path, metric: str, granularity: str,
                          datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """Each run's mean of one metric at every k the mart holds (k = 0, the whole ranking, left out): the
    metric-vs-k curves. A one-granularity metric (doc_rec, page_rec) at its own granularity."""
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select board.run_id, board.k, board.mean, board.n_questions
        from mart_retrieval_leaderboard as board
        inner join dim_metrics using (metric)
        where board.metric = ? and board.k > 0 and {where}
            and board.granularity = case when len(dim_metrics.granularities) = 1
                                         then dim_metrics.granularities[1] else ? end
        order by board.run_id, board.k
    """, [metric, *params, granularity], marts=["mart_retrieval_leaderboard", "dim_metrics"])


def compared_to(home: Path, leader: str, metric: str, granularity: str | None,
                k: int | None) -> pl.DataFrame | None:
    """mart_run_comparison's pairs of `leader` with any other run on one metric, oriented as run − leader:
    run_id, n_questions, delta, ci_low, ci_high, p_randomization (the mart may hold a pair either way, or both)."""
    return query(home, """
        with pairs as (
            select * from mart_run_comparison
            where metric = ? and granularity is not distinct from ? and k is not distinct from ?
        ),
        oriented as (
            select run_b as run_id, 1 as orientation, n_questions, delta, ci_low, ci_high, p_randomization
            from pairs where run_a = ?
            union all
            select run_a as run_id, 2 as orientation, n_questions, -delta as delta, -ci_high as ci_low,
                   -ci_low as ci_high, p_randomization
            from pairs where run_b = ?
        )
        -- a pair the mart holds both ways once: leader as A first
        select run_id, n_questions, delta, ci_low, ci_high, p_randomization
        from oriented
        qualify row_number() over (partition by run_id order by orientation) = 1
    """, [metric, granularity, k, leader, leader], marts=["mart_run_comparison"])


def retrieval_leaderboard(home: Path, k: int, granularity: str = "page",
                          datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """One row per retrieval run with a column per retrieval metric of the registry (dim_metrics, in its display
    order), each metric's mean@k straight from mart_retrieval_leaderboard: a metric that exists at one granularity
    only (doc_rec at doc, page_rec at page) at its own, every other one at `granularity`."""
    where, params = _in_list("dataset", datasets_)
    long = query(home, f"""
        with board as (
            select * from mart_retrieval_leaderboard where k = ? and {where}
        ),
        runs as (
            select run_id, dataset, retriever, condition, max(n_questions) as n_questions
            from board
            group by run_id, dataset, retriever, condition
        ),
        shown as (
            select metric, case when len(granularities) = 1 then granularities[1] else ? end as granularity
            from dim_metrics
            where family = 'retrieval'
        ),
        cells as (
            select board.run_id, board.metric, board.mean
            from board
            inner join shown on shown.metric = board.metric and shown.granularity = board.granularity
        )
        select runs.*, cells.metric, cells.mean
        from runs
        inner join cells using (run_id)
    """, [k, *params, granularity], marts=["mart_retrieval_leaderboard", "dim_metrics"])
    if long is None:
        return None
    board = _pivot_metrics(long, ["run_id", "dataset", "retriever", "condition", "n_questions"],
                           metric_names(home, "retrieval"))
    return board.sort("dataset", "condition", "retriever", "run_id", nulls_last=True)


def generation_leaderboard(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """One row per answer run with a column per lexical metric of the registry (mart_generation_leaderboard), then
    each metric's own count of scored answers, n_<metric> (numeric_match counts only questions with a numeric
    gold)."""
    where, params = _in_list("dataset", datasets_)
    long = query(home, f"""
        select run_id, dataset, model, eval_mode, retrieval_run_id, n_questions, n_failed, metric, mean,
               cast(n as bigint) as n
        from mart_generation_leaderboard
        where {where}
    """, params, marts=["mart_generation_leaderboard", "dim_metrics"])
    if long is None:
        return None
    index = ["run_id", "dataset", "model", "eval_mode", "retrieval_run_id", "n_questions", "n_failed"]
    metrics = metric_names(home, "lexical")
    board = _pivot_metrics(long.drop("n"), index, metrics)
    counts = _pivot_metrics(long.select("run_id", "metric", pl.col("n").alias("mean")), ["run_id"], metrics)
    counts = counts.rename({m: f"n_{m}" for m in metrics})
    return board.join(counts, on="run_id", how="left").sort("dataset", "eval_mode", "run_id", nulls_last=True)


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
            select any_value(oracle_doc_run_id) as oracle_doc_run_id,
                   any_value(oracle_page_run_id) as oracle_page_run_id
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


def run_comparison(home: Path, run_a: str, run_b: str, granularity: str | None,
                   k: int | None) -> pl.DataFrame | None:
    """mart_run_comparison's rows for (run_a, run_b): every metric of the pair at this granularity and k (retrieval)
    or the lexical / judged metrics (no granularity), in the registry's display order. None before a build
    publishes the mart; empty when the mart does not compare the pair (see var run_comparison_max_runs)."""
    return query(home, """
        select
            comparison.metric, comparison.n_questions, comparison.mean_a, comparison.mean_b, comparison.delta,
            comparison.ci_low, comparison.ci_high, comparison.p_ttest, comparison.p_randomization,
            comparison.p_holm, comparison.wins, comparison.ties, comparison.losses,
            comparison.n_not_ok_a, comparison.n_not_ok_b
        from mart_run_comparison as comparison
        left join dim_metrics using (metric)
        where comparison.run_a = ? and comparison.run_b = ?
            and comparison.granularity is not distinct from ? and comparison.k is not distinct from ?
        order by dim_metrics.display_order, comparison.metric
    """, [run_a, run_b, granularity, k], marts=["mart_run_comparison", "dim_metrics"])


# ---------------------------------------------------------------------------------------------------- judge agreement

def judge_agreement(home: Path) -> pl.DataFrame | None:
    return query(home, "select * from mart_judge_agreement", marts=["mart_judge_agreement"])


AGREEMENT_KEYS = ("grain", "judge_run_id", "label_set", "metric", "judge_model", "rubric", "answer_model", "eval_mode")


def judge_confusion(home: Path, agreement_row: dict[str, Any]) -> pl.DataFrame | None:
    """The confusion counts (judge_class x human_class) of one mart_judge_agreement row: mart_judge_confusion's
    matrix with the same grain and keys (counted from the same pairs, so it sums to the row's n)."""
    where = " and ".join(f"{key} is not distinct from ?" for key in AGREEMENT_KEYS)
    return query(home, f"""
        select judge_class, human_class, n
        from mart_judge_confusion
        where {where}
        order by judge_class_order, human_class_order
    """, [agreement_row[key] for key in AGREEMENT_KEYS], marts=["mart_judge_confusion"])


# ---------------------------------------------------------------------------------------------------- drill-down

def questions(home: Path, dataset: str | None = None) -> pl.DataFrame | None:
    """Every question with its attributes and has_evidence (fct_evidence has gold for it: retrieval metrics score
    it; a BEIR dataset's queries outside the qrels have none)."""
    return query(home, """
        with gold as (select distinct dataset, question_id from fct_evidence)
        select dim_questions.question_id, dim_questions.dataset, dim_questions.question,
               dim_questions.reference_answers, dim_questions.question_type, dim_questions.doc_type,
               dim_questions.task, dim_questions.topic_l1, dim_questions.topic_l2, dim_questions.company,
               gold.question_id is not null as has_evidence
        from dim_questions
        left join gold on gold.dataset = dim_questions.dataset and gold.question_id = dim_questions.question_id
        where ? is null or dim_questions.dataset = ?
        order by dim_questions.question_id
    """, [dataset, dataset], marts=["dim_questions", "fct_evidence"])


def gold_evidence(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    # question ids are unique within a dataset only (TREC topic ids repeat across collections)
    return query(home, """
        select doc_id, page_number, chunk_id, relevance, evidence_text
        from fct_evidence where dataset = ? and question_id = ?
        order by evidence_ordinal
    """, [dataset, question_id], marts=["fct_evidence"])


def retrieved_chunks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every retrieval run's ranked results for the question with the chunk text and the hit marks the metrics use,
    read from fct_retrieval_results_judged (never re-decided here): chunk_hit (the chunk is relevant: named by the
    evidence, or covering a gold page of the gold document), page_hit (it covers a gold page), doc_hit (its document
    is a gold document), and each unit's rank. Chunk texts from the lake."""
    return query(home, """
        with results as (
            select * from fct_retrieval_results_judged
            where question_id = ? and run_id in (select run_id from lake_retrieval_runs where dataset = ?)
        ),
        texts as (
            select chunk_id, text from lake_chunks
            where dataset = ? and chunk_id in (select chunk_id from results)
        )
        select
            results.run_id,
            results.rank,
            results.result_position,
            results.chunk_id,
            results.doc_id,
            results.page_start,
            results.page_end,
            results.score,
            results.is_chunk_relevant as chunk_hit,
            results.chunk_relevance,
            results.is_page_relevant as page_hit,
            results.is_doc_relevant as doc_hit,
            results.chunk_rank,
            results.page_rank,
            results.doc_rank,
            texts.text
        from results
        left join texts using (chunk_id)
        order by results.run_id, results.result_position
    """, [question_id, dataset, dataset], marts=["fct_retrieval_results_judged"],
        lake=["chunks", "retrieval_runs"])


def answers(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every answer run's answer to the question (the lake's full text), with its lexical scores from
    fct_generation_question_scores: one column per lexical metric of the registry, in its order."""
    registry = metric_registry(home)
    if registry is None:
        return None
    lexical = registry.filter(pl.col("family") == "lexical").select("metric", "score_column").rows()
    scores = "".join(f',\n            scores."{column}" as "{metric}"' for metric, column in lexical)
    return query(home, f"""
        with runs as (
            select run_id, model, eval_mode, retrieval_run_id from lake_generation_runs where dataset = ?
        )
        select
            lake_answers.run_id,
            runs.model,
            runs.eval_mode,
            runs.retrieval_run_id,
            lake_answers.answer,
            lake_answers.error{scores}
        from lake_answers
        inner join runs using (run_id)
        left join fct_generation_question_scores as scores
            on scores.run_id = lake_answers.run_id and scores.question_id = lake_answers.question_id
        where lake_answers.question_id = ?
        order by lake_answers.run_id
    """, [dataset, question_id], marts=["fct_generation_question_scores"], lake=["answers", "generation_runs"])


# ---------------------------------------------------------------------------------------------------- empty states

def lake_datasets(home: Path) -> pl.DataFrame | None:
    """What the lake holds per dataset (python_jobs/warehouse/inventory.py, what `finrag ls` prints): questions and
    how many have reference answers, documents, pages, chunks, retrieval / answer / judge runs. None when nothing
    is ingested (no question in the lake)."""
    from python_jobs.warehouse import inventory

    lake = inventory.existing_lake(home)
    found = None if lake is None else inventory.datasets(lake)
    return None if found is None or found.is_empty() else found


def lake_runs(home: Path) -> pl.DataFrame | None:
    """Every run in the lake, newest first: kind, run id, dataset, label, created_at (what `finrag ls` prints)."""
    from python_jobs.warehouse import inventory

    lake = inventory.existing_lake(home)
    return None if lake is None else inventory.runs(lake)


def judgment_failures(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """Per judge run and metric of the lake: judgments ok / failed and the first error, for the runs whose every
    judgment of a metric failed (mart_judge_leaderboard has then no mean to show)."""
    where, params = _in_list("answer_runs.dataset", datasets_)
    return query(home, f"""
        select judgments.judge_run_id, judge_runs.answer_run_id, judgments.metric,
               count(*) filter (where judgments.status = 'ok') as n_ok,
               count(*) filter (where judgments.status = 'failed') as n_failed,
               min(judgments.error) filter (where judgments.status = 'failed') as first_error
        from lake_judgments as judgments
        inner join lake_judge_runs as judge_runs using (judge_run_id)
        left join lake_generation_runs as answer_runs on answer_runs.run_id = judge_runs.answer_run_id
        where {where}
        group by all
        having count(*) filter (where judgments.status = 'ok') = 0
            and count(*) filter (where judgments.status = 'failed') > 0
        order by judgments.judge_run_id, judgments.metric
    """, params, lake=["judgments", "judge_runs", "generation_runs"])


def diagnose(home: Path, what: str, datasets_: Sequence[str] | None = None) -> tuple[str, str]:
    """Why a page (section) has nothing to show, found in the lake and the published marts, and the command that
    fixes it: (reason, command). `what`: retrieval, page (page-level metrics), generation, judged, agreement,
    costs, qa_generation, or anything else (only the home-wide causes)."""
    found = lake_datasets(home)
    if found is None:
        return ("nothing is ingested in this home (the lake has no question)",
                "finrag ingest financebench --questions Q.jsonl --documents D.jsonl --pdfs DIR  (or `finrag demo`)")
    manifest = export_manifest(home)
    if manifest is None:
        return ("no mart is published yet (the lake has data, but no build ran)", "finrag build")
    scope = found.filter(pl.col("dataset").is_in(list(datasets_))) if datasets_ else found
    names = ", ".join(scope["dataset"]) or "these datasets"
    first = scope["dataset"][0] if scope.height else "DATASET"
    if what == "page":
        without = scope.filter(pl.col("n_pages") == 0)["dataset"].to_list()
        if without:
            return (f"{', '.join(without)} has no pages (a BEIR / TREC corpus has documents only): page-level "
                    "metrics (PageRec, page granularity) do not exist for it; pick chunk or doc",
                    "finrag ingest financebench … --pdfs DIR  (a corpus with PDF pages)")
    if what in ("retrieval", "page"):
        if scope.is_empty() or scope["n_retrieval_runs"].sum() == 0:
            if scope.height and scope["n_chunks"].sum() == 0 and scope["n_documents"].sum() > 0:
                return (f"{names} has documents but no chunks to retrieve from",
                        f"finrag chunk --dataset {first} && finrag retrieve --retriever bm25 --dataset {first}")
            return f"no retrieval run on {names}", f"finrag retrieve --retriever bm25 --dataset {first} --k 10"
    if what == "generation":
        if scope.is_empty() or scope["n_answer_runs"].sum() == 0:
            return (f"no answer run on {names}",
                    f"finrag answer --closed-book --dataset {first}  (or --retrieval-run RUN for RAG)")
        no_reference = scope.filter((pl.col("n_answer_runs") > 0) & (pl.col("n_with_reference") == 0))
        if no_reference.height:
            return (f"the questions of {', '.join(no_reference['dataset'])} have no reference answers, so no "
                    "lexical metric can score their answers (judged metrics can)",
                    "finrag judge --answer-run RUN --metrics correctness  (or ingest questions with answers)")
    if what in ("judged", "agreement"):
        if scope.is_empty() or scope["n_answer_runs"].sum() == 0:
            return (f"no answer run on {names}, so nothing to judge",
                    f"finrag answer --closed-book --dataset {first}  then  finrag judge --answer-run RUN")
        if scope["n_judge_runs"].sum() == 0:
            return (f"no judge run on the answers of {names}",
                    "finrag judge --answer-run RUN --metrics correctness")
        failures = judgment_failures(home, datasets_)
        if failures is not None and failures.height:
            f = failures.row(0, named=True)
            return (f"every {f['metric']} judgment of {f['judge_run_id']} failed ({f['n_failed']}; first error: "
                    f"{(f['first_error'] or '?')[:160]})",
                    f"finrag judge --answer-run {f['answer_run_id']} --metrics {f['metric']}  (once the endpoint "
                    "answers; failed judgments are retried)")
        if what == "agreement":
            return ("no judge run judged an answer run that has human labels",
                    "finrag import-human-labels FILE && finrag judge --answer-run LABELLED_RUN")
    if what == "costs":
        calls = query(home, "select count(*) as n from lake_llm_calls", lake=["llm_calls"])
        if calls is None or calls["n"][0] == 0:
            return ("no LLM call is in the ledger (no answer, judge, HyDE or QA-generation run yet)",
                    f"finrag answer --closed-book --dataset {first}")
    if what == "qa_generation":
        attempts = query(home, "select count(*) as n from lake_qa_generation_attempts",
                         lake=["qa_generation_attempts"])
        if attempts is None or attempts["n"][0] == 0:
            return ("no QA-generation run", f"finrag generate-qa --dataset {first}")
    return ("the lake has data the published marts do not show yet (it changed after the last build)",
            "finrag build")


# ------------------------------------------------------------------------------------------ drill-down (diagnosis)

def first_gold_ranks(home: Path, question_id: str, chunks: pl.DataFrame) -> pl.DataFrame:
    """Per retrieval run of retrieved_chunks' frame: the rank of the first gold unit at chunk, page and document
    granularity in the run's whole ranking (fct_retrieval_question_scores.first_relevant_rank at k = 0, the rank RR
    is computed from; null: none retrieved, or the question is not judged at that granularity), then the hits among
    the results shown and the results shown."""
    shown = chunks.group_by("run_id", maintain_order=True).agg(
        pl.col("chunk_hit").sum().cast(pl.Int64).alias("hits"), pl.len().cast(pl.Int64).alias("results"))
    runs, params = _in_list("run_id", shown["run_id"].to_list())
    ranks = query(home, f"""
        select run_id,
               min(first_relevant_rank) filter (where granularity = 'chunk') as first_gold_chunk,
               min(first_relevant_rank) filter (where granularity = 'page') as first_gold_page,
               min(first_relevant_rank) filter (where granularity = 'doc') as first_gold_doc
        from fct_retrieval_question_scores
        where question_id = ? and k = 0 and {runs}
        group by run_id
    """, [question_id, *params], marts=["fct_retrieval_question_scores"])
    if ranks is None:
        ranks = pl.DataFrame(schema={"run_id": pl.String, "first_gold_chunk": pl.Int32, "first_gold_page": pl.Int32,
                                     "first_gold_doc": pl.Int32})
    return shown.join(ranks, on="run_id", how="left").select(
        "run_id", "first_gold_chunk", "first_gold_page", "first_gold_doc", "hits", "results")


def prompt_chunks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """The chunks each RAG answer run put into the question's prompt (lake answers' context_chunk_ids, in prompt
    order): answer run, its retrieval run, chunk id, position in the prompt (1-based)."""
    return query(home, """
        with runs as (
            select run_id, retrieval_run_id from lake_generation_runs
            where dataset = ? and retrieval_run_id is not null
        )
        select answers.run_id as answer_run_id, runs.retrieval_run_id, context.chunk_id,
               context.prompt_position
        from lake_answers as answers
        inner join runs using (run_id)
        cross join unnest(answers.context_chunk_ids) with ordinality as context (chunk_id, prompt_position)
        where answers.question_id = ?
        order by answers.run_id, context.prompt_position
    """, [dataset, question_id], lake=["answers", "generation_runs"])


def judge_verdicts(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every judgment of the question's answers (fct_judge_scores): judge run, answer run, metric, status (ok /
    not_applicable / failed), raw and normalised score, the judge's rationale and, when it failed, the error; in the
    registry's metric order."""
    return query(home, """
        select scores.answer_run_id, scores.judge_run_id, scores.judge_model, scores.metric, scores.status,
               scores.raw_score, scores.normalized_score, scores.rationale, scores.error
        from fct_judge_scores as scores
        left join dim_metrics using (metric)
        where scores.dataset = ? and scores.question_id = ?
        order by scores.answer_run_id, scores.judge_run_id, dim_metrics.display_order, scores.metric
    """, [dataset, question_id], marts=["fct_judge_scores", "dim_metrics"])


def run_parents(home: Path) -> dict[str, list[str]]:
    """run id -> the runs it was made from (an answer run's retrieval run, a judge run's answer run), so a link
    naming a judge run also shows its answer run and that answer's retrieval run."""
    parents: dict[str, list[str]] = {}
    generation = query(home, "select run_id, retrieval_run_id from lake_generation_runs", lake=["generation_runs"])
    for r in ([] if generation is None else generation.iter_rows(named=True)):
        parents[r["run_id"]] = [r["retrieval_run_id"]] if r["retrieval_run_id"] else []
    judges = query(home, "select judge_run_id, answer_run_id from lake_judge_runs", lake=["judge_runs"])
    for r in ([] if judges is None else judges.iter_rows(named=True)):
        parents[r["judge_run_id"]] = [r["answer_run_id"]]
    return parents


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


def judge_disagreements(home: Path, judge_run_id: str, metric: str, label_set: str) -> pl.DataFrame | None:
    """The questions where one judge run's class differs from the human label's (fct_judge_human_pairs, scored
    pairs only): question, judge and human class and raw scores, the dataset and answer run (for the drill-down)."""
    return query(home, """
        select pairs.question_id, pairs.dataset, pairs.answer_run_id, pairs.judge_class, pairs.human_class,
               pairs.judge_raw_score, pairs.human_raw_score, pairs.human_label, dim_questions.question
        from fct_judge_human_pairs as pairs
        left join dim_questions on dim_questions.dataset = pairs.dataset
            and dim_questions.question_id = pairs.question_id
        where pairs.judge_run_id = ? and pairs.metric = ? and pairs.label_set = ? and pairs.is_scored
            and pairs.judge_class is distinct from pairs.human_class
        order by pairs.question_id
    """, [judge_run_id, metric, label_set], marts=["fct_judge_human_pairs", "dim_questions"])


# ---------------------------------------------------------------------------------------------------- costs

def llm_costs(home: Path) -> pl.DataFrame | None:
    """mart_llm_costs: per job run x purpose x model, calls, failures, retries, tokens, latency p50 / p95 and cost,
    newest job first."""
    return query(home, """
        select * from mart_llm_costs order by last_call_at desc, job_run_id, purpose, model
    """, marts=["mart_llm_costs"])


# ---------------------------------------------------------------------------------------------------- more marts

def evidence_overlap(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """mart_retrieval_evidence_overlap long: run x k x metric (the registry's evidence_overlap family, whose mart
    column is mean_<metric>) with the mean and n_questions; k = 0 (the whole ranking) left out."""
    registry = metric_registry(home)
    if registry is None:
        return None
    metrics = registry.filter(pl.col("family") == "evidence_overlap")["metric"].to_list()
    where, params = _in_list("dataset", datasets_)
    wide = query(home, f"""
        select * from mart_retrieval_evidence_overlap where k > 0 and {where}
        order by run_id, k
    """, params, marts=["mart_retrieval_evidence_overlap"])
    if wide is None:
        return None
    present = [m for m in metrics if f"mean_{m}" in wide.columns]
    return wide.unpivot(index=["run_id", "dataset", "retriever", "condition", "k", "n_questions"],
                        on=[f"mean_{m}" for m in present], variable_name="metric", value_name="mean") \
        .with_columns(pl.col("metric").str.strip_prefix("mean_"))


def qa_generation_runs(home: Path) -> pl.DataFrame | None:
    return query(home, """
        select generation_run_id, dataset, sum(n_attempts) as n_attempts
        from mart_generation_acceptance where topic_level = 0 and task = 'all'
        group by all order by generation_run_id
    """, marts=["mart_generation_acceptance"])


def qa_acceptance(home: Path, generation_run_id: str, topic_level: int) -> pl.DataFrame | None:
    """mart_generation_acceptance's cells of one QA-generation run at one topic level (task 'all' left out)."""
    return query(home, """
        select topic, coalesce(topic_en, topic) as topic_label, task, n_attempts, n_failed, n_generated, n_kept,
               n_dropped, acceptance_ratio, n_human_inspected, human_acceptance_ratio
        from mart_generation_acceptance
        where generation_run_id = ? and topic_level = ? and task <> 'all'
        order by topic, task
    """, [generation_run_id, topic_level], marts=["mart_generation_acceptance"])


def inspection_agreement(home: Path) -> pl.DataFrame | None:
    return query(home, "select * from mart_inspection_agreement order by generation_run_id, task",
                 marts=["mart_inspection_agreement"])


def answer_file_leaderboard(home: Path) -> pl.DataFrame | None:
    return query(home, "select * from mart_answer_file_leaderboard order by dataset, judge_run_id",
                 marts=["mart_answer_file_leaderboard"])


def answer_file_scores(home: Path, judge_run_id: str) -> pl.DataFrame | None:
    return query(home, """
        select question_id, dataset, answer_run_id, correctness_status, correctness, faithfulness_status,
               faithfulness, combined_score
        from mart_answer_file_scores where judge_run_id = ?
        order by combined_score nulls first, correctness nulls first, question_id
    """, [judge_run_id], marts=["mart_answer_file_scores"])


def judge_by_slice(home: Path, judge_run_id: str, dimension: str) -> pl.DataFrame | None:
    return query(home, """
        select metric, value, mean, mean_raw, n
        from mart_judge_by_slice where judge_run_id = ? and dimension = ?
        order by metric, value
    """, [judge_run_id, dimension], marts=["mart_judge_by_slice"])


def judge_slice_dimensions(home: Path, judge_run_id: str) -> list[str]:
    frame = query(home, "select distinct dimension from mart_judge_by_slice where judge_run_id = ? order by 1",
                  [judge_run_id], marts=["mart_judge_by_slice"])
    return [] if frame is None else frame["dimension"].to_list()
