"""mart_run_comparison and `finrag compare` on real runs, against the references. One home, built once for the
module: FinanceRAG's FinanceBench subset (180 documents, 45 questions with qrels) with bm25, dense and hybrid runs
of `finrag retrieve` (built), then the real system's run - FinColBERT, the challenge's run file - added and built
again (incrementally). Checked on nDCG@10 at chunk granularity (the run files' docnos), where FinColBERT is the best:

- (a) the vs-best rows: per-question scores equal ranx's evaluate (1e-9), p_ttest ranx's compare(stat_test=
  "student") and scipy.stats.ttest_rel (1e-9), p_randomization ranx's "fisher" within Monte-Carlo error;
- (b) p_tukey ranx's compare(stat_test="tukey") (scipy.stats.tukey_hsd on the per-question scores; 1e-4 relative),
  so the tied-with-best set is ranx's;
- (c) p_holm a Holm step-down computed here, over every run against the best and over every pair of the group;
- (d) a copy of the home rebuilt with --vars '{run_comparison_max_runs: 1}' holds no pair of two runs that are never
  the best: `finrag compare` says 'on demand' and gives the default build's numbers for that pair (the copy rebuilds
  fct_run_pairs, the one model that reads the var, and everything downstream of it: the other models are the
  home's, built from the same lake);
- (e) the second build computed only the new run's pairs: fct_run_comparisons' other rows are the first build's,
  down to a marker written into them between the builds; the 'best' rows moved only where the best changed.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pytest
import scipy.stats

from support.cli import MODELS_ONLY, run_finrag
from support.trec import read_financerag_csv, read_qrels, read_trec_run
from support.warehouse import run_comparison_settings, warehouse_query

pytestmark = pytest.mark.slow

DATASET = "financerag_financebench"
COLBERT = "fincolbert_financebench"
RETRIEVERS = ("bm25", "dense", "hybrid")
FAMILY = "metric = 'ndcg' and granularity = 'chunk' and k = 10"  # ranx's ndcg@10
ALPHA = 0.05  # dbt_project.yml var run_comparison_alpha
MARKER = 0.4242424242  # written into fct_run_comparisons' mrr rows between the builds: kept if not recomputed
STATISTICS = ("n_questions", "mean_a", "mean_b", "delta", "wins", "ties", "losses", "ci_low", "ci_high", "p_ttest",
              "p_randomization", "randomization_exact", "p_tukey", "n_not_ok_a", "n_not_ok_b")


def monte_carlo_tolerance(p: float, draws: int, estimates: int = 1) -> float:
    """4.5 standard errors of (the difference of) Monte-Carlo p estimates, plus the (hits + 1) / (draws + 1) shift."""
    return 4.5 * math.sqrt(estimates * max(p * (1 - p), 1e-4) / draws) + 2 / draws


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given: the i-th smallest p times (m - i + 1), kept monotone."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def table(home: Path, sql: str) -> list[dict]:
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        rel = con.sql(sql)
        return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]
    finally:
        con.close()


def compare_json(home: Path, *args: str) -> list[dict]:
    return json.loads(run_finrag(home, "compare", *args, "--format", "json").stdout)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> dict:
    root = shared_data / "financerag_icaif24"
    home = tmp_path_factory.mktemp("comparison") / "warehouse"
    home.mkdir()
    run_finrag(home, "ingest", "beir", "--dir", str(root / "FinanceBench"), "--dataset", DATASET)
    run_finrag(home, "index", "--dataset", DATASET)
    runs = {name: run_finrag(home, "retrieve", "--retriever", name, "--dataset", DATASET, "--k", "10").stdout.strip()
            for name in RETRIEVERS}
    run_finrag(home, "build", *MODELS_ONLY)
    # the first build's pairs, then a marker in one metric's rows: a recomputed row loses it
    first = {r["pair_key"]: r for r in table(home, "select * from fct_run_comparisons")}
    first_best = {(r["granularity"], r["k"], r["metric"]): r["best_run_id"]
                  for r in table(home, "select * from mart_run_families")}
    con = duckdb.connect(str(home / "finrag.duckdb"))
    con.execute(f"update fct_run_comparisons set p_ttest = {MARKER} where metric = 'mrr'")
    con.close()

    run_csv = root / "runs" / "fincolbert_combined_results.csv"
    run_finrag(home, "ingest", "trec-run", str(run_csv), "--format", "financerag-csv", "--dataset", DATASET,
               "--run-id", COLBERT, "--only-known-questions")
    run_finrag(home, "build", *MODELS_ONLY)
    # a copy of the same home built with no group pairs: only every run against its family's best. The var is read
    # by fct_run_pairs alone, so the models it reaches are fct_run_pairs and its descendants (with their data tests);
    # every other model of the copy is already the home's build of the same lake
    capped = tmp_path_factory.mktemp("capped") / "warehouse"
    shutil.copytree(home, capped)
    run_finrag(capped, "build", "--vars", "{run_comparison_max_runs: 1}", "--select", "fct_run_pairs+", *MODELS_ONLY)
    return {"home": home, "capped": capped, "runs": {**runs, "colbert": COLBERT}, "first": first,
            "first_best": first_best, "run_csv": run_csv, "qrels": root / "FinanceBench" / "qrels.tsv"}


@pytest.fixture(scope="module")
def uncompiled_numba() -> Iterator[None]:
    """ranx's numba functions run as the Python they are written in, for this module only: compiling them took ~30 s
    of each session, their work on 45 questions takes ~10 s uncompiled. numba reads the switch when a function is
    decorated (ranx is imported below, and nowhere else in the suite) and when a typed container is made; the
    worker's later modules and the processes they start compile again."""
    import numba.core.config

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NUMBA_DISABLE_JIT", "1")
        numba.core.config.reload_config()
        yield
    numba.core.config.reload_config()


