"""FinanceBench at three granularities: DocRec@k / PageRec@k by question type and doc type, chunk-level relevance
derived from page-level qrels, and the oracle gap.

The questions, evidence pages and document attributes are the real FinanceBench files, ingested with `finrag
ingest financebench`. The chunks (two-page windows over every gold document) and the runs (a full-corpus run and
its oracle_doc counterpart) are generated here from a fixed seed, so that a plain-Python reference of the SPEC's
definitions can score the same rankings independently of the SQL."""

from __future__ import annotations

import json
import random
import statistics
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.cli import dbt_build
from support.warehouse import warehouse_query

CHUNKER = "test-2page"
K = 5
DOC_TYPES = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "Earnings": "earnings_call",
             "10k_annualreport": "annual_report"}


def load_financebench(root: Path) -> tuple[list[dict], dict[str, dict]]:
    questions = [json.loads(line) for line in (root / "financebench_open_source.jsonl").read_text().splitlines()]
    docs = {d["doc_name"]: d for d in map(json.loads, (root / "financebench_document_information.jsonl")
                                            .read_text().splitlines())}
    return questions, docs


def make_chunks(questions: list[dict]) -> dict[str, list[tuple[str, int, int]]]:
    """Two-page windows stepping one page, over each gold document up to 3 pages past its last gold page."""
    last_page: dict[str, int] = defaultdict(int)
    for q in questions:
        for e in q["evidence"]:
            last_page[e["doc_name"]] = max(last_page[e["doc_name"]], e["evidence_page_num"])
    return {doc: [(f"{doc}::{CHUNKER}::{p:05d}", p, p + 1) for p in range(last + 3)] for doc, last in last_page.items()}


def make_run(
    questions: list[dict], chunks: dict, oracle_doc: bool, seed: int
) -> dict[str, list[tuple[str, str, int, int]]]:
    """Per question, 10 results (chunk_id, doc_id, page_start, page_end): chunks of its gold doc and, unless the
    run is oracle_doc, of other documents, shuffled."""
    rng = random.Random(seed)
    all_chunks = [(cid, doc, s, e) for doc, cs in sorted(chunks.items()) for cid, s, e in cs]
    run = {}
    for q in questions:
        gold = [(cid, q["doc_name"], s, e) for cid, s, e in chunks[q["doc_name"]]]
        if oracle_doc:  # search restricted to the gold document: at most 10 of its chunks (fewer when it has fewer)
            picked = rng.sample(gold, min(len(gold), 10))
        else:
            picked = rng.sample(gold, min(len(gold), 3))
            while len(picked) < 10:
                extra = rng.choice(all_chunks)
                if extra not in picked:
                    picked.append(extra)
        rng.shuffle(picked)
        run[q["financebench_id"]] = picked
    return run


def reference_rec(question: dict, results: list[tuple[str, str, int, int]], k: int) -> tuple[float, float]:
    """DocRec@k and PageRec@k as the retrieval-gap study defines them: over the top-k results."""
    gold_docs = {e["doc_name"] for e in question["evidence"]}
    gold_pages = {(e["doc_name"], e["evidence_page_num"]) for e in question["evidence"]}
    top = results[:k]
    docs = {doc for _, doc, _, _ in top}
    pages = {(doc, p) for _, doc, s, e in top for p in range(s, e + 1)}
    return len(gold_docs & docs) / len(gold_docs), len(gold_pages & pages) / len(gold_pages)


def land_runs(home: Path, chunks: dict, runs: dict[str, tuple[str, dict]]) -> None:
    chunk_rows = [
        {"chunk_id": cid, "doc_id": doc, "dataset": "financebench", "chunker_id": CHUNKER, "ordinal": s,
         "page_start": s, "page_end": e, "text": f"{doc} pages {s}-{e}"}
        for doc, cs in chunks.items() for cid, s, e in cs
    ]
    frames = [("chunks", f"financebench.{CHUNKER}", pl.DataFrame(chunk_rows))]
    for run_id, (condition, run) in runs.items():
        frames.append(("retrieval_runs", run_id, pl.DataFrame([{
            "run_id": run_id, "dataset": "financebench", "retriever": "seeded-shuffle", "condition": condition,
            "k": 10, "chunker_id": CHUNKER, "params": "{}", "config_hash": "seeded-shuffle",
            "config_id": "seeded-shuffle", "source": "finrag"}])))
        frames.append(("retrieval_results", run_id, pl.DataFrame([
            {"run_id": run_id, "question_id": qid, "dataset": "financebench", "rank": rank, "chunk_id": cid,
             "doc_id": doc, "page_start": s, "page_end": e, "score": 1.0 / rank}
            for qid, results in run.items() for rank, (cid, doc, s, e) in enumerate(results, 1)
        ], schema_overrides={"rank": pl.Int32, "page_start": pl.Int32, "page_end": pl.Int32})))
    Lake(home).land(frames)


