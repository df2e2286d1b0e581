"""Retrieval metrics in dbt against trec_eval: the real trec_eval test fixture and the real FinColBERT run on the
FinanceRAG qrels, ingested with `finrag ingest`, built with `dbt build`, printed with `finrag report --format trec`
and compared with trec_eval's own expected output and with pytrec_eval (the reference implementation) at 1e-9."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from support.cli import dbt_build
from support.retrieval_financerag_home import FINANCERAG_SETS, land_financerag_copy
from support.trec import KS, pytrec_means, read_financerag_csv, read_qrels, read_trec_run

COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
FINANCERAG_DATASETS = ("FinDER", "FinQABench", "FinanceBench", "TATQA", "ConvFinQA", "MultiHiertt")


# ---- references --------------------------------------------------------------------------------------------------
def trec_eval_all(path: Path) -> dict[str, str]:
    """The `all` lines of a trec_eval output file."""
    out = {}
    for line in path.read_text().splitlines():
        measure, topic, value = (x.strip() for x in line.split("\t"))
        if topic == "all":
            out[measure] = value
    return out


def report_trec(finrag, run_id: str, *args: str) -> dict[str, str]:
    out = finrag("report", "--run-id", run_id, "--format", "trec", *args).stdout
    lines = [line.split("\t") for line in out.splitlines()]
    assert all(len(parts) == 3 and parts[1] == "all" for parts in lines), out
    return {parts[0].strip(): parts[2] for parts in lines}


def assert_matches_pytrec(report: dict[str, str], reference: dict[str, float]) -> None:
    compared = 0
    for measure, expected in reference.items():
        if measure == "num_q":
            assert int(report["num_q"]) == int(expected)
            continue
        assert measure in report, f"{measure} missing from the report"
        assert float(report[measure]) == pytest.approx(expected, abs=1e-9, rel=0), measure
        compared += 1
    assert compared == 3 + 4 * len(KS)


# ---- trec_eval's own test fixture ----------------------------------------------------------------------------------
def test_trec_eval_fixture_matches_trec_eval_and_pytrec_eval(home, finrag, shared_data, tmp_path):
    fixtures = shared_data / "trec_eval_fixtures"
    # results.trunc carries free text after the 6th column on 5 lines: trec_eval reads 6 fields and ignores the
    # rest, and so does `finrag ingest trec-run` (the file is landed as it is); pytrec_eval's reference reads a copy
    # cut to 6 columns
    trunc = tmp_path / "results.trunc"
    trunc.write_text("".join(
        "\t".join(line.split()[:6]) + "\n" for line in (fixtures / "results.trunc").read_text().splitlines()
    ))
    finrag("ingest", "trec-qrels", str(fixtures / "qrels.test"), "--dataset", "trec_test")
    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec_test", "--run-id", "STANDARD")
    # results.trunc has no row for topic 302: the complete variant (trec_eval -c) counts it as 0
    finrag("ingest", "trec-run", str(fixtures / "results.trunc"), "--dataset", "trec_test", "--run-id", "TRUNC")
    dbt_build(home)

    report = report_trec(finrag, "STANDARD")
    # 1. trec_eval's expected output (4 decimals): every measure both print, and the counts exactly
    expected = trec_eval_all(fixtures / "out.test.a")
    assert report["runid"] == expected["runid"] == "STANDARD"
    for name in COUNTS:
        assert report[name] == expected[name], name
    shared = [m for m in report if m in expected and m not in ("runid", *COUNTS)]
    assert {"map", "recip_rank", "P_5", "P_10", "recall_100", "ndcg_cut_5", "ndcg_cut_10", "ndcg"} <= set(shared)
    for measure in shared:
        assert round(float(report[measure]), 4) == pytest.approx(float(expected[measure]), abs=1e-12), measure
    # 2. pytrec_eval at full precision
    qrels = read_qrels(fixtures / "qrels.test")
    assert_matches_pytrec(report, pytrec_means(qrels, read_trec_run(fixtures / "results.test")))

    # the complete variant equals trec_eval -c (out.test.aqc: -c qrels.test results.trunc), the default pytrec_eval
    complete = report_trec(finrag, "TRUNC", "--complete")
    expected_c = trec_eval_all(fixtures / "out.test.aqc")
    for name in COUNTS:
        assert complete[name] == expected_c[name], name
    for measure in (m for m in complete if m in expected_c and m not in ("runid", *COUNTS)):
        assert round(float(complete[measure]), 4) == pytest.approx(float(expected_c[measure]), abs=1e-12), measure
    # the table format shows the same marts; an unknown run is an input error (exit 2) naming it
    table = finrag("report", "--run-id", "STANDARD", "--granularity", "chunk", "--metric", "map", "--k", "0").stdout
    assert "0.178545" in table and "mean_complete" in table
    unknown = finrag("report", "--run-id", "NOPE", "--format", "trec", check=False)
    assert unknown.returncode == 2 and "'NOPE'" in unknown.stderr

    truncated = report_trec(finrag, "TRUNC")
    assert truncated["num_q"] == "2"
    assert_matches_pytrec(truncated, pytrec_means(qrels, read_trec_run(trunc)))



# ---- the real FinColBERT run on the FinanceRAG qrels ---------------------------------------------------------------
@pytest.mark.slow
def test_fincolbert_run_and_graded_qrels_match_pytrec_eval(home, finrag, shared_data, tmp_path_factory):
    """The FinColBERT run per FinanceRAG dataset; and, in the same warehouse (topic ids do not collide),
    trec_eval's qrels.rel_level with grades -1..4: nDCG gains are the grades (<= 0 gain nothing), map / P / recall
    count relevance >= 1. The FinanceRAG sets are the session's shared landing of `finrag ingest beir`
    (support/retrieval_financerag_home.py: FinQA too, which has no run here), copied into this test's home."""
    land_financerag_copy(tmp_path_factory, home)
    fixtures = shared_data / "trec_eval_fixtures"
    finrag("ingest", "trec-qrels", str(fixtures / "qrels.rel_level"), "--dataset", "trec_levels")
    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec_levels", "--run-id", "LEVELS")
    root = shared_data / "financerag_icaif24"
    run_csv = root / "runs" / "fincolbert_combined_results.csv"
    reference = json.loads((root / "runs" / "fincolbert_reference_metrics.pytrec_eval.json").read_text())["metrics"]
    for name in FINANCERAG_DATASETS:
        dataset = FINANCERAG_SETS[name]  # landed in the shared home
        # the run spans every dataset: each dataset keeps its own questions' rows (one run per dataset)
        finrag("ingest", "trec-run", str(run_csv), "--format", "financerag-csv", "--dataset", dataset,
               "--run-id", f"fincolbert_{name.lower()}", "--only-known-questions")
    # dim_metrics: the report's trec_eval measure names are the metric registry's
    dbt_build(home, "--select", "+mart_retrieval_leaderboard", "+dim_metrics", "--indirect-selection", "cautious")

    full_run = read_financerag_csv(run_csv)
    for name in FINANCERAG_DATASETS:
        report = report_trec(finrag, f"fincolbert_{name.lower()}")
        qrels = read_qrels(root / name / "qrels.tsv", sep="\t", skip_header=True)
        run = {q: docs for q, docs in full_run.items() if q in qrels}
        assert_matches_pytrec(report, pytrec_means(qrels, run))
        # and the published reference numbers (6 decimals)
        ref = reference[name]
        assert int(report["num_q"]) == ref["n_q_evaluated"]
        for measure in ("map", "recip_rank", "ndcg_cut_10", "P_10", "recall_10"):
            assert float(report[measure]) == pytest.approx(ref[measure], abs=5e-7), (name, measure)

    qrels = read_qrels(fixtures / "qrels.rel_level")
    assert {rel for docs in qrels.values() for rel in docs.values()} == {-1, 0, 1, 2, 3, 4}
    report = report_trec(finrag, "LEVELS")
    assert_matches_pytrec(report, pytrec_means(qrels, read_trec_run(fixtures / "results.test")))


