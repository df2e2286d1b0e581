"""`finrag ingest beir | trec-qrels | trec-run` on the real FinanceRAG (ICAIF'24) sets, trec_eval's own fixtures and
the real FinColBERT run (files read in place). The seven sets' first landing is the session's shared one
(support/retrieval_financerag_home.py), checked here on a copy."""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from python_jobs.core.lake import Lake
from support.cli import dbt_build
from support.retrieval_financerag_home import FINANCERAG_SETS, land_financerag_copy
from support.warehouse import warehouse_query

# directory → dataset name; counts from the files (SOURCES.md table): queries, qrels rows, distinct qrels questions,
# corpus
FINANCERAG = {
    "FinDER": ("financerag_finder", 216, 103, 64, None),
    "FinQABench": ("financerag_finqabench", 100, 30, 30, 92),
    "FinanceBench": ("financerag_financebench", 150, 59, 45, 180),
    "TATQA": ("financerag_tatqa", 1663, 498, 498, None),
    "FinQA": ("financerag_finqa", 1147, 344, 344, None),
    "ConvFinQA": ("financerag_convfinqa", 421, 126, 126, None),
    "MultiHiertt": ("financerag_multihiertt", 974, 1330, 292, None),
}


def lake_counts(home: Path) -> dict[str, int]:
    lake = Lake(home)
    return {t: lake.read(t).height for t in
            ("documents", "chunks", "questions", "evidence", "retrieval_runs", "retrieval_results")}


def ingest_all_financerag(finrag, root: Path) -> None:
    for d, (name, *_rest) in FINANCERAG.items():
        finrag("ingest", "beir", "--dir", str(root / d), "--dataset", name)


