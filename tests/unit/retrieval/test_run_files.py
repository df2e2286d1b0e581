"""Run files (`finrag export-run`'s library): TREC and FinanceRAG CSV exports of a retrieval run on the toy corpus
(support/toy_corpus.py), strict rank order, raw scores refused when ties would reorder, chunks collapsed to
documents."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.retrieval.run_files import export
from support.retrieval_runs import retrieve
from support.toy_corpus import DATASET, FLAT, land_corpus


def test_trec_export_format_and_strict_order(home: Path):
    lake = land_corpus(home)
    out = retrieve(home, DATASET, "bm25", k=3, chunker_id=FLAT)
    res = lake.read_partition("retrieval_results", out["run_id"]).sort("question_id", "rank")
    lines = [ln.split("\t") for ln in export(Lake(home), out["run_id"], "trec").splitlines()]
    assert len(lines) == res.height
    for (qid, q0, docno, rank, score, tag), row in zip(lines, res.iter_rows(named=True)):
        assert (qid, q0, docno, int(rank), tag) == (
            row["question_id"], "Q0", row["chunk_id"], row["rank"], out["run_id"]
        )
        assert float(score) == 3 - row["rank"] + 1
    raw = [ln.split("\t") for ln in export(Lake(home), out["run_id"], "trec", score="raw").splitlines()]
    assert [float(x[4]) for x in raw] == pytest.approx(res["score"].to_list(), abs=1e-6)


def test_raw_scores_refused_when_ties_would_reorder(home: Path):
    lake = land_corpus(home)
    run = pl.DataFrame([{"run_id": "tied", "dataset": DATASET, "retriever": "x", "condition": "full", "k": 2,
                         "config_hash": "h", "config_id": "h", "source": "finrag"}])
    res = pl.DataFrame([{"run_id": "tied", "question_id": "q1", "dataset": DATASET, "rank": r, "chunk_id": c,
                         "doc_id": "ACME_2022_10K", "score": 1.0} for r, c in ((1, "a"), (2, "b"))])
    lake.land([("retrieval_runs", "tied", run), ("retrieval_results", "tied", res)])
    with pytest.raises(InputError, match="--score rank"):
        export(Lake(home), "tied", "trec", score="raw")
    assert export(Lake(home), "tied", "trec").splitlines() == ["q1\tQ0\ta\t1\t2.000000\ttied",
                                                               "q1\tQ0\tb\t2\t1.000000\ttied"]
    with pytest.raises(InputError, match="no retrieval run 'nope'"):
        export(Lake(home), "nope", "trec")


def test_financerag_csv_collapses_chunks_to_documents(home: Path):
    lake = land_corpus(home)
    out = retrieve(home, DATASET, "bm25", k=10, chunker_id=FLAT)
    text = export(Lake(home), out["run_id"], "financerag-csv", top=2)
    rows = [ln.split(",") for ln in text.splitlines()]
    assert rows[0] == ["query_id", "corpus_id"]
    res = lake.read_partition("retrieval_results", out["run_id"]).sort("question_id", "rank")
    for qid in res["question_id"].unique().to_list():
        docs = list(dict.fromkeys(res.filter(pl.col("question_id") == qid)["doc_id"].to_list()))[:2]
        assert [d for q, d in rows[1:] if q == qid] == docs
