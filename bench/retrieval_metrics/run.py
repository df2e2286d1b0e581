"""Benchmark: the dbt retrieval metric models versus ranx and pytrec_eval on the same synthetic run.

    .venv/bin/python bench/retrieval_metrics/run.py --questions 10000
    .venv/bin/python bench/retrieval_metrics/run.py --questions 100000 --incremental-runs 0
    .venv/bin/python bench/retrieval_metrics/run.py --questions 10000 --incremental-runs 20

1. Synthetic TREC-style qrels (1-5 relevant docs per question, graded 1-3, plus 2 judged non-relevant) and a run of
   `--results` (100) scored docs per question are landed in a fresh warehouse home with `Lake.land` (validated
   like any ingest).
2. `dbt build` of the metric models (every granularity x metric x k, plus their data tests) is timed as a
   subprocess (dbt start-up included) and, from run_results.json, the models' own execution time.
3. ranx and pytrec_eval compute the trec_eval measures of the same run (map, recip_rank, ndcg, and P / recall /
   ndcg_cut / map_cut at every k) from the same frames; building their dicts / objects is included in their time,
   the Parquet read is not. ranx is timed on its second call (the first, printed too, includes numba's JIT).
   The dbt means are checked against pytrec_eval (max abs difference printed).
4. With --incremental-runs N: N more runs are landed and built, then one more run is added and the incremental
   build is timed against a --full-refresh build of the same N + 2 runs.

Not run in CI (minutes at 100k questions); prints the wall times and ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT))

from python_jobs.core.lake import Lake  # noqa: E402

KS = (1, 3, 5, 10, 20, 100)
METRIC_MODELS = ("int_retrieval_judgments", "int_retrieval_ranked_units", "fct_retrieval_question_scores",
                 "mart_retrieval_leaderboard")
SELECT = ["--select", "+mart_retrieval_leaderboard", "--indirect-selection", "cautious"]
DATASET = "bench"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def make_qrels(n_questions: int, seed: int) -> pl.DataFrame:
    """Per question: 1-5 relevant docs (grades 1-3) and 2 judged non-relevant, drawn from doc slots 0..299."""
    rng = np.random.default_rng(seed)
    n_rel = rng.integers(1, 6, n_questions)
    per_q = n_rel + 2
    q = np.repeat(np.arange(n_questions), per_q)
    ordinal = np.arange(per_q.sum()) - np.repeat(np.cumsum(per_q) - per_q, per_q)
    # distinct slots per question: a random offset plus a stride (coprime with 300) times the ordinal
    offset = np.repeat(rng.integers(0, 300, n_questions), per_q)
    slot = (offset + ordinal * 37) % 300
    relevance = np.where(ordinal < np.repeat(n_rel, per_q), rng.integers(1, 4, len(q)), 0)
    qid = pl.Series(q).cast(pl.String)
    return pl.DataFrame({
        "question_id": "q" + qid,
        "evidence_ordinal": ordinal.astype(np.int32),
        "dataset": DATASET,
        "doc_id": "q" + qid + "_d" + pl.Series(slot).cast(pl.String),
        "relevance": relevance.astype(np.int32),
    }).with_columns(pl.col("doc_id").alias("chunk_id"))


def make_run(n_questions: int, n_results: int, run_id: str, seed: int) -> pl.DataFrame:
    """Per question: doc slots 0..n_results-1 in a random order, scores strictly decreasing with the position."""
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_questions), n_results)
    slot = np.argsort(rng.random((n_questions, n_results)), axis=1).ravel()
    position = np.tile(np.arange(n_results), n_questions)
    qid = pl.Series(q).cast(pl.String)
    return pl.DataFrame({
        "run_id": run_id,
        "question_id": "q" + qid,
        "rank": (position + 1).astype(np.int32),
        "doc_id": "q" + qid + "_d" + pl.Series(slot).cast(pl.String),
        "score": (n_results - position) + rng.random(len(q)) * 0.5,
    }).with_columns(pl.col("doc_id").alias("chunk_id"))


def run_frame(run_id: str) -> pl.DataFrame:
    return pl.DataFrame([{"run_id": run_id, "dataset": DATASET, "retriever": "synthetic", "condition": "full",
                          "k": 100, "config_hash": run_id, "source": "trec"}])


def land_run(lake: Lake, run_id: str, n_questions: int, n_results: int, seed: int) -> pl.DataFrame:
    results = make_run(n_questions, n_results, run_id, seed)
    lake.land([("retrieval_runs", run_id, run_frame(run_id)), ("retrieval_results", run_id, results)])
    return results


def dbt_build(home: Path, *extra: str) -> tuple[float, float]:
    """(wall seconds of the `finrag build` subprocess, summed execution time of the metric models)."""
    env = {**os.environ, "FINRAG_HOME": str(home), "DBT_SEND_ANONYMOUS_USAGE_STATS": "False"}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "python_jobs.cli", "--home", str(home), "build", "--quiet",
                           *SELECT, *extra], cwd=PROJECT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        sys.exit(f"dbt build failed:\n{proc.stdout}\n{proc.stderr}")
    results = json.loads((home / "dbt_target" / "run_results.json").read_text())["results"]
    models = sum(r["execution_time"] for r in results if r["unique_id"].split(".")[-1] in METRIC_MODELS
                 and r["unique_id"].startswith("model."))
    return wall, models


def to_dicts(qrels: pl.DataFrame, results: pl.DataFrame) -> tuple[dict, dict]:
    q: dict[str, dict[str, int]] = {}
    for qid, doc, rel in qrels.select("question_id", "doc_id", "relevance").iter_rows():
        q.setdefault(qid, {})[doc] = rel
    r: dict[str, dict[str, float]] = {}
    for qid, doc, score in results.select("question_id", "doc_id", "score").iter_rows():
        r.setdefault(qid, {})[doc] = score
    return q, r


def time_pytrec(qrels: pl.DataFrame, results: pl.DataFrame) -> tuple[float, dict[str, float]]:
    import pytrec_eval

    measures = {"map", "recip_rank", "ndcg", *(f"{m}.{','.join(map(str, KS))}" for m in ("P", "recall", "ndcg_cut",
                                                                                        "map_cut"))}
    t0 = time.perf_counter()
    q, r = to_dicts(qrels, results)
    per_query = pytrec_eval.RelevanceEvaluator(q, measures).evaluate(r)
    names = next(iter(per_query.values())).keys()
    means = {name: statistics.fmean(v[name] for v in per_query.values()) for name in names}
    return time.perf_counter() - t0, means


def time_ranx(qrels: pl.DataFrame, results: pl.DataFrame) -> tuple[float, float]:
    """(first call, second call): the first includes numba's JIT compilation (cached on disk by later processes)."""
    from ranx import Qrels, Run, evaluate

    metrics = ["map", "mrr", "ndcg", *(f"{m}@{k}" for k in KS for m in ("precision", "recall", "ndcg", "map"))]
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        q, r = to_dicts(qrels, results)
        evaluate(Qrels.from_dict(q), Run.from_dict(r), metrics)
        times.append(time.perf_counter() - t0)
    return times[0], times[1]


