"""End to end on real FinanceBench data with one PDF (BESTBUY_2024Q2_10Q, 30 pages, 3 questions): the real CLIs
ingest (the session's shared one-PDF home, support/answers_homes.py, copied) → chunk 1024/128 → index → retrieve
(bm25, dense, hybrid, oracle_doc, oracle_page) → dbt build (of the retrieval scores and leaderboard the checks read),
and the marts' DocRec@5 / PageRec@5 equal the values worked out here from the landed results and the FinanceBench
evidence."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.answers_homes import GOLD_DOC, one_pdf_home
from support.shared_home import copy_home
from support.warehouse import warehouse_query

pytestmark = pytest.mark.slow

DOC = GOLD_DOC
CHUNKER = "tok1024o128-minilm"


@pytest.fixture
def fb_one_pdf(home: Path, finrag, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home.rmdir()  # the fixture's empty home, replaced by a copy of the shared ingest
    copy_home(one_pdf_home(tmp_path_factory)[0], home)
    finrag("chunk", "--dataset", "financebench", "--preset", "1024/128")
    out = finrag("index", "--dataset", "financebench")
    assert f"chunker_id={CHUNKER}" in out.stderr and "embedded=0" not in out.stderr
    return home


def run_ids(finrag, *runs: tuple[str, ...]) -> list[str]:
    ids = []
    for args in runs:
        proc = finrag("retrieve", "--dataset", "financebench", "--k", "5", *args)
        ids.append(proc.stdout.strip())
    return ids


def test_financebench_one_pdf_runs_score_through_the_marts(fb_one_pdf: Path, finrag):
    home = fb_one_pdf
    ids = run_ids(finrag, ("--retriever", "bm25"), ("--retriever", "dense"), ("--retriever", "hybrid"),
                  ("--retriever", "dense", "--condition", "oracle_doc"),
                  ("--retriever", "dense", "--condition", "oracle_page"))
    lake = Lake(home)
    ev = lake.read("evidence", where={"dataset": "financebench"})
    gold_q = sorted(set(ev.filter(pl.col("doc_id") == DOC)["question_id"].to_list()))
    assert len(gold_q) == 3
    finrag("build", "--select", "+fct_retrieval_question_scores", "+mart_retrieval_leaderboard",
           "--indirect-selection", "cautious")

    for run_id in ids:
        run = lake.read_partition("retrieval_runs", run_id).row(0, named=True)
        res = lake.read_partition("retrieval_results", run_id)
        assert res["rank"].max() <= 5 and set(res["doc_id"].to_list()) <= {DOC}  # the only document with chunks
        params = json.loads(run["params"])
        assert params["chunker_id"] == CHUNKER and params["k"] == 5 and params["versions"]["lancedb"] == "0.40.0"
        for qid in gold_q:
            mine = res.filter(pl.col("question_id") == qid).sort("rank")
            gold_pages = set(
                ev.filter((pl.col("question_id") == qid) & (pl.col("doc_id") == DOC))["page_number"].to_list()
            )
            covered = {p for a, b in mine.select("page_start", "page_end").iter_rows() for p in range(a, b + 1)}
            doc_rec = 1.0 if mine.height else 0.0
            page_rec = len(gold_pages & covered) / len(gold_pages)
            got = dict(warehouse_query(home, (
                "select granularity, coalesce(doc_rec, page_rec) from fct_retrieval_question_scores "
                f"where run_id = '{run_id}' and question_id = '{qid}' and k = 5 and granularity in ('doc', 'page')")))
            assert got["doc"] == pytest.approx(doc_rec) and got["page"] == pytest.approx(page_rec), (run_id, qid)
        if run["condition"] == "oracle_page":  # every result covers a gold page, so PageRec@5 > 0 for each question
            assert all(
                v > 0 for (v,) in warehouse_query(home, (
                    "select page_rec from fct_retrieval_question_scores where granularity = 'page' and k = 5 "
                    f"and run_id = '{run_id}' and question_id in ({', '.join(repr(q) for q in gold_q)})")))
    # the leaderboard carries every run
    n = warehouse_query(home, f"select count(distinct run_id) from mart_retrieval_leaderboard where run_id in "
                              f"({', '.join(repr(i) for i in ids)})")[0][0]
    assert n == 5