def test_all_seven_financerag_sets(home: Path, finrag, shared_data: Path,
                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    """The seven sets as `finrag ingest beir` landed them (a copy of the shared landing: the same command, the same
    dataset names), then landed a second time in the copy."""
    root = shared_data / "financerag_icaif24"
    assert FINANCERAG_SETS == {d: name for d, (name, *_rest) in FINANCERAG.items()}  # the shared home's landing
    land_financerag_copy(tmp_path_factory, home)
    lake = Lake(home)
    q, ev, docs, chunks = (lake.read(t) for t in ("questions", "evidence", "documents", "chunks"))
    for d, (name, n_q, n_qrels, n_qrel_q, n_corpus) in FINANCERAG.items():
        assert q.filter(q["dataset"] == name).height == n_q, d
        e = ev.filter(ev["dataset"] == name)
        assert (e.height, e["question_id"].n_unique()) == (n_qrels, n_qrel_q), d
        assert e["relevance"].to_list() == [1] * n_qrels  # FinanceRAG's public qrels are all score 1
        assert docs.filter(docs["dataset"] == name).height == (n_corpus or 0), d
        assert chunks.filter(chunks["dataset"] == name).height == (n_corpus or 0), d
    # qrels rows in file order: ordinal = position within the question; doc and chunk ids are the corpus id
    with open(root / "MultiHiertt" / "qrels.tsv", newline="") as fh:
        first = next(r for r in csv.DictReader(fh, delimiter="\t"))
    mh = ev.filter((ev["question_id"] == first["query_id"]) & (ev["evidence_ordinal"] == 0))
    assert mh.select("doc_id", "chunk_id", "page_number").row(0) == (first["corpus_id"], first["corpus_id"], None)
    # corpus entries: one chunk per entry, text as the corpus has it (no title), whitespace token count
    with open(root / "FinanceBench" / "corpus.jsonl") as fh:
        entry = json.loads(fh.readline())
    c = chunks.filter(chunks["chunk_id"] == entry["_id"]).row(0, named=True)
    assert (c["doc_id"], c["text"], c["n_tokens"], c["chunker_id"], c["ordinal"], c["char_end"]) == (
        entry["_id"], entry["text"], len(entry["text"].split()), "corpus", 0, len(entry["text"]))
    doc = docs.filter(docs["doc_id"] == entry["_id"]).row(0, named=True)
    assert (doc["title"], doc["doc_type"], doc["period"]) == ("PEPSICO_2022_10K", "10-K", "2022")
    assert lake.partitions("chunks") == ["financerag_financebench.corpus", "financerag_finqabench.corpus"]
    # FinanceBench-named corpus titles get the filing's type; FinQABench's untitled entries are 'other'
    types = Counter(docs.filter(docs["dataset"] == "financerag_financebench")["doc_type"].to_list())
    assert types == {"10-K": 144, "10-Q": 14, "earnings_call": 14, "8-K": 8}
    assert set(docs.filter(docs["dataset"] == "financerag_finqabench")["doc_type"]) == {"other"}
    q1 = q.filter(q["question_id"] == "q00001").row(0, named=True)
    assert (q1["source"], q1["split"], q1["dataset"]) == ("imported", "test", "financerag_finder")

    before = lake_counts(home)
    ingest_all_financerag(finrag, root)  # a second time: nothing changes
    assert lake_counts(home) == before


@pytest.mark.slow
def test_trec_fixtures_and_fincolbert_run_then_dbt_build(home: Path, finrag, shared_data: Path) -> None:
    tf = shared_data / "trec_eval_fixtures"
    finrag("ingest", "trec-qrels", str(tf / "qrels.test"), "--dataset", "trec_eval_test")
    finrag("ingest", "trec-run", str(tf / "results.test"), "--dataset", "trec_eval_test",
           "--run-id", "trec_results_test")
    lake = Lake(home)
    ev = lake.read("evidence")
    assert (ev.height, int((ev["relevance"] > 0).sum()), ev["question_id"].n_unique()) == (3681, 561, 3)
    assert set(ev["relevance"].unique()) == {0, 1}
    res = lake.read("retrieval_results", where={"run_id": "trec_results_test"})
    assert res.height == 1500 and res.group_by("question_id").len()["len"].to_list() == [500] * 3
    # rank = line order within the topic, whatever the file's rank column says
    lines = [ln.split() for ln in (tf / "results.test").read_text().splitlines()]
    t301 = [x for x in lines if x[0] == "301"]
    got = res.filter(res["question_id"] == "301").sort("rank")
    assert got["doc_id"].to_list() == [x[2] for x in t301]
    assert got["score"].to_list() == [float(x[4]) for x in t301]
    assert got["rank"].to_list() == list(range(1, 501))
    run = lake.read("retrieval_runs").row(0, named=True)
    raw = (tf / "results.test").read_bytes()
    assert (run["retriever"], run["source"], run["condition"], run["k"], run["config_hash"]) == (
        t301[0][5], "trec", "full", 500, hashlib.sha256(raw).hexdigest())
    assert json.loads(run["params"])["file"] == "results.test"

    # the FinColBERT run, per dataset, against the FinanceRAG queries/qrels/corpora
    root = shared_data / "financerag_icaif24"
    for d in ("FinanceBench", "FinQABench", "MultiHiertt"):
        finrag("ingest", "beir", "--dir", str(root / d), "--dataset", f"financerag_{d.lower()}")
    csv_run = root / "runs" / "fincolbert_combined_results.csv"
    out = finrag("ingest", "trec-run", str(csv_run), "--format", "financerag-csv", "--dataset",
                 "financerag_financebench", "--run-id", "fincolbert_financebench", "--only-known-questions")
    assert "skipped 33740 rows of 3374 questions" in out.stderr
    finrag("ingest", "trec-run", str(root / "runs" / "fincolbert_combined_results.derived.trec"), "--dataset",
           "financerag_finqabench", "--run-id", "fincolbert_finqabench", "--only-known-questions")
    finrag("ingest", "trec-run", str(csv_run), "--format", "financerag-csv", "--dataset", "financerag_multihiertt",
           "--run-id", "fincolbert_multihiertt", "--only-known-questions")
    runs = {r["run_id"]: r for r in Lake(home).read("retrieval_runs").iter_rows(named=True)}
    assert runs["fincolbert_financebench"]["retriever"] == "imported"  # the CSV carries no run tag
    assert runs["fincolbert_finqabench"]["retriever"] == "fincolbert"
    res = Lake(home).read("retrieval_results")
    n = {r: res.filter(res["run_id"] == r).height for r in runs}
    assert (n["fincolbert_financebench"], n["fincolbert_finqabench"], n["fincolbert_multihiertt"]) == (1500, 1000, 9740)
    # csv scores are 10 - index within the query, as the derived TREC file has them
    fb = res.filter(res["run_id"] == "fincolbert_financebench")
    assert sorted(set(fb["score"].to_list())) == [float(x) for x in range(1, 11)]
    assert fb.filter(fb["rank"] == 1)["score"].unique().to_list() == [10.0]

    before = lake_counts(home)
    finrag("ingest", "trec-run", str(csv_run), "--format", "financerag-csv", "--dataset", "financerag_financebench",
           "--run-id", "fincolbert_financebench", "--only-known-questions")
    finrag("ingest", "trec-qrels", str(tf / "qrels.test"), "--dataset", "trec_eval_test")
    assert lake_counts(home) == before

    dbt_build(home)
    got = dict(warehouse_query(home, "select dataset, count(*) from fct_evidence group by all"))
    assert got["trec_eval_test"] == 3681 and got["financerag_multihiertt"] == 1330


def test_trec_qrels_graded_grades_kept(home: Path, finrag, shared_data: Path) -> None:
    """qrels.rel_level grades run from -1 to 4: every one is kept as it is (metrics count rel > 0)."""
    path = shared_data / "trec_eval_fixtures" / "qrels.rel_level"
    rows = [ln.split() for ln in path.read_text().splitlines() if ln.strip()]
    finrag("ingest", "trec-qrels", str(path), "--dataset", "trec_eval_rel_level")
    ev = Lake(home).read("evidence")
    assert ev.height == len(rows)
    assert Counter(ev["relevance"].to_list()) == Counter(int(r[3]) for r in rows)
    assert set(ev["relevance"].unique()) == {-1, 0, 1, 2, 3, 4}
    # evidence_ordinal = order within the topic
    t = ev.filter(ev["question_id"] == rows[0][0]).sort("evidence_ordinal")
    assert t["doc_id"].to_list() == [r[2] for r in rows if r[0] == rows[0][0]]