@pytest.mark.slow
def test_financebench_docrec_pagerec_by_slice(home, finrag, shared_data):
    root = shared_data / "financebench" / "data"
    finrag("ingest", "financebench", "--questions", str(root / "financebench_open_source.jsonl"),
           "--documents", str(root / "financebench_document_information.jsonl"))
    questions, docs = load_financebench(root)
    chunks = make_chunks(questions)
    full, oracle = make_run(questions, chunks, False, seed=7), make_run(questions, chunks, True, seed=8)
    land_runs(home, chunks, {"fb_full": ("full", full), "fb_oracle_doc": ("oracle_doc", oracle)})
    dbt_build(home, "--select", "+mart_retrieval_by_slice", "+mart_oracle_gap", "--indirect-selection", "cautious")

    # the reference: per-question DocRec@5 / PageRec@5, averaged by question type and by doc type
    expected: dict[tuple[str, str, str], float] = {}
    for dimension, value_of in (("question_type", lambda q: q["question_type"]),
                                ("doc_type", lambda q: DOC_TYPES[docs[q["doc_name"]]["doc_type"]])):
        groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for q in questions:
            groups[value_of(q)].append(reference_rec(q, full[q["financebench_id"]], K))
        for value, recs in groups.items():
            expected[(dimension, value, "doc_rec")] = statistics.fmean(r[0] for r in recs)
            expected[(dimension, value, "page_rec")] = statistics.fmean(r[1] for r in recs)
    assert len({v for d, v, _ in expected if d == "question_type"}) == 3
    assert len({v for d, v, _ in expected if d == "doc_type"}) >= 3

    out = finrag("report", "--run-id", "fb_full", "--format", "json", "--slice", "question_type", "--slice",
                 "doc_type", "--metric", "doc_rec", "--metric", "page_rec", "--k", str(K)).stdout
    rows = json.loads(out)
    got = {(r["dimension"], r["dimension_value"], r["metric"]): r for r in rows}
    assert set(got) == set(expected)
    for key, value in expected.items():
        assert got[key]["mean"] == pytest.approx(value, abs=1e-12), key
        assert got[key]["granularity"] == ("doc" if key[2] == "doc_rec" else "page")
    assert sum(r["n_questions"] for (d, _, m), r in got.items() if d == "question_type" and m == "doc_rec") == 150
    table = finrag("report", "--run-id", "fb_full", "--slice", "question_type", "--metric", "page_rec",
                   "--k", str(K)).stdout
    assert "metrics-generated" in table and "page_rec" in table

    # chunk-level relevance from page qrels: R = the chunks of the run's chunker covering a gold page
    r_by_question = dict(warehouse_query(home, """
        select question_id, n_relevant from fct_retrieval_question_scores
        where run_id = 'fb_full' and granularity = 'chunk' and k = 0"""))
    for q in questions:
        gold_pages = {(e["doc_name"], e["evidence_page_num"]) for e in q["evidence"]}
        covering = {cid for doc, p in gold_pages for cid, s, e in chunks[doc] if s <= p <= e}
        assert r_by_question[q["financebench_id"]] == len(covering), q["financebench_id"]

    # the oracle gap: the oracle_doc run keeps every result in the gold doc, so its DocRec@5 is 1
    gap = warehouse_query(home, f"""
        select mean, oracle_doc_run_id, oracle_doc_mean, oracle_doc_gap, oracle_page_run_id
        from mart_oracle_gap where run_id = 'fb_full' and granularity = 'doc' and metric = 'doc_rec' and k = {K}""")
    full_mean = statistics.fmean(reference_rec(q, full[q["financebench_id"]], K)[0] for q in questions)
    assert gap == [(pytest.approx(full_mean, abs=1e-12), "fb_oracle_doc", 1.0,
                    pytest.approx(1.0 - full_mean, abs=1e-12), None)]
