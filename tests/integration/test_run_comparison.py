"""mart_run_comparison and `finrag compare` on real runs, against the references: the FinColBERT run of the
FinanceRAG challenge against a bm25 run over FinanceRAG's FinanceBench qrels (45 questions), built by dbt and
printed by `finrag compare`, checked against

- ranx's `compare` on the same two runs: its per-question scores equal the mart's (1e-9), its paired t-test
  ("student", scipy's ttest_rel) equals p_ttest to 1e-9, and its Fisher randomization test ("fisher", 10,000
  permutations) agrees with p_randomization within Monte-Carlo error. Not for P@10: its differences are tenths, not
  exact in binary, and ranx compares float means without a tolerance, so a sign flip that ties the observed
  difference in tenths is lost to a last-bit difference (here ranx says ~0.02 where the exact p is 0.064);
- scipy.stats.ttest_rel on the per-question scores (1e-9);
- the exact randomization p of P@10 and Recall@10, whose per-question differences are multiples of 1/10 and 1/2:
  all 2^45 sign flips counted by the distribution of their sum (exact integer arithmetic), within Monte-Carlo error.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from support.cli import dbt_build
from support.trec import read_financerag_csv, read_qrels, read_trec_run
from support.warehouse import run_comparison_settings, warehouse_query

DATASET = "financerag_financebench"
COLBERT = "fincolbert_financebench"
# ranx metric -> (the mart's metric, k); chunk granularity (the run's docno, FinanceRAG's corpus ids)
RANX_METRICS = {
    "ndcg@10": ("ndcg", 10), "map@10": ("map", 10), "mrr@10": ("mrr", 10), "recall@10": ("recall", 10),
    "precision@10": ("precision", 10), "ndcg": ("ndcg", 0), "map": ("map", 0), "mrr": ("mrr", 0),
}
# the metrics whose per-question differences are multiples of 1/scale at k = 10 (FinanceBench's qrels: R <= 2)
EXACT_SCALES = {"precision": 10, "recall": 2}
RANX_FLOAT_TIES = {"precision@10"}


def exact_sign_flip_p(diffs: list[float], scale: int) -> float:
    """Two-sided randomization p over all 2^n sign flips, for differences that are multiples of 1/scale: the
    distribution of sum(s_i * c_i) over the sign vectors, built by convolution on integers."""
    ints = [round(d * scale) for d in diffs]
    assert all(abs(i / scale - d) < 1e-9 for i, d in zip(ints, diffs, strict=True))
    ways = Counter({0: 1})
    for c in ints:
        nxt: Counter = Counter()
        for total, count in ways.items():
            nxt[total + c] += count
            nxt[total - c] += count
        ways = nxt
    observed = abs(sum(ints))
    return sum(count for total, count in ways.items() if abs(total) >= observed) / 2 ** len(ints)


def monte_carlo_tolerance(p: float, draws: int, estimates: int = 1) -> float:
    """4.5 standard errors of (the difference of) Monte-Carlo p estimates, plus the (hits + 1) / (draws + 1) shift."""
    return 4.5 * math.sqrt(estimates * max(p * (1 - p), 1e-4) / draws) + 2 / draws


@pytest.mark.slow
def test_fincolbert_vs_bm25_matches_ranx_scipy_and_exact(home: Path, finrag, shared_data: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = shared_data / "financerag_icaif24"
    finrag("ingest", "beir", "--dir", str(root / "FinanceBench"), "--dataset", DATASET)
    run_csv = root / "runs" / "fincolbert_combined_results.csv"
    finrag("ingest", "trec-run", str(run_csv), "--format", "financerag-csv", "--dataset", DATASET,
           "--run-id", COLBERT, "--only-known-questions")
    bm25 = finrag("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "100").stdout.strip()
    dbt_build(home, "--select", "+mart_run_comparison", "dim_metrics", "--indirect-selection", "cautious")

    out = finrag("compare", "--run-a", bm25, "--run-b", COLBERT, "--granularity", "chunk", "--k", "10", "--k", "0",
                 "--format", "json").stdout
    rows = {(r["metric"], r["k"]): r for r in json.loads(out)}
    assert {key for key in rows if key[0] != "doc_rec"} >= set(RANX_METRICS.values())

    # the same two rankings for ranx: bm25 as exported (scores from ranks, so ranx sorts them in the run's order)
    exported = tmp_path / "bm25.trec"
    finrag("export-run", "--run-id", bm25, "--out", str(exported))
    qrels = read_qrels(root / "FinanceBench" / "qrels.tsv", sep="\t", skip_header=True)
    runs = {"bm25": {q: d for q, d in read_trec_run(exported).items() if q in qrels},
            "colbert": {q: d for q, d in read_financerag_csv(run_csv).items() if q in qrels}}
    assert len(qrels) == 45 and all(set(run) == set(qrels) for run in runs.values())

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))  # ranx's jitted functions cache here, not in .venv
    from ranx import Qrels, Run, compare, evaluate

    ranx_qrels = Qrels.from_dict(qrels)
    ranx_runs = [Run.from_dict(runs["bm25"], name="bm25"), Run.from_dict(runs["colbert"], name="colbert")]
    questions = list(ranx_qrels.keys())
    scores = {}  # (run, metric, k) -> {question: value} from the mart's long table
    for run_id, question, metric, k, value in warehouse_query(home, f"""
            select run_id, question_id, metric, k, value from fct_question_metric_scores
            where granularity = 'chunk' and k in (0, 10) and run_id in ('{bm25}', '{COLBERT}')"""):
        scores.setdefault((run_id, metric, k), {})[question] = value
    per_question = {}
    for name, (metric, k) in RANX_METRICS.items():
        for run, run_id in zip(ranx_runs, (bm25, COLBERT), strict=True):
            ranx_values = evaluate(ranx_qrels, run, name, return_mean=False)
            ours = [scores[(run_id, metric, k)][q] for q in questions]
            np.testing.assert_allclose(ours, ranx_values, rtol=0, atol=1e-9, err_msg=f"{name} {run_id}")
            per_question[(run.name, name)] = np.asarray(ours)

    settings = run_comparison_settings()
    flips = settings["sign_flips"]
    fisher = compare(ranx_qrels, ranx_runs, list(RANX_METRICS), stat_test="fisher", n_permutations=flips,
                     random_seed=42, max_p=0.05).comparisons[frozenset(("bm25", "colbert"))]
    student = compare(ranx_qrels, ranx_runs, list(RANX_METRICS), stat_test="student",
                      max_p=0.05).comparisons[frozenset(("bm25", "colbert"))]
    for name, (metric, k) in RANX_METRICS.items():
        row = rows[(metric, k)]
        a, b = per_question[("bm25", name)], per_question[("colbert", name)]
        assert row["n_questions"] == 45 and not row["randomization_exact"]
        assert row["mean_a"] == pytest.approx(a.mean(), abs=1e-12)
        assert row["mean_b"] == pytest.approx(b.mean(), abs=1e-12)
        assert row["delta"] == pytest.approx(b.mean() - a.mean(), abs=1e-12)
        expected_wins = (int((b > a).sum()), int((b == a).sum()), int((b < a).sum()))
        assert (row["wins"], row["ties"], row["losses"]) == expected_wins
        assert row["ci_low"] <= row["delta"] <= row["ci_high"]
        assert row["p_ttest"] == pytest.approx(scipy.stats.ttest_rel(b, a).pvalue, abs=1e-9, rel=0), name
        assert row["p_ttest"] == pytest.approx(student[name]["p_value"], abs=1e-9, rel=0), name
        if name not in RANX_FLOAT_TIES:
            ranx_p = fisher[name]["p_value"]
            assert abs(row["p_randomization"] - ranx_p) <= monte_carlo_tolerance(ranx_p, flips, 2), (name, ranx_p)
        if metric in EXACT_SCALES and k == 10:
            exact = exact_sign_flip_p(list(b - a), EXACT_SCALES[metric])
            assert abs(row["p_randomization"] - exact) <= monte_carlo_tolerance(exact, flips), (name, exact)
    # Holm over the pair's metrics at chunk / k = 10: the step-down of the sorted randomization p-values
    at_10 = sorted((r for r in json.loads(out) if r["k"] == 10), key=lambda r: (r["p_randomization"], r["metric"]))
    running = 0.0
    for rank, r in enumerate(at_10):
        running = max(running, min(1.0, (len(at_10) - rank) * r["p_randomization"]))
        assert r["p_holm"] == pytest.approx(running, abs=1e-12), r["metric"]

    # the other way round: the same comparison mirrored
    mirrored = {(r["metric"], r["k"]): r for r in json.loads(finrag(
        "compare", "--run-a", COLBERT, "--run-b", bm25, "--granularity", "chunk", "--k", "10", "--k", "0",
        "--format", "json").stdout)}
    for key, row in rows.items():
        back = mirrored[key]
        assert (back["mean_a"], back["mean_b"], back["delta"]) == (row["mean_b"], row["mean_a"], -row["delta"])
        assert (back["wins"], back["losses"], back["ci_low"], back["ci_high"]) == (
            row["losses"], row["wins"], -row["ci_high"], -row["ci_low"])
        assert (back["p_ttest"], back["p_randomization"], back["p_holm"]) == (
            row["p_ttest"], row["p_randomization"], row["p_holm"])

    # the table: the pair, then a line per metric; errors name what is wrong (exit 2)
    table = finrag("compare", "--run-a", bm25, "--run-b", COLBERT, "--k", "10", "--metric", "ndcg").stdout
    assert f"A = {bm25}  B = {COLBERT}" in table and "p_randomization" in table
    assert f"{rows[('ndcg', 10)]['delta']:.4f}" in table and "chunk" in table and "doc" in table
    unknown = finrag("compare", "--run-a", bm25, "--run-b", "NOPE", check=False)
    assert unknown.returncode == 2 and "'NOPE'" in unknown.stderr
    wrong_metric = finrag("compare", "--run-a", bm25, "--run-b", COLBERT, "--metric", "rouge_l", check=False)
    assert wrong_metric.returncode == 2 and "rouge_l" in wrong_metric.stderr

    # beyond var run_comparison_max_runs a pair is compared only when var run_comparison_pairs names it, and
    # `finrag compare` says so
    # (finrag build without --unit-tests: the vars given here would hold in the mart's unit tests too; int_run_pairs
    # makes the selection: it and the models between it and the mart are rebuilt)
    finrag("build", "--select", "int_run_pairs+,+mart_run_comparison", "--vars", "{run_comparison_max_runs: 1}")
    capped = finrag("compare", "--run-a", bm25, "--run-b", COLBERT, check=False)
    assert capped.returncode == 2 and "run_comparison_pairs" in capped.stderr and "2 runs" in capped.stderr
    finrag("build", "--select", "int_run_pairs+,+mart_run_comparison", "--vars",
           f"{{run_comparison_max_runs: 1, run_comparison_pairs: [[{COLBERT}, {bm25}]]}}")
    named = {(r["metric"], r["k"]): r for r in json.loads(finrag(
        "compare", "--run-a", bm25, "--run-b", COLBERT, "--granularity", "chunk", "--k", "10", "--k", "0",
        "--format", "json").stdout)}
    assert named.keys() == rows.keys()
    for key, row in rows.items():  # the same comparison; floats to 1e-12 (DuckDB's parallel sums, BLAS's order)
        for column, value in row.items():
            if isinstance(value, float):
                assert named[key][column] == pytest.approx(value, abs=1e-12), (key, column)
            else:
                assert named[key][column] == value, (key, column)
