"""Unpaired comparisons end to end, on benchmark runs with disjoint questions (what two application versions' traffic
is: no question answered by both). One home, built once for the module: FinanceBench's 150 questions (the shared
questions home), split at random into two halves of 75. Three TREC runs whose docnos are documents:

- `version_a` on the first half: one retrieval policy (each question's gold document at rank 1, at rank 2 for about
  one question in seven);
- `version_b` on the second half, the same policy: version A's traffic and version B's are one traffic split at
  random;
- `version_b_regress` on the second half: the gold document at rank 4 on every other question (nDCG@10 about 0.25
  worse: the planted regression).

Checked: mart_run_comparison compares A with B unpaired (welch_t, 75 questions each side) with Welch's p equal to
scipy.stats.ttest_ind(equal_var=False) on the published per-question scores (1e-9) and the interval a bootstrap of the
difference of means (welch_tests on the same scores); `finrag compare` reads those numbers, and its on-demand path
computes the same; the two B runs, on the same questions, stay paired (paired_t). `finrag gate` of B against A passes
on the random split and fails on the regression, each row naming welch_t and both sides' n.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

import polars as pl
import pytest
import scipy.stats

from support.answers_homes import questions_home
from support.cli import MODELS_ONLY, dbt_build, run_finrag
from support.paths import SHARED_DATA
from support.shared_home import copy_home
from support.trec_runs import write_trec_runs
from support.warehouse import run_comparison_settings, warehouse_query

DATASET = "financebench"
NDCG = "metric = 'ndcg' and granularity = 'doc' and k = 10"
GATE = """\
dataset: financebench
kind: retrieval
min_questions: 10
metrics:
  - {metric: ndcg, granularity: doc, k: 10, margin: 0.1}
