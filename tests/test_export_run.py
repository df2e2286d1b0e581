"""`finrag export-run`: TREC and FinanceRAG CSV files, and the round trip — a run exported as TREC and re-imported
with `finrag ingest trec-run` scores identically in the metrics marts (and as pytrec_eval scores the file)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import warehouse_query
from test_retrieve import DATASET, FLAT, land_corpus

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.retrieval.run_files import export
from python_jobs.retrieval.runs import run_retrieval


def test_trec_export_format_and_strict_order(home: Path):
    lake = land_corpus(home)
    out = run_retrieval(home, DATASET, "bm25", k=3, chunker_id=FLAT, progress=False)
    res = lake.read_partition("retrieval_results", out["run_id"]).sort("question_id", "rank")
    lines = [ln.split("\t") for ln in export(home, out["run_id"], "trec").splitlines()]
    assert len(lines) == res.height
    for (qid, q0, docno, rank, score, tag), row in zip(lines, res.iter_rows(named=True)):
        assert (qid, q0, docno, int(rank), tag) == (row["question_id"], "Q0", row["chunk_id"], row["rank"], out["run_id"])
        assert float(score) == 3 - row["rank"] + 1
    raw = [ln.split("\t") for ln in export(home, out["run_id"], "trec", score="raw").splitlines()]
    assert [float(x[4]) for x in raw] == pytest.approx(res["score"].to_list(), abs=1e-6)


def test_raw_scores_refused_when_ties_would_reorder(home: Path):
    lake = land_corpus(home)
    run = pl.DataFrame([{"run_id": "tied", "dataset": DATASET, "retriever": "x", "condition": "full", "k": 2,
                         "config_hash": "h", "config_id": "h", "source": "finrag"}])
    res = pl.DataFrame([{"run_id": "tied", "question_id": "q1", "dataset": DATASET, "rank": r, "chunk_id": c, "doc_id": "ACME_2022_10K",
                         "score": 1.0} for r, c in ((1, "a"), (2, "b"))])
    lake.land([("retrieval_runs", "tied", run), ("retrieval_results", "tied", res)])
    with pytest.raises(InputError, match="--score rank"):
        export(home, "tied", "trec", score="raw")
    assert export(home, "tied", "trec").splitlines() == ["q1\tQ0\ta\t1\t2.000000\ttied", "q1\tQ0\tb\t2\t1.000000\ttied"]
    with pytest.raises(InputError, match="no retrieval run 'nope'"):
        export(home, "nope", "trec")


def test_financerag_csv_collapses_chunks_to_documents(home: Path):
    lake = land_corpus(home)
    out = run_retrieval(home, DATASET, "bm25", k=10, chunker_id=FLAT, progress=False)
    text = export(home, out["run_id"], "financerag-csv", top=2)
    rows = [ln.split(",") for ln in text.splitlines()]
    assert rows[0] == ["query_id", "corpus_id"]
    res = lake.read_partition("retrieval_results", out["run_id"]).sort("question_id", "rank")
    for qid in res["question_id"].unique().to_list():
        docs = list(dict.fromkeys(res.filter(pl.col("question_id") == qid)["doc_id"].to_list()))[:2]
        assert [d for q, d in rows[1:] if q == qid] == docs


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
        run_id = dict(kv.split("=", 1) for kv in proc.stdout.split())["run_id"]
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
    finrag("build")

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
