"""`finrag report --run-id ID`: a retrieval run's metrics, read from the marts the last `dbt build` published.

    --format trec    trec_eval's layout, `measure<TAB>all<TAB>value` (num_q, num_ret, num_rel, num_rel_ret, map,
                     recip_rank, P_k, recall_k, ndcg, ndcg_cut_k, map_cut_k for every k of var retrieval_ks), at
                     full precision (12 decimals instead of trec_eval's 4)
    --format table   the leaderboard rows (or, with --slice, the by-slice rows) as a table
    --format json    the same rows as JSON

Nothing is computed here: every number is a mart value, so the report and the SQL marts cannot disagree.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import duckdb
import polars as pl

from python_jobs.core.config import warehouse_db, warehouse_home
from python_jobs.core.errors import InputError

GRANULARITIES = ("chunk", "page", "doc")
# mart metric -> trec_eval measure prefix (k = 0 is trec_eval's whole-ranking measure)
TREC_MEASURES = {"map": ("map", "map_cut"), "mrr": ("recip_rank", None), "ndcg": ("ndcg", "ndcg_cut"),
                 "precision": (None, "P"), "recall": (None, "recall")}
TREC_ORDER = ("map", "recip_rank", "P", "recall", "ndcg", "ndcg_cut", "map_cut")


def _query(sql: str, params: Sequence[object] = ()) -> pl.DataFrame:
    """One read-only query on a connection closed at once, so a report never blocks `dbt build`."""
    db = warehouse_db(warehouse_home())
    if not db.exists():
        raise InputError(f"no warehouse at {db}: run `finrag build` first")
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.sql(sql, params=list(params)).pl()
    except duckdb.CatalogException as exc:
        raise InputError(f"the retrieval marts are missing ({str(exc).splitlines()[0]}): run `finrag build`") from None
    finally:
        con.close()


def leaderboard(run_id: str) -> pl.DataFrame:
    frame = _query(
        "select run_id, granularity, metric, k, mean, n_questions, mean_complete, n_questions_complete "
        "from mart_retrieval_leaderboard where run_id = ? order by granularity, metric, k",
        [run_id],
    )
    if frame.is_empty():
        known = _query("select count(*) as n from mart_retrieval_leaderboard where run_id = ?", [run_id])
        raise InputError(
            f"run {run_id!r} has no metrics in mart_retrieval_leaderboard"
            + ("" if known["n"][0] else " (unknown run, no qrels for its questions, or `finrag build` not run since)"),
            field="run_id",
        )
    return frame


def trec_lines(run_id: str, granularity: str, complete: bool) -> list[tuple[str, str]]:
    """(measure, value) pairs in trec_eval's order."""
    board = leaderboard(run_id).filter(pl.col("granularity") == granularity)
    if board.is_empty():
        raise InputError(f"run {run_id!r} has no {granularity}-level metrics (no qrels at that granularity)",
                         field="granularity")
    value_col, n_col = ("mean_complete", "n_questions_complete") if complete else ("mean", "n_questions")
    counts = _query(
        "select sum(n_retrieved) as num_ret, sum(n_relevant) as num_rel, sum(n_relevant_retrieved) as num_rel_ret "
        "from fct_retrieval_question_scores where run_id = ? and granularity = ? and k = 0"
        + ("" if complete else " and question_in_run"),
        [run_id, granularity],
    ).row(0, named=True)
    measures: dict[str, list[tuple[int, float]]] = {name: [] for name in TREC_ORDER}
    for row in board.iter_rows(named=True):
        whole, cut = TREC_MEASURES.get(row["metric"], (None, None))
        if row["k"] == 0 and whole:
            measures[whole].append((0, row[value_col]))
        elif row["k"] > 0 and cut:
            measures[cut].append((row["k"], row[value_col]))
    lines = [("runid", run_id), ("num_q", str(int(board[n_col].max()))),
             *((name, str(int(counts[name] or 0))) for name in ("num_ret", "num_rel", "num_rel_ret"))]
    for name in TREC_ORDER:
        for k, value in sorted(measures[name]):
            lines.append((f"{name}_{k}" if k else name, f"{value:.12f}"))
    return lines


def slices(run_id: str, dimensions: Sequence[str]) -> pl.DataFrame:
    leaderboard(run_id)  # a clear error for an unknown run
    marks = ", ".join("?" for _ in dimensions)
    return _query(
        "select run_id, dimension, dimension_value, granularity, metric, k, mean, n_questions, mean_complete, "
        "n_questions_complete from mart_retrieval_by_slice "
        f"where run_id = ? and dimension in ({marks}) order by dimension, dimension_value, granularity, metric, k",
        [run_id, *dimensions],
    )
