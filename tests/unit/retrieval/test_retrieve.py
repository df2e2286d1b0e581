"""Retrieval runs on a small hand-made corpus landed straight into the lake: BM25 against the Lucene formula worked
by hand, dense against a numpy scan of the LanceDB vectors, RRF, rerank, parent-child, keywords, the oracle
conditions, run ids and params, and bad input. Real LanceDB, real models, real lake; nothing mocked."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.corpus.indexing import index_chunks
from python_jobs.retrieval import Hit
from python_jobs.retrieval.finance_tokenizer import tokenize
from python_jobs.retrieval.hybrid import rrf
from support.models import build_local_cross_encoder
from support.retrieval_runs import retrieve
from support.toy_corpus import DATASET, FLAT, PAGES, PC, QUESTIONS, assert_reranked, ranking, results


@pytest.fixture
def toy_indexed(toy: Lake) -> Lake:
    index_chunks(toy, DATASET, FLAT, progress=False)
    index_chunks(toy, DATASET, PC, progress=False)
    return toy


# ---- tokenizer ---------------------------------------------------------------------------------------------------
def test_finance_tokenizer_keeps_numbers_years_forms_tickers():
    assert tokenize("3M's FY2018 capex was $1,577.00 million (10-K); margin 12.5%, AMD Q2 2Q22 (12)") == [
        "3m", "fy2018", "2018", "capex", "1577", "million", "10-k", "margin", "12.5", "12.5%", "amd", "q2", "2q22", "12"
    ]
    assert tokenize("ACME's") == ["acme"]
    assert tokenize("The revenues and liabilities of the S&P 500") == ["revenue", "liability", "s&p", "500"]


# ---- BM25 ------------------------------------------------------------------------------------------------------
def lucene_bm25(query: list[str], docs: list[list[str]], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """Lucene's BM25 worked out directly: idf = ln(1 + (N - df + .5) / (df + .5)), and (since Lucene 8) no
    (k1 + 1) factor in the numerator, which does not change the ranking."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    df = Counter(t for d in docs for t in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for t in query:  # bm25s scores each query token occurrence (duplicates count twice)
            if tf[t]:
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                s += idf * tf[t] / (tf[t] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return out


def test_bm25_scores_match_hand_computed_lucene_bm25(toy: Lake):
    out = retrieve(toy.home, DATASET, "bm25", k=3, chunker_id=FLAT)
    res = results(toy, out["run_id"])
    chunks = toy.read_partition("chunks", f"{DATASET}.{FLAT}").sort("doc_id", "ordinal")
    docs = [tokenize(t) for t in chunks["text"].to_list()]
    for qid, text, _ in QUESTIONS:
        want = lucene_bm25(tokenize(text), docs)
        order = sorted((i for i in range(len(docs)) if want[i] > 0), key=lambda i: -want[i])[:3]
        got = res.filter(pl.col("question_id") == qid)
        assert got["chunk_id"].to_list() == [chunks["chunk_id"][i] for i in order], qid
        assert got["score"].to_list() == pytest.approx([want[i] for i in order], rel=1e-5), qid
        assert got["rank"].to_list() == list(range(1, len(order) + 1))
    assert ranking(toy, out["run_id"], "q1")[0] == f"ACME_2022_10K::{FLAT}::00001"
    # doc / page columns come from the chunk
    row = res.filter(pl.col("question_id") == "q1").row(0, named=True)
    assert (row["doc_id"], row["page_start"], row["page_end"]) == ("ACME_2022_10K", 1, 1)


# ---- runs as artifacts ---------------------------------------------------------------------------------------------
def test_run_id_from_config_hash_params_and_idempotent_rerun(toy: Lake):
    a = retrieve(toy.home, DATASET, "bm25", k=3, chunker_id=FLAT)
    first = results(toy, a["run_id"])
    b = retrieve(toy.home, DATASET, "bm25", k=3, chunker_id=FLAT)
    assert a["run_id"] == b["run_id"] and a["run_id"].startswith(f"{DATASET}-bm25-full-")
    assert toy.partitions("retrieval_runs") == [a["run_id"]]
    assert results(toy, a["run_id"]).drop("created_at").equals(first.drop("created_at"))
    c = retrieve(toy.home, DATASET, "bm25", k=2, chunker_id=FLAT)
    assert c["run_id"] != a["run_id"]
    run = toy.read_partition("retrieval_runs", a["run_id"]).row(0, named=True)
    params = json.loads(run["params"])
    assert run["source"] == "finrag" and run["condition"] == "full" and run["k"] == 3 and run["embedder"] is None
    assert params["retriever"] == "bm25" and params["chunker_id"] == FLAT and params["n_queried"] == 5
    assert params["versions"]["bm25s"] == "0.3.16" and params["versions"]["lancedb"]
    assert len(run["config_hash"]) == 64 and a["run_id"].endswith(run["config_hash"][:10])
    d = retrieve(toy.home, DATASET, "bm25", k=3, chunker_id=FLAT, run_id="my-run")
    assert d["run_id"] == "my-run" and results(toy, "my-run")["chunk_id"].equals(first["chunk_id"])


# ---- dense -------------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_dense_matches_numpy_scan_of_the_lance_vectors(toy_indexed: Lake):
    import lancedb

    from python_jobs.corpus.encoders import load_embedder

    out = retrieve(toy_indexed.home, DATASET, "dense", k=4, chunker_id=FLAT, batch_size=2)
    db = lancedb.connect(str(toy_indexed.home / "lance"))
    (name,) = [t for t in db.list_tables().tables]
    vec = db.open_table(name).to_arrow().to_pandas()
    vec = vec[(vec.chunker_id == FLAT)]
    m = np.stack(vec.vector.to_numpy())
    emb = load_embedder()
    q = emb.encode_queries([t for _, t, _ in QUESTIONS])
    res = results(toy_indexed, out["run_id"])
    for i, (qid, _, _) in enumerate(QUESTIONS):
        sims = m @ q[i]
        top = np.argsort(-sims)[:4]
        got = res.filter(pl.col("question_id") == qid)
        assert got["chunk_id"].to_list() == vec.chunk_id.to_numpy()[top].tolist()
        assert got["score"].to_list() == pytest.approx(sims[top].tolist(), abs=1e-5)
    assert ranking(toy_indexed, out["run_id"], "q1")[0] == f"ACME_2022_10K::{FLAT}::00001"
    run = toy_indexed.read_partition("retrieval_runs", out["run_id"]).row(0, named=True)
    assert run["embedder"] == "all-MiniLM-L6-v2"


@pytest.mark.slow
def test_oracle_conditions_restrict_candidates_and_skip_questions_without_evidence(toy_indexed: Lake):
    gold_docs = {q: {d for d, _ in gold} for q, _, gold in QUESTIONS}
    gold_pages = {q: set(gold) for q, _, gold in QUESTIONS}
    for retriever in ("bm25", "dense", "hybrid"):
        doc_run = retrieve(toy_indexed.home, DATASET, retriever, k=10, condition="oracle_doc", chunker_id=FLAT)
        res = results(toy_indexed, doc_run["run_id"])
        assert doc_run["skipped"] == 1 and "q5" not in res["question_id"].to_list()
        for qid, doc in res.select("question_id", "doc_id").iter_rows():
            assert doc in gold_docs[qid]
        if retriever != "bm25":  # dense ranks every candidate: all of the gold doc's chunks
            n = res.group_by("question_id").len().sort("question_id")["len"].to_list()
            assert n == [4, 3, 3, 3]
        page_run = retrieve(toy_indexed.home, DATASET, retriever, k=10, condition="oracle_page",
                            chunker_id=FLAT)
        res = results(toy_indexed, page_run["run_id"])
        for qid, doc, p0, p1 in res.select("question_id", "doc_id", "page_start", "page_end").iter_rows():
            assert any(d == doc and p0 <= p <= p1 for d, p in gold_pages[qid])
        if retriever != "bm25":
            assert sorted(res.filter(pl.col("question_id") == "q4")["page_start"].to_list()) == [1, 2]


# ---- hybrid ------------------------------------------------------------------------------------------------------
def test_rrf_hand_worked():
    a = [Hit("x", 9.0), Hit("y", 5.0), Hit("z", 1.0)]
    b = [Hit("y", 0.9), Hit("w", 0.8)]
    fused = rrf([a, b], rrf_k=60)
    assert [h.chunk_id for h in fused] == ["y", "x", "w", "z"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1].score == pytest.approx(1 / 61)
    assert fused[2].score == pytest.approx(1 / 62) and fused[3].score == pytest.approx(1 / 63)
    # w and z: 1/62 > 1/63; a tie keeps the better single-list rank
    tie = rrf([[Hit("p", 1)], [Hit("q", 1)]], rrf_k=1)
    assert [h.chunk_id for h in tie] == ["p", "q"] and tie[0].score == tie[1].score == 0.5


@pytest.mark.slow
def test_hybrid_run_fuses_the_landed_bm25_and_dense_runs(toy_indexed: Lake):
    h = toy_indexed.home
    kw = dict(chunker_id=FLAT)
    b = retrieve(h, DATASET, "bm25", k=100, **kw)
    d = retrieve(h, DATASET, "dense", k=100, **kw)
    hy = retrieve(h, DATASET, "hybrid", k=5, rrf_k=10, **kw)
    for qid, _, _ in QUESTIONS:
        bl = [Hit(c, 0) for c in ranking(toy_indexed, b["run_id"], qid)]
        dl = [Hit(c, 0) for c in ranking(toy_indexed, d["run_id"], qid)]
        want = rrf([bl, dl], rrf_k=10)[:5]
        got = results(toy_indexed, hy["run_id"]).filter(pl.col("question_id") == qid)
        assert got["chunk_id"].to_list() == [x.chunk_id for x in want]
        assert got["score"].to_list() == pytest.approx([x.score for x in want])
    params = json.loads(toy_indexed.read_partition("retrieval_runs", hy["run_id"])["params"][0])
    assert params["rrf_k"] == 10 and params["top_n"] == 100


# ---- parent-child ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_parent_child_returns_deduplicated_parents_in_best_child_order(toy_indexed: Lake):
    h = toy_indexed.home
    children = retrieve(h, DATASET, "bm25", k=100, chunker_id=PC)  # bm25 on parents (top level)
    pcrun = retrieve(h, DATASET, "parent_child", k=3, chunker_id=PC, first_stage="bm25")
    chunks = toy_indexed.read_partition("chunks", f"{DATASET}.{PC}")
    parent_of = dict(zip(chunks["chunk_id"].to_list(), chunks["parent_chunk_id"].to_list()))
    res = results(toy_indexed, pcrun["run_id"])
    assert all(parent_of[c] is None for c in res["chunk_id"].to_list())
    assert res.select("question_id", "chunk_id").is_unique().all()
    # hand-check q1 against BM25 over the children alone
    kids = chunks.filter(pl.col("parent_chunk_id").is_not_null()).sort("doc_id", "ordinal")
    s = lucene_bm25(tokenize(QUESTIONS[0][1]), [tokenize(t) for t in kids["text"].to_list()])
    best = sorted((i for i in range(len(s)) if s[i] > 0), key=lambda i: -s[i])
    want = list(dict.fromkeys(kids["parent_chunk_id"][i] for i in best))[:3]
    assert ranking(toy_indexed, pcrun["run_id"], "q1") == want
    assert want[0] == f"ACME_2022_10K::{PC}::00000"
    row = res.filter(pl.col("question_id") == "q1").row(0, named=True)
    assert (row["page_start"], row["page_end"]) == (0, 1)  # the parent's span, not the child's
    assert children["run_id"] != pcrun["run_id"]
    dense_pc = retrieve(h, DATASET, "parent_child", k=3, chunker_id=PC)
    assert all(parent_of[c] is None for c in results(toy_indexed, dense_pc["run_id"])["chunk_id"].to_list())


def test_parent_child_needs_child_chunks(toy: Lake):
    with pytest.raises(InputError, match="no child chunks"):
        retrieve(toy.home, DATASET, "parent_child", k=3, chunker_id=FLAT, first_stage="bm25")
    assert toy.partitions("retrieval_runs") == []


# ---- rerank ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory) -> Path:
    return build_local_cross_encoder(tmp_path_factory.mktemp("ce") / "minilm-ce", seed=7)


@pytest.mark.slow
def test_rerank_rescores_first_stage_top_n_with_the_cross_encoder(toy: Lake, cross_encoder_dir: Path):
    h = toy.home
    first = retrieve(h, DATASET, "bm25", k=4, chunker_id=FLAT)
    rr = retrieve(h, DATASET, "rerank", k=2, chunker_id=FLAT, first_stage="bm25", top_n=4,
                  reranker=str(cross_encoder_dir))
    assert_reranked(toy, first["run_id"], rr["run_id"], cross_encoder_dir, k=2)
    run = toy.read_partition("retrieval_runs", rr["run_id"]).row(0, named=True)
    assert run["reranker"] == str(cross_encoder_dir) and json.loads(run["params"])["top_n"] == 4


def test_rerank_without_a_cross_encoder_is_an_input_error(toy: Lake):
    with pytest.raises(InputError, match="--reranker"):
        retrieve(toy.home, DATASET, "rerank", k=2, chunker_id=FLAT, first_stage="bm25")
    with pytest.raises(InputError, match="cannot load model"):
        retrieve(toy.home, DATASET, "rerank", k=2, chunker_id=FLAT, first_stage="bm25",
                 reranker="nobody/no-such-cross-encoder")
    assert toy.partitions("retrieval_results") == []


# ---- keywords ----------------------------------------------------------------------------------------------------
def test_keyword_expansion_hand_checked(toy: Lake):
    from python_jobs.retrieval import Context, Query, RetrieverTree

    chunks = toy.read_partition("chunks", f"{DATASET}.{FLAT}")
    ctx = Context(toy.home, DATASET, FLAT, chunks, batch_size=64, progress=False)
    kw = RetrieverTree.of("keywords", {"n_keywords": 3, "feedback_docs": 1, "feedback_terms": 2}).build(ctx, k=3)
    (words,) = kw.keywords([Query("q1", "What were ACME's capital expenditures in FY2022?")])
    # own terms: rarest first (acme's, fy2022, capital/expenditure/2022 by IDF), then feedback terms of the top hit
    own = words[:3]
    assert set(own) <= {"acme", "fy2022", "2022", "capital", "expenditure", "were"} and "fy2022" in own
    assert len(words) == 5 and all(w in tokenize(PAGES[1][2]) for w in words[3:])
    out = retrieve(toy.home, DATASET, "keywords", k=3, chunker_id=FLAT, n_keywords=3, feedback_docs=1,
                   feedback_terms=2)
    assert ranking(toy, out["run_id"], "q1")[0] == f"ACME_2022_10K::{FLAT}::00001"
    params = json.loads(toy.read_partition("retrieval_runs", out["run_id"])["params"][0])
    assert params["first_stage"] == "bm25" and params["n_keywords"] == 3 and params["embedder"] is None


# ---- bad input ---------------------------------------------------------------------------------------------------
def test_bad_input_names_the_field_and_lands_nothing(toy: Lake):
    with pytest.raises(InputError, match="several chunkers") as e:
        retrieve(toy.home, DATASET, "bm25", k=3)
    assert e.value.field == "chunker_id"
    with pytest.raises(InputError, match="no chunks for dataset 'nope'"):
        retrieve(toy.home, "nope", "bm25", k=3)
    with pytest.raises(InputError, match="finrag index"):
        retrieve(toy.home, DATASET, "dense", k=3, chunker_id=FLAT)
    with pytest.raises(InputError, match="greater than or equal to 1") as e:
        retrieve(toy.home, DATASET, "bm25", k=0, chunker_id=FLAT)
    assert e.value.field == "k"
    with pytest.raises(InputError, match="run id"):
        retrieve(toy.home, DATASET, "bm25", k=3, chunker_id=FLAT, run_id="../escape")
    assert toy.partitions("retrieval_runs") == [] and toy.partitions("retrieval_results") == []