@pytest.fixture(scope="module")
def ranx_runs(built: dict, tmp_path_factory: pytest.TempPathFactory, uncompiled_numba: None) -> dict:
    """The four rankings for ranx over the 45 questions with qrels: ours as exported (scores from ranks, so ranx
    sorts them in the run's order), FinColBERT's from its file; ranx's per-question nDCG@10."""
    out = tmp_path_factory.mktemp("ranx")
    from ranx import Qrels, Run, evaluate

    qrels = read_qrels(built["qrels"], sep="\t", skip_header=True)
    rankings = {}
    for name in RETRIEVERS:
        exported = out / f"{name}.trec"
        run_finrag(built["home"], "export-run", "--run-id", built["runs"][name], "--out", str(exported))
        rankings[built["runs"][name]] = read_trec_run(exported)
    rankings[COLBERT] = read_financerag_csv(built["run_csv"])
    rankings = {run: {q: d for q, d in ranking.items() if q in qrels} for run, ranking in rankings.items()}
    assert len(qrels) == 45 and all(set(r) == set(qrels) for r in rankings.values())
    ranx_qrels = Qrels.from_dict(qrels)
    runs = [Run.from_dict(ranking, name=run) for run, ranking in rankings.items()]
    questions = list(ranx_qrels.keys())
    scores = {run.name: np.asarray(evaluate(ranx_qrels, run, "ndcg@10", return_mean=False)) for run in runs}
    return {"qrels": ranx_qrels, "runs": runs, "questions": questions, "scores": scores}


def family_rows(home: Path) -> list[dict]:
    return table(home, f"select * from mart_run_comparison where {FAMILY} order by run_a, run_b")


