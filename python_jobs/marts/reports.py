"""`finrag report --run-id ID`: a retrieval run's metrics, read from the marts the last build published.

    --format trec    trec_eval's layout, `measure<TAB>all<TAB>value`: num_q, num_ret, num_rel, num_rel_ret, then
                     each retrieval metric that has a trec_eval name in the metric registry (dim_metrics, in its
                     display order): its whole-ranking measure (trec_eval_name: map, recip_rank, ndcg) and its cut
                     measures <trec_eval_cut_name>_k for every k > 0 of var retrieval_ks (map_cut_k, ndcg_cut_k, P_k,
                     recall_k), at full precision (12 decimals instead of trec_eval's 4)
    --format table   the leaderboard rows (or, with --slice, the by-slice rows) as a table
    --format json    the same rows as JSON

`finrag report --judged [--run-id JUDGE_OR_ANSWER_RUN]`: every judged mean (mart_judge_leaderboard's) with how far it
can be trusted, mart_judge_trust's state beside it - calibrated (the PPI++ or human mean of the human metric it
predicts, with its interval), uncalibrated, or no better than chance against humans (kappa and its interval) -
written out by python_jobs/marts/trust.py, the one wording the demo's printout and the dashboard use too. With
`--slice DIMENSION`: the judge runs' calibrations per stratum of that dimension and their stratified combination
(mart_judge_calibrated_by_slice), each in words (slice_trust_note).

Nothing is computed here: every number is a mart value, so the report and the SQL marts cannot disagree; and no
measure name is written here: they are the registry's, so a metric given a trec_eval name there is reported.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.marts.published import select
from python_jobs.marts.trust import SLICE_TRUST_COLUMNS, TRUST_COLUMNS, slice_trust_note, trust_note

DEFAULT_TARGET = "dev"  # profiles.yml: DuckDB


def query_marts(sql: str, params: Sequence[object] = (), target: str = DEFAULT_TARGET) -> pl.DataFrame:
    """One query of the published marts (finrag report, finrag compare), the state every reader sees; on the
    `spark` target, of the Spark warehouse's tables (the SQL here is written to run on both)."""
    if target == "spark":
        from python_jobs.warehouse.spark_session import query

        return query(sql, params)
    return select(sql, params)


def leaderboard(run_id: str, target: str = DEFAULT_TARGET) -> pl.DataFrame:
    frame = query_marts(
        "select run_id, granularity, metric, k, mean, n_questions, mean_complete, n_questions_complete "
        "from mart_retrieval_leaderboard where run_id = ? order by granularity, metric, k",
        [run_id], target,
    )
    if frame.is_empty():
        known = query_marts("select count(*) as n from mart_retrieval_leaderboard where run_id = ?", [run_id],
                            target)
        raise InputError(
            f"run {run_id!r} has no metrics in mart_retrieval_leaderboard"
            + ("" if known["n"][0] else " (unknown run, no qrels for its questions, or `finrag build` not run since)"),
            field="run_id",
        )
    return frame


def trec_measures(target: str = DEFAULT_TARGET) -> list[tuple[str, str | None, str | None]]:
    """(metric, trec_eval whole-ranking measure, trec_eval cut measure prefix) of every retrieval metric the
    registry gives a trec_eval name (dim_metrics), in its display order."""
    frame = query_marts(
        "select metric, trec_eval_name, trec_eval_cut_name from dim_metrics where family = 'retrieval' "
        "and (trec_eval_name is not null or trec_eval_cut_name is not null) order by display_order", target=target
    )
    return [tuple(row) for row in frame.iter_rows()]