"""


def write_runs(directory: Path) -> dict[str, Path]:
    """The three run files (see the module docstring)."""
    questions = pl.read_ndjson(SHARED_DATA / "financebench" / "data" / "financebench_open_source.jsonl")
    docs = sorted(set(questions["doc_name"]))
    ids = sorted(questions["financebench_id"])
    random.Random(57).shuffle(ids)
    half_a, half_b = set(ids[:75]), set(ids[75:])
    lines: dict[str, list[str]] = {"version_a": [], "version_b": [], "version_b_regress": []}
    for i, (qid, gold) in enumerate(questions.sort("financebench_id").select("financebench_id", "doc_name")
                                    .iter_rows()):
        rank = 2 if hashlib.sha256(qid.encode()).digest()[0] % 7 == 0 else 1
        others = [d for d in docs if d != gold][:9]
        ranked = {name: [*others[:r - 1], gold, *others[r - 1:]] for name, r in (("policy", rank), ("regress", 4))}
        if qid in half_a:
            runs = {"version_a": ranked["policy"]}
        else:
            assert qid in half_b
            runs = {"version_b": ranked["policy"],
                    "version_b_regress": ranked["regress"] if i % 2 == 0 else ranked["policy"]}
        for name, ranking in runs.items():
            lines[name] += [f"{qid} Q0 {d} {j + 1} {10 - j} {name}" for j, d in enumerate(ranking)]
    return write_trec_runs(directory, lines)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("unpaired")
    home = copy_home(questions_home(tmp_path_factory), root / "warehouse")
    for name, path in write_runs(root).items():
        run_finrag(home, "ingest", "trec-run", str(path), "--dataset", DATASET, "--run-id", name, "--quiet")
    dbt_build(home, *MODELS_ONLY)
    (root / "gate.yaml").write_text(GATE)
    return home


def scores(home: Path, run: str) -> list[float]:
    return [v for (v,) in warehouse_query(home, f"select value from fct_question_metric_scores where run_id = "
                                                f"'{run}' and {NDCG} order by question_id")]


def compare(home: Path, a: str, b: str) -> dict:
    out = json.loads(run_finrag(home, "compare", "--run-a", a, "--run-b", b, "--metric", "ndcg", "--granularity",
                                "doc", "--k", "10", "--format", "json").stdout)
    assert len(out) == 1
    return out[0]


def test_the_mart_and_compare_use_welch_on_disjoint_runs(home: Path) -> None:
    from python_jobs.stats.unpaired_tests import welch_tests

    a, b = scores(home, "version_a"), scores(home, "version_b")
    assert len(a) == len(b) == 75
    (row,) = [dict(zip(("stat_test", "n_questions", "n_a", "n_b", "mean_a", "mean_b", "ci_low", "ci_high", "p_ttest",
                        "p_randomization", "p_holm"), r, strict=True)) for r in warehouse_query(home, f"""
        select stat_test, n_questions, n_a, n_b, mean_a, mean_b, ci_low, ci_high, p_ttest, p_randomization, p_holm
        from mart_run_comparison where run_a = 'version_a' and run_b = 'version_b' and {NDCG}""")]
    assert (row["stat_test"], row["n_questions"], row["n_a"], row["n_b"]) == ("welch_t", 0, 75, 75)
    assert row["p_randomization"] is None and row["p_holm"] is not None
    assert row["p_ttest"] == pytest.approx(scipy.stats.ttest_ind(b, a, equal_var=False).pvalue, abs=1e-9)
    assert (row["mean_a"], row["mean_b"]) == pytest.approx((sum(a) / 75, sum(b) / 75), abs=1e-12)
    settings = run_comparison_settings()
    want = welch_tests(a, b, int(settings["resamples"]), int(settings["seed"]), settings["level"])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((want.ci_low, want.ci_high), abs=1e-12)
    # `finrag compare` reads the mart's row; the on-demand path (the build's functions on the published scores)
    # computes the same
    shown = compare(home, "version_a", "version_b")
    assert shown["source"] == "mart" and shown["stat_test"] == "welch_t" and (shown["n_a"], shown["n_b"]) == (75, 75)
    assert shown["p_ttest"] == pytest.approx(row["p_ttest"], abs=1e-12)
    from python_jobs.marts.comparisons import compare_on_demand

    os.environ["FINRAG_HOME"] = str(home)
    try:
        demand = compare_on_demand("version_a", "version_b", ["ndcg"], "doc", [10]).row(0, named=True)
        demand_paired = compare_on_demand("version_b", "version_b_regress", ["ndcg"], "doc", [10]).row(0, named=True)
    finally:
        del os.environ["FINRAG_HOME"]
    for column in ("stat_test", "n_questions", "n_a", "n_b"):
        assert demand[column] == row[column], column
    for column in ("mean_a", "mean_b", "ci_low", "ci_high", "p_ttest"):
        assert demand[column] == pytest.approx(row[column], abs=1e-12), column
    # the two B runs answered the same questions: paired, on demand as in the mart
    paired = compare(home, "version_b", "version_b_regress")
    assert (paired["stat_test"], paired["n_questions"], paired["n_a"], paired["n_b"]) == ("paired_t", 75, 75, 75)
    assert paired["source"] == "mart" and paired["p_randomization"] is not None
    for column in ("stat_test", "n_questions", "n_a", "n_b", "wins", "ties", "losses", "randomization_exact"):
        assert demand_paired[column] == paired[column], column
    for column in ("mean_a", "mean_b", "ci_low", "ci_high", "p_ttest", "p_randomization"):
        assert demand_paired[column] == pytest.approx(paired[column], abs=1e-12), column
    table = run_finrag(home, "compare", "--run-a", "version_a", "--run-b", "version_b", "--metric", "ndcg",
                       "--granularity", "doc", "--k", "10").stdout
    assert "test: welch_t" in table and any("ndcg" in line and "welch_t" in line for line in table.splitlines())


def test_the_unpaired_gate_fails_the_regression_and_passes_the_random_split(home: Path) -> None:
    gate_file = str(home.parent / "gate.yaml")
    passed = run_finrag(home, "gate", gate_file, "--candidate", "version_b", "--baseline", "version_a", "--format",
                        "json", check=False)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    out = json.loads(passed.stdout)
    (row,) = out["rows"]
    assert (out["verdict"], out["tests"], row["test"]) == ("pass", ["welch_t"], "welch_t")
    assert (row["n_questions"], row["n_baseline"], row["n_candidate"]) == (0, 75, 75)
    failed = run_finrag(home, "gate", gate_file, "--candidate", "version_b_regress", "--baseline", "version_a",
                        check=False)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    lines = failed.stdout.splitlines()
    assert "test: welch_t" in lines[0]
    assert lines[2].split()[:5] == ["fail", "nDCG@10", "(doc)", "all", "welch_t"] and "75/75" in lines[2]