# ---- random runs with ties, including ties below float32 precision ---------------------------------------------
def test_random_runs_with_ties_match_pytrec_eval(home, finrag, tmp_path):
    """Seeded random qrels (graded 0..3) and runs whose scores tie often: exact repeats, and pairs that differ only
    below float32 precision (1.00000001 vs 1.0, which trec_eval and pytrec_eval read as one value and order by docno
    descending). The run files' rank column is shuffled: imported runs rank by score, as trec_eval does."""
    rng = random.Random(16)
    qrels_path, run_paths = tmp_path / "qrels.txt", []
    with open(qrels_path, "w") as fh:
        for q in range(40):
            for d in rng.sample(range(60), 8):
                fh.write(f"t{q} 0 doc{d:02d} {rng.choice([0, 1, 1, 2, 3])}\n")
    bases = [1.0, 0.5, 0.25, 2.0]
    for r in range(3):
        path = tmp_path / f"run{r}.trec"
        lines = []
        for q in range(40 - r):  # the later runs miss a question or two
            docs = rng.sample(range(60), rng.randint(1, 30))
            ranks = rng.sample(range(1, len(docs) + 1), len(docs))
            for d, rank in zip(docs, ranks, strict=True):
                base = rng.choice(bases)
                score = f"{base + 1e-8:.8f}" if rng.random() < 0.3 else f"{base:.8f}"
                lines.append(f"t{q} Q0 doc{d:02d} {rank} {score} run{r}\n")
        path.write_text("".join(lines))
        run_paths.append(path)
    finrag("ingest", "trec-qrels", str(qrels_path), "--dataset", "random_ties")
    for r, path in enumerate(run_paths):
        finrag("ingest", "trec-run", str(path), "--dataset", "random_ties", "--run-id", f"RAND{r}")
    dbt_build(home, "--select", "+mart_retrieval_leaderboard", "+dim_metrics", "--indirect-selection", "cautious")
    qrels = read_qrels(qrels_path)
    for r, path in enumerate(run_paths):
        run = read_trec_run(path)
        assert any(f"{b + 1e-8:.8f}" in path.read_text() for b in bases)  # the case is really in the file
        assert_matches_pytrec(report_trec(finrag, f"RAND{r}"), pytrec_means(qrels, run))