def test_vs_best_p_values_and_tukey_ties_equal_ranx(built: dict, ranx_runs: dict) -> None:
    from ranx import compare

    home = built["home"]
    ours = {}
    for run_id, question, value in warehouse_query(home, f"""
            select run_id, question_id, value from fct_question_metric_scores where {FAMILY}"""):
        ours.setdefault(run_id, {})[question] = value
    for run, expected in ranx_runs["scores"].items():  # the same per-question scores
        np.testing.assert_allclose([ours[run][q] for q in ranx_runs["questions"]], expected, rtol=0, atol=1e-9)

    best = warehouse_query(home, f"select best_run_id, n_runs, tukey_df from mart_run_families where {FAMILY}")
    assert best == [(COLBERT, 4, 4 * 45 - 4)]
    vs_best = [r for r in family_rows(home) if r["role"] == "best"]
    assert {r["run_b"] for r in vs_best} == set(built["runs"].values()) - {COLBERT}
    assert all(r["run_a"] == COLBERT for r in vs_best)

    flips = run_comparison_settings()["sign_flips"]
    tests = {stat: compare(ranx_runs["qrels"], ranx_runs["runs"], ["ndcg@10"], stat_test=stat, max_p=ALPHA,
                           **({"n_permutations": flips, "random_seed": 42} if stat == "fisher" else {})).comparisons
             for stat in ("student", "fisher", "tukey")}
    tied = set()
    for row in vs_best:
        pair = frozenset((row["run_a"], row["run_b"]))
        a, b = ranx_runs["scores"][row["run_a"]], ranx_runs["scores"][row["run_b"]]
        assert row["n_questions"] == 45 and row["mean_b"] - row["mean_a"] == pytest.approx(b.mean() - a.mean(),
                                                                                           abs=1e-12)
        assert (row["wins"], row["ties"], row["losses"]) == (int((b > a).sum()), int((b == a).sum()),
                                                             int((b < a).sum()))
        assert row["ci_low"] <= row["delta"] <= row["ci_high"]
        # (a) the paired t-test exactly, the randomization test within Monte-Carlo error
        assert row["p_ttest"] == pytest.approx(tests["student"][pair]["ndcg@10"]["p_value"], abs=1e-9, rel=0)
        assert row["p_ttest"] == pytest.approx(scipy.stats.ttest_rel(b, a).pvalue, abs=1e-9, rel=0)
        ranx_p = tests["fisher"][pair]["ndcg@10"]["p_value"]
        assert abs(row["p_randomization"] - ranx_p) <= monte_carlo_tolerance(ranx_p, flips, 2), (row["run_b"], ranx_p)
        # (b) Tukey's HSD over the family's four runs
        ranx_tukey = tests["tukey"][pair]["ndcg@10"]["p_value"]
        assert row["p_tukey"] == pytest.approx(ranx_tukey, rel=1e-4), row["run_b"]
        if ranx_tukey > ALPHA:
            tied.add(row["run_b"])
    assert {r["run_b"] for r in vs_best if r["tied_with_best"]} == tied
    # the real case has both: a run tied with FinColBERT (hybrid) and one clearly worse (bm25)
    assert built["runs"]["hybrid"] in tied and built["runs"]["bm25"] not in tied
    scipy_p = scipy.stats.tukey_hsd(*(ranx_runs["scores"][r] for r in sorted(ranx_runs["scores"]))).pvalue
    p_of = {r["run_b"]: r["p_tukey"] for r in vs_best}
    colbert = sorted(ranx_runs["scores"]).index(COLBERT)
    for j, run in enumerate(sorted(ranx_runs["scores"])):
        if run != COLBERT:
            assert p_of[run] == pytest.approx(scipy_p[colbert, j], rel=1e-4)


def test_holm_over_each_family_of_comparisons(built: dict) -> None:
    rows = family_rows(built["home"])
    vs_best = [r for r in rows if r["role"] == "best"]
    for row, expected in zip(vs_best, holm([r["p_randomization"] for r in vs_best]), strict=True):
        assert row["p_holm"] == pytest.approx(expected, abs=1e-12), row["run_b"]
    # every pair of the group (4 runs <= run_comparison_max_runs) once, whichever order its 'pair' rows have
    pairs = {frozenset((r["run_a"], r["run_b"])): r for r in rows if r["role"] == "pair"}
    assert len(pairs) == 6
    keys = list(pairs)
    for key, expected in zip(keys, holm([pairs[k]["p_randomization"] for k in keys]), strict=True):
        assert pairs[key]["p_holm"] == pytest.approx(expected, abs=1e-12), key
    # both orders of a pair: the same test mirrored
    by_order = {(r["run_a"], r["run_b"]): r for r in rows}
    for (a, b), row in by_order.items():
        back = by_order[(b, a)]
        assert (back["mean_a"], back["mean_b"], back["delta"]) == (row["mean_b"], row["mean_a"], -row["delta"])
        assert (back["wins"], back["losses"], back["ci_low"], back["ci_high"]) == (
            row["losses"], row["wins"], -row["ci_high"], -row["ci_low"])
        assert (back["p_ttest"], back["p_randomization"], back["p_tukey"]) == (
            row["p_ttest"], row["p_randomization"], row["p_tukey"])