def trec_lines(run_id: str, granularity: str, complete: bool, target: str = DEFAULT_TARGET) -> list[tuple[str, str]]:
    """(measure, value) pairs: the counts, then each metric's whole-ranking measure and cut measures, metric by
    metric in the registry's order (trec_eval's names; its own output groups them differently)."""
    board = leaderboard(run_id, target).filter(pl.col("granularity") == granularity)
    if board.is_empty():
        raise InputError(f"run {run_id!r} has no {granularity}-level metrics (no qrels at that granularity)",
                         field="granularity")
    value_col, n_col = ("mean_complete", "n_questions_complete") if complete else ("mean", "n_questions")
    counts = query_marts(
        "select sum(n_retrieved) as num_ret, sum(n_relevant) as num_rel, sum(n_relevant_retrieved) as num_rel_ret "
        "from fct_retrieval_question_scores where run_id = ? and granularity = ? and k = 0"
        + ("" if complete else " and question_in_run"),
        [run_id, granularity], target,
    ).row(0, named=True)
    lines = [("runid", run_id), ("num_q", str(int(board[n_col].max()))),
             *((name, str(int(counts[name] or 0))) for name in ("num_ret", "num_rel", "num_rel_ret"))]
    for metric, whole, cut in trec_measures(target):
        means = dict(board.filter(pl.col("metric") == metric).select("k", value_col).iter_rows())
        if whole and 0 in means:
            lines.append((whole, f"{means[0]:.12f}"))
        if cut:
            lines.extend((f"{cut}_{k}", f"{means[k]:.12f}") for k in sorted(means) if k > 0)
    return lines


def slices(run_id: str, dimensions: Sequence[str], target: str = DEFAULT_TARGET) -> pl.DataFrame:
    leaderboard(run_id, target)  # a clear error for an unknown run
    marks = ", ".join("?" for _ in dimensions)
    return query_marts(
        "select run_id, dimension, dimension_value, granularity, metric, k, mean, n_questions, mean_complete, "
        "n_questions_complete from mart_retrieval_by_slice "
        f"where run_id = ? and dimension in ({marks}) order by dimension, dimension_value, granularity, metric, k",
        [run_id, *dimensions], target,
    )


def judged_means(run_id: str | None = None, target: str = DEFAULT_TARGET) -> pl.DataFrame:
    """mart_judge_trust's rows (of one judge run, or of the judge runs over one answer run), with `trust`: the
    state in words (trust_note)."""
    where, params = ("where judge_run_id = ? or answer_run_id = ?", [run_id, run_id]) if run_id else ("", [])
    frame = query_marts(f"select {', '.join(TRUST_COLUMNS)} from mart_judge_trust {where} "
                        "order by answer_run_id, judge_run_id, metric, label_set", params, target)
    if run_id and frame.is_empty():
        raise InputError(f"no judged means of run {run_id!r} in mart_judge_trust (not a judge run or an answer run "
                         "with one, or `finrag build` not run since)", field="run_id")
    return frame.with_columns(pl.Series("trust", [trust_note(r) for r in frame.iter_rows(named=True)], pl.String))


def judged_means_by_slice(run_id: str | None, dimensions: Sequence[str],
                          target: str = DEFAULT_TARGET) -> pl.DataFrame:
    """mart_judge_calibrated_by_slice's rows of judged predictors (of one judge run, or of the judge runs over one
    answer run) by the given slice dimensions - each stratum, then the strata combined - with `trust`: the row in
    words (slice_trust_note)."""
    marks = ", ".join("?" for _ in dimensions)
    where, params = ("and (predictor_run_id = ? or answer_run_id = ?)", [run_id, run_id]) if run_id else ("", [])
    frame = query_marts(
        f"select {', '.join(SLICE_TRUST_COLUMNS)} from mart_judge_calibrated_by_slice "
        f"where predictor_family = 'judged' and dimension in ({marks}) {where} "
        "order by answer_run_id, predictor_run_id, predictor, label_set, human_metric, dimension, grain desc, value",
        [*dimensions, *params], target)
    if frame.is_empty():
        raise InputError(f"no calibrated judged means by {', '.join(dimensions)}"
                         + (f" of run {run_id!r}" if run_id else "")
                         + " in mart_judge_calibrated_by_slice (no judge run calibrated against human labels: "
                         "`finrag calibrate`, then `finrag build`)", field="slice")
    return frame.with_columns(pl.Series("trust", [slice_trust_note(r) for r in frame.iter_rows(named=True)],
                                        pl.String))
