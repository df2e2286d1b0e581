"""`finrag export-run` end to end: a run exported as TREC and re-imported with `finrag ingest trec-run` scores
identically in the metrics marts (and as pytrec_eval scores the file). The export formats themselves:
tests/unit/retrieval/test_run_files.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.cli import MODELS_ONLY
from support.warehouse import warehouse_query


@pytest.mark.slow
def test_exported_trec_reimports_to_identical_metrics(home: Path, finrag, shared_data: Path, tmp_path: Path):
    """FinanceRAG FinQABench (real corpus, queries, qrels): bm25 and hybrid runs, exported, re-imported, scored by
    dbt; every leaderboard value of the re-imported run equals the original's, and pytrec_eval agrees on the file."""
    import pytrec_eval

    src = shared_data / "financerag_icaif24" / "FinQABench"
    finrag("ingest", "beir", "--dir", str(src), "--dataset", "finqabench")
    finrag("index", "--dataset", "finqabench")
    originals = []
    for retriever in ("bm25", "hybrid"):
        proc = finrag("retrieve", "--retriever", retriever, "--dataset", "finqabench", "--k", "10")
        run_id = proc.stdout.strip()
        trec = tmp_path / f"{retriever}.trec"
        finrag("export-run", "--run-id", run_id, "--format", "trec", "--out", str(trec))
        finrag("ingest", "trec-run", str(trec), "--dataset", "finqabench", "--run-id", f"{retriever}-reimported")
        csv = tmp_path / f"{retriever}.csv"
        finrag("export-run", "--run-id", run_id, "--format", "financerag-csv", "--out", str(csv))
        assert csv.read_text().splitlines()[0] == "query_id,corpus_id"
        originals.append((run_id, f"{retriever}-reimported", trec))
    lake = Lake(home)
    for run_id, _, _ in originals:  # every query got results
        assert lake.read_partition("retrieval_results", run_id)["question_id"].n_unique() == 100
    finrag("build", *MODELS_ONLY)

    qrels: dict[str, dict[str, int]] = {}
    for line in (src / "qrels.tsv").read_text().splitlines()[1:]:
        q, d, s = line.split("\t")
        qrels.setdefault(q, {})[d] = int(s)
    for run_id, reimported, trec in originals:
        sql = ("select granularity, metric, k, mean, n_questions, mean_complete from mart_retrieval_leaderboard "
               "where run_id = '{}' order by all")
        a, b = warehouse_query(home, sql.format(run_id)), warehouse_query(home, sql.format(reimported))
        assert len(a) > 20 and len(a) == len(b)
        for x, y in zip(a, b):
            assert x[:3] == y[:3] and x[4] == y[4] and x[3] == pytest.approx(y[3], abs=1e-12), (x, y)
        run: dict[str, dict[str, float]] = {}
        for line in trec.read_text().splitlines():
            q, _, d, _, s, _ = line.split("\t")
            run.setdefault(q, {})[d] = float(s)
        ev = pytrec_eval.RelevanceEvaluator(qrels, {"map_cut_10", "recip_rank", "ndcg_cut_10", "recall_10"})
        per_q = ev.evaluate(run)
        mean = {m: sum(v[m] for v in per_q.values()) / len(per_q) for m in ("ndcg_cut_10", "recall_10", "recip_rank")}
        mart = {(m, k): (v, n) for g, m, k, v, n, _ in a if g == "chunk"}
        assert mart[("ndcg", 10)][1] == len(per_q) == 30
        assert mart[("ndcg", 10)][0] == pytest.approx(mean["ndcg_cut_10"], abs=1e-9)
        assert mart[("recall", 10)][0] == pytest.approx(mean["recall_10"], abs=1e-9)
        params = json.loads(lake.read_partition("retrieval_runs", run_id)["params"][0])
        assert params["chunker_id"] == "corpus" and params["n_queried"] == 100