def test_a_pair_the_mart_does_not_hold_is_computed_on_demand(built: dict) -> None:
    home, capped, runs = built["home"], built["capped"], built["runs"]
    never_best = {r for (r,) in warehouse_query(capped, "select run_id from fct_run_metric_stats except "
                                                        "select best_run_id from mart_run_families")}
    assert never_best == {runs["bm25"], runs["dense"]}
    a, b = sorted(never_best)
    assert warehouse_query(capped, f"select count(*) from mart_run_comparison where run_a = '{a}' and run_b = '{b}'"
                           ) == [(0,)]
    assert warehouse_query(capped, "select count(*) from mart_run_comparison where role = 'pair'") == [(0,)]
    args = ("--run-a", a, "--run-b", b, "--k", "0", "--k", "10")
    on_demand = compare_json(capped, *args)
    held = compare_json(home, *args)
    assert {r["source"] for r in on_demand} == {"on demand"} and {r["source"] for r in held} == {"mart"}
    key = ("metric", "granularity", "k")
    held_by = {tuple(r[c] for c in key): r for r in held}
    assert len(on_demand) == len(held) >= 20 and {tuple(r[c] for c in key) for r in on_demand} == held_by.keys()
    for row in on_demand:
        if row["metric"] == "mrr":  # the marker of the incremental check
            continue
        mart = held_by[tuple(row[c] for c in key)]
        assert row["role"] is None and row["p_holm"] is None and not row["tied_with_best"]
        for column in STATISTICS:  # floats to 1e-12: DuckDB's parallel sums, BLAS's order
            if isinstance(mart[column], float):
                assert row[column] == pytest.approx(mart[column], abs=1e-12), (row["metric"], column)
            else:
                assert row[column] == mart[column], (row["metric"], column)
    # the table says where the numbers come from, and shows role, Holm and Tukey
    text = run_finrag(capped, "compare", *args, "--metric", "ndcg").stdout
    assert "source: on demand" in text and "p_tukey" in text and "tied_with_best" in text
    text = run_finrag(home, "compare", "--run-a", COLBERT, "--run-b", runs["hybrid"], "--metric", "ndcg",
                      "--k", "10").stdout
    assert "source: mart_run_comparison" in text and "best" in text and "yes" in text
    # errors name what is wrong (exit 2)
    unknown = run_finrag(home, "compare", "--run-a", a, "--run-b", "NOPE", check=False)
    assert unknown.returncode == 2 and "'NOPE'" in unknown.stderr
    wrong_metric = run_finrag(home, "compare", "--run-a", a, "--run-b", b, "--metric", "rouge_l", check=False)
    assert wrong_metric.returncode == 2 and "rouge_l" in wrong_metric.stderr


def test_adding_a_run_computes_only_its_pairs(built: dict) -> None:
    home, first = built["home"], built["first"]
    now = {r["pair_key"]: r for r in table(home, "select * from fct_run_comparisons")}
    added = now.keys() - first.keys()
    # the new pairs are exactly FinColBERT's, against each of the three runs in every family
    assert added and all(COLBERT in (now[k]["run_a"], now[k]["run_b"]) for k in added)
    assert len(added) == 3 * len(built["first_best"])
    assert first.keys() <= now.keys()  # four runs are still one group: no pair vanished
    for pair_key, before in first.items():
        row = now[pair_key]
        marked = before["metric"] == "mrr"
        assert row["p_ttest"] == (MARKER if marked else before["p_ttest"]), (pair_key, before["metric"])
        assert {c: v for c, v in row.items() if c != "p_ttest"} == {c: v for c, v in before.items() if c != "p_ttest"}
    # the 'best' rows follow the best: FinColBERT's where it is the new best, the old ones (untouched) elsewhere
    best_now = {(r["granularity"], r["k"], r["metric"]): r["best_run_id"]
                for r in table(home, "select * from mart_run_families")}
    assert best_now.keys() == built["first_best"].keys()
    changed = {f for f, run in best_now.items() if run != built["first_best"][f]}
    assert changed and all(best_now[f] == COLBERT for f in changed) and len(changed) < len(best_now)
    for r in table(home, "select * from mart_run_comparison where role = 'best'"):
        family = (r["granularity"], r["k"], r["metric"])
        assert r["run_a"] == best_now[family]
        if family not in changed and COLBERT not in (r["run_a"], r["run_b"]) and r["metric"] != "mrr":
            canonical = first[next(k for k, v in first.items() if v["metric"] == r["metric"]
                                   and (v["granularity"], v["k"]) == family[:2]
                                   and {v["run_a"], v["run_b"]} == {r["run_a"], r["run_b"]})]
            assert abs(r["delta"]) == pytest.approx(abs(canonical["delta"]), abs=1e-15)
            assert r["p_randomization"] == canonical["p_randomization"]
