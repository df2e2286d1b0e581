"""The retrieval metric models are incremental, keyed by run id: a build recomputes only the runs that are new or
changed (re-landed run, re-landed qrels), and a run removed from the lake leaves every retrieval model."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import pytrec_eval

from python_jobs.core.lake import Lake
from support.cli import dbt_build
from support.trec import pytrec_means, read_qrels, read_trec_run
from support.warehouse import warehouse_query

INCREMENTAL_MODELS = ("int_retrieval_hits", "int_retrieval_depths", "fct_retrieval_question_scores",
                      "mart_retrieval_leaderboard", "mart_retrieval_by_slice")


def build(home: Path) -> None:
    # models only: the data and unit tests of these models run in the other retrieval tests' builds
    dbt_build(home, "--select", "+mart_retrieval_by_slice", "+mart_oracle_gap",
              "--exclude-resource-type", "test", "--exclude-resource-type", "unit_test")


def board(home: Path, run_id: str) -> dict[tuple[str, str, int], tuple[float, int, float, int]]:
    rows = warehouse_query(home, f"""
        select granularity, metric, k, mean, n_questions, mean_complete, n_questions_complete
        from mart_retrieval_leaderboard where run_id = '{run_id}'""")
    return {(g, m, k): tuple(rest) for g, m, k, *rest in rows}


def chunk_means(home: Path, run_id: str) -> dict[str, float]:
    """The leaderboard's chunk-level means under pytrec_eval's names (k = 0: map, recip_rank, ndcg)."""
    names = {"map": "map_cut", "mrr": "recip_rank", "ndcg": "ndcg_cut", "precision": "P", "recall": "recall"}
    out = {}
    for (granularity, metric, k), (mean, n_questions, *_rest) in board(home, run_id).items():
        if granularity != "chunk" or metric not in names:
            continue
        name = names[metric]
        out[{"map_cut": "map", "ndcg_cut": "ndcg"}.get(name, name) if k == 0 else f"{name}_{k}"] = mean
        out["num_q"] = float(n_questions)
    out.pop("recip_rank_1", None)
    return {k: v for k, v in out.items() if not k.startswith("recip_rank_")}


def assert_pytrec(home: Path, run_id: str, qrels: Path, run: Path) -> None:
    ours = chunk_means(home, run_id)
    reference = pytrec_means(read_qrels(qrels), read_trec_run(run))
    assert set(reference) <= set(ours)
    for name, value in reference.items():
        assert ours[name] == pytest.approx(value, abs=1e-9, rel=0), (run_id, name)


@pytest.mark.slow
def test_incremental_builds_recompute_only_changed_runs(home, finrag, shared_data):
    fixtures = shared_data / "trec_eval_fixtures"
    finrag("ingest", "trec-qrels", str(fixtures / "qrels.test"), "--dataset", "trec_test")
    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec_test", "--run-id", "A")
    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec_test", "--run-id", "COPY")
    build(home)
    before_a, before_copy = board(home, "A"), board(home, "COPY")
    assert before_a == before_copy and before_a[("chunk", "map", 0)][1] == 3

    # Rewrite A's results behind the lake's back (same run row, same created_at, reversed scores): a build that
    # re-read A would change its metrics. Then add a run B: only B may be computed.
    lake = Lake(home)
    results = lake.partition_path("retrieval_results", "A")
    pl.read_parquet(results).with_columns(-pl.col("score")).write_parquet(results)
    finrag("ingest", "trec-run", str(fixtures / "results-302.test"), "--dataset", "trec_test", "--run-id", "B")
    build(home)
    assert board(home, "A") == before_a
    assert board(home, "COPY") == before_copy
    assert_pytrec(home, "B", fixtures / "qrels.test", fixtures / "results-302.test")
    # B's complete variant counts the qrels topics 301 and 303 it has no results for as 0
    mean, n_questions, mean_complete, n_questions_complete = board(home, "B")[("chunk", "map", 0)]
    assert (n_questions, n_questions_complete) == (1, 3)
    assert mean_complete == pytest.approx(mean / 3, abs=1e-15)

    # Re-land A (new created_at) from another file, re-land the dataset's qrels (only topic 302), drop B.
    finrag("ingest", "trec-run", str(fixtures / "results-302.test"), "--dataset", "trec_test", "--run-id", "A")
    finrag("ingest", "trec-qrels", str(fixtures / "qrels-302.test"), "--dataset", "trec_test")
    assert lake.drop_partition("retrieval_results", "B") and lake.drop_partition("retrieval_runs", "B")
    build(home)
    assert_pytrec(home, "A", fixtures / "qrels-302.test", fixtures / "results-302.test")
    # COPY's run did not change, its qrels did: recomputed against topic 302 alone
    assert_pytrec(home, "COPY", fixtures / "qrels-302.test", fixtures / "results.test")
    assert chunk_means(home, "COPY")["num_q"] == 1
    for model in INCREMENTAL_MODELS:
        assert warehouse_query(home, f"select count(*) from {model} where run_id = 'B'") == [(0,)], model
        runs = {r for (r,) in warehouse_query(home, f"select distinct run_id from {model}")}
        assert runs == {"A", "COPY"}, model


def test_pytrec_reference_sanity():
    """The reference helper itself: one query, hand-worked (AP = (1/2 + 2/3) / 2)."""
    qrels = {"q": {"a": 1, "b": 1, "c": 0}}
    run = {"q": {"c": 3.0, "a": 2.0, "b": 1.0}}
    means = pytrec_means(qrels, run)
    assert means["map"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-15)
    assert means["recip_rank"] == 0.5
    assert means["P_1"] == 0.0 and means["P_3"] == pytest.approx(2 / 3)
    assert isinstance(pytrec_eval.RelevanceEvaluator, type)