def dbt_means(home: Path, run_id: str) -> dict[str, float]:
    import duckdb

    names = {"map": "map_cut", "mrr": "recip_rank", "ndcg": "ndcg_cut", "precision": "P", "recall": "recall"}
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        rows = con.execute("select metric, k, mean from mart_retrieval_leaderboard "
                           "where run_id = ? and granularity = 'chunk'", [run_id]).fetchall()
    finally:
        con.close()
    out = {}
    for metric, k, mean in rows:
        if metric in names:
            name = names[metric]
            out[{"map_cut": "map", "ndcg_cut": "ndcg"}.get(name, name) if k == 0 else f"{name}_{k}"] = mean
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--results", type=int, default=100)
    ap.add_argument("--incremental-runs", type=int, default=0,
                    help="N: also land N more runs, then time adding one more (incremental vs full refresh)")
    ap.add_argument("--home", type=Path, default=None, help="warehouse home (default: a temp dir, removed after)")
    ap.add_argument("--skip-references", action="store_true", help="skip ranx / pytrec_eval")
    args = ap.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="finrag-bench-"))
    try:
        lake = Lake(home)
        n = args.questions
        t0 = time.perf_counter()
        qrels = make_qrels(n, seed=1)
        lake.land([("evidence", DATASET, qrels)])
        results = land_run(lake, "run_000", n, args.results, seed=100)
        log(f"landed {qrels.height:,} qrels and {results.height:,} results in {time.perf_counter() - t0:.1f}s")

        wall, models = dbt_build(home)
        print(f"questions={n} results/question={args.results} rows={results.height:,}")
        print(f"dbt build (metric models + tests, 1 run): wall {wall:.2f}s, metric models' execution {models:.2f}s")
        if not args.skip_references:
            t_pytrec, means = time_pytrec(qrels, results)
            t_ranx_cold, t_ranx = time_ranx(qrels, results)
            ours = dbt_means(home, "run_000")
            diff = max(abs(ours[name] - value) for name, value in means.items())
            print(f"pytrec_eval: {t_pytrec:.2f}s   ranx: {t_ranx:.2f}s (first call, with JIT: {t_ranx_cold:.2f}s)   "
                  f"(max |dbt - pytrec_eval| over {len(means)} measures: {diff:.2e})")
            print(f"ratio dbt wall / ranx = {wall / t_ranx:.2f}   dbt wall / pytrec_eval = {wall / t_pytrec:.2f}")
            print(f"ratio dbt models / ranx = {models / t_ranx:.2f}   dbt models / pytrec_eval = {models / t_pytrec:.2f}")

        if args.incremental_runs:
            t0 = time.perf_counter()
            for i in range(1, args.incremental_runs + 1):
                land_run(lake, f"run_{i:03d}", n, args.results, seed=100 + i)
            log(f"landed {args.incremental_runs} more runs in {time.perf_counter() - t0:.1f}s")
            wall_n, models_n = dbt_build(home)
            print(f"dbt build adding {args.incremental_runs} runs to 1: wall {wall_n:.2f}s, models {models_n:.2f}s")
            last = args.incremental_runs + 1
            land_run(lake, f"run_{last:03d}", n, args.results, seed=100 + last)
            wall_inc, models_inc = dbt_build(home)
            wall_full, models_full = dbt_build(home, "--full-refresh")
            print(f"one run added to {last}: incremental build wall {wall_inc:.2f}s (models {models_inc:.2f}s); "
                  f"full refresh of {last + 1} runs wall {wall_full:.2f}s (models {models_full:.2f}s)")
            print(f"ratio incremental / full: wall {wall_inc / wall_full:.3f}, models {models_inc / models_full:.3f}")
    finally:
        if args.home is None:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
