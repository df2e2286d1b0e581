"""LLM query-rewriting retrievers (hyde, multi_hyde, llm_expand) on the hand-made toy corpus (support/toy_corpus.py),
against the scripted OpenAI-compatible server on loopback: the HyDE vector checked against a numpy scan of the LanceDB
vectors (mean of the question's and the passages' vectors, renormalised), RRF fusion against the project's rrf over
numpy rankings, n distinct calls and a cached re-run, oracle_doc, a failing call's fallback, and strict parsing of
expansion replies. Real LanceDB, real MiniLM, real lake and LLM ledger; nothing mocked. Bad LLM options and
`finrag retrieve` with an LLM retriever: tests/integration/test_retrieve_hyde_cli.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import load_embedder
from python_jobs.corpus.lake_chunks import read_chunks
from python_jobs.llm.config import LLMConfig
from python_jobs.retrieval import Context, Hit, Query
from python_jobs.retrieval.bm25 import BM25Retriever
from python_jobs.retrieval.hybrid import rrf
from python_jobs.retrieval.llm_expand import parse_expansion
from support.fake_llm import Behaviour, FakeLLM
from support.query_rewriting import KEY, Q4_PASSAGE, TEXT, params
from support.retrieval_runs import retrieve
from support.toy_corpus import DATASET, FLAT, QUESTIONS, assert_reranked, land_flat_indexed, ranking, results

GLOBEX_CASH = f"GLOBEX_2023_10Q::{FLAT}::00002"


@pytest.fixture
def toy(home: Path) -> Lake:
    """This suite's toy lake: the flat chunking only, indexed (overrides conftest's `toy`)."""
    return land_flat_indexed(home)


def cfg(fake: FakeLLM) -> LLMConfig:
    return LLMConfig(base_url=fake.base_url, model="fake-model", api_key=KEY, timeout=2.0, max_attempts=2,
                     backoff_initial=0.01, backoff_max=0.05, concurrency=4)


def lance_matrix(home: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import lancedb

    db = lancedb.connect(str(home / "lance"))
    (name,) = list(db.list_tables().tables)
    vec = db.open_table(name).to_arrow().to_pandas()
    vec = vec[vec.chunker_id == FLAT]
    return np.stack(vec.vector.to_numpy()), vec.chunk_id.to_numpy(), vec.doc_id.to_numpy()


def replies(lake: Lake) -> dict[str, list[str]]:
    """Question text -> the passages the LLM ledger holds for it, by seed (successful calls only)."""
    out: dict[str, dict[int, str]] = {}
    calls = lake.read("llm_calls").filter(pl.col("error").is_null() & pl.col("response").is_not_null())
    for req, resp in calls.select("request", "response").iter_rows():
        body = json.loads(req)
        user = body["messages"][-1]["content"]
        q = next(t for t in TEXT.values() if f"Question: {t}" in user)
        out.setdefault(q, {})[body.get("seed", 0)] = json.loads(resp)["text"]
    return {q: [v[s] for s in sorted(v)] for q, v in out.items()}


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def test_hyde_searches_the_mean_of_question_and_passage_vectors(toy: Lake):
    h = toy.home
    plain = retrieve(h, DATASET, "dense", k=10, chunker_id=FLAT)
    assert ranking(toy, plain["run_id"], "q4")[0] != GLOBEX_CASH  # plain dense puts the quick-ratio page first
    b = Behaviour(script={TEXT["q4"]: Q4_PASSAGE})
    with FakeLLM(b) as fake:
        out = retrieve(h, DATASET, "hyde", k=10, chunker_id=FLAT, llm_config=cfg(fake))
    assert len(b.requests) == 5 and all(r["temperature"] == 0.0 and "seed" not in r for r in b.requests)
    assert ranking(toy, out["run_id"], "q4")[0] == GLOBEX_CASH
    # reference: original HyDE = mean(question vector, passage vector), cosine against every stored chunk vector
    m, ids, _ = lance_matrix(h)
    emb = load_embedder()
    passages = replies(toy)
    assert passages[TEXT["q4"]] == [Q4_PASSAGE]
    res = results(toy, out["run_id"])
    for qid, text, _ in QUESTIONS:
        v = unit((emb.encode_queries([text])[0] + emb.encode_documents(passages[text])[0]) / 2)
        sims = m @ v
        top = np.argsort(-sims)
        got = res.filter(pl.col("question_id") == qid)
        assert got["chunk_id"].to_list() == ids[top].tolist()
        assert got["score"].to_list() == pytest.approx(sims[top].tolist(), abs=1e-5)
    p = params(toy, out["run_id"])
    assert p["llm"]["prompt_template"].startswith("hyde_passage_v1@") and p["llm"]["llm_model"] == "fake-model"
    assert p["llm"]["llm_base_url_host"] == "127.0.0.1" and p["llm"]["llm_n"] == 1
    assert (p["n_llm_requests"], p["n_llm_calls_made"], p["n_llm_failed"]) == (5, 5, 0)
    assert KEY not in json.dumps(p) and p["embedder"] == "all-MiniLM-L6-v2"
    assert set(toy.read("llm_calls")["purpose"]) == {"hyde"}


def test_multi_hyde_makes_n_distinct_calls_reruns_from_cache_and_fuses(toy: Lake):
    h = toy.home
    b = Behaviour(script={TEXT["q4"]: Q4_PASSAGE})
    with FakeLLM(b) as fake:
        mean = retrieve(h, DATASET, "multi_hyde", k=10, chunker_id=FLAT, hyde_n=3, llm_config=cfg(fake))
        assert len(b.requests) == 15
        assert sorted(r["seed"] for r in b.requests) == [0] * 5 + [1] * 5 + [2] * 5
        assert {r["temperature"] for r in b.requests} == {0.7}
        cols = ["question_id", "rank", "chunk_id", "score"]
        first = results(toy, mean["run_id"]).select(cols)
        again = retrieve(h, DATASET, "multi_hyde", k=10, chunker_id=FLAT, hyde_n=3, llm_config=cfg(fake))
        assert len(b.requests) == 15  # the re-run is served from the llm_calls cache
        assert again["run_id"] == mean["run_id"] and results(toy, again["run_id"]).select(cols).equals(first)
        p = params(toy, again["run_id"])
        assert (p["n_llm_calls_made"], p["n_llm_cache_hits"], p["llm"]["llm_temperature"]) == (0, 15, 0.7)
        fused = retrieve(h, DATASET, "multi_hyde", k=10, chunker_id=FLAT, hyde_n=3, hyde_fusion="rrf",
                         rrf_k=60, llm_config=cfg(fake))
        assert len(b.requests) == 15 and fused["run_id"] != mean["run_id"]  # same passages, another config
    ledger = toy.read("llm_calls")
    # 15 calls; the two re-runs' 30 requests were served from the cache (cache rows, one per request hash)
    assert ledger.filter(pl.col("cache_hits") == 0).height == 15 and ledger["cache_hits"].sum() == 30
    m, ids, _ = lance_matrix(h)
    emb = load_embedder()
    passages = replies(toy)
    mean_res, rrf_res = results(toy, mean["run_id"]), results(toy, fused["run_id"])
    for qid, text, _ in QUESTIONS:
        assert len(passages[text]) == 3
        qv, pv = emb.encode_queries([text])[0], emb.encode_documents(passages[text])
        sims = m @ unit(np.vstack([qv[None], pv]).mean(axis=0))
        assert mean_res.filter(pl.col("question_id") == qid)["chunk_id"].to_list() == ids[np.argsort(-sims)].tolist()
        lists = [[Hit(ids[i], 0.0) for i in np.argsort(-(m @ v))] for v in [qv, *pv]]
        want = rrf(lists, 60)
        got = rrf_res.filter(pl.col("question_id") == qid)
        assert got["chunk_id"].to_list() == [x.chunk_id for x in want]
        assert got["score"].to_list() == pytest.approx([x.score for x in want])
    assert ranking(toy, mean["run_id"], "q4")[0] == GLOBEX_CASH
    assert params(toy, fused["run_id"])["llm"]["hyde_fusion"] == "rrf"


def test_oracle_doc_restricts_and_a_failed_call_falls_back_to_the_question(toy: Lake):
    h = toy.home
    gold_docs = {q: {d for d, _ in gold} for q, _, gold in QUESTIONS}
    plain = retrieve(h, DATASET, "dense", k=10, condition="oracle_doc", chunker_id=FLAT)
    b = Behaviour(script={TEXT["q4"]: Q4_PASSAGE}, always={TEXT["q1"]: "500"})
    with FakeLLM(b) as fake:
        out = retrieve(h, DATASET, "hyde", k=10, condition="oracle_doc", chunker_id=FLAT, llm_config=cfg(fake))
    res = results(toy, out["run_id"])
    assert out["skipped"] == 1 and "q5" not in res["question_id"].to_list()
    for qid, doc in res.select("question_id", "doc_id").iter_rows():
        assert doc in gold_docs[qid]
    assert res.group_by("question_id").len().sort("question_id")["len"].to_list() == [4, 3, 3, 3]
    assert ranking(toy, out["run_id"], "q4")[0] == GLOBEX_CASH
    # q1's call failed twice (max_attempts 2): searched with the plain question, so it ranks exactly as dense does
    q1 = res.filter(pl.col("question_id") == "q1").select("chunk_id", "score")
    want = results(toy, plain["run_id"]).filter(pl.col("question_id") == "q1").select("chunk_id", "score")
    assert q1["chunk_id"].to_list() == want["chunk_id"].to_list()
    assert q1["score"].to_list() == pytest.approx(want["score"].to_list(), abs=1e-5)
    p = params(toy, out["run_id"])
    assert (p["n_llm_requests"], p["n_llm_failed"], p["n_llm_calls_failed"]) == (4, 1, 1)
    calls = toy.read("llm_calls")
    assert calls.filter(pl.col("error").is_not_null()).height == 1  # the failure is in the ledger too


def test_parse_expansion_is_strict():
    assert parse_expansion('{"keywords": ["capex", "capital spending"], "paraphrases": ["ACME capex 2022"]}') == [
        "ACME capex 2022", "capex", "capital spending"]
    assert parse_expansion('```json\n{"keywords": ["capex", "capex"]}\n```') == ["capex"]
    for bad in ("capex, capital spending", '["capex"]', '{"keywords": [1, 2]}', '{"keywords": "capex"}',
                '{"keywords": [], "paraphrases": []}', '{"terms": ["capex"]}', "{}", "Sure! {\"keywords\": [\"x\"]}"):
        assert parse_expansion(bad) is None, bad


def test_llm_expand_in_front_of_bm25_and_dense(toy: Lake):
    h = toy.home
    script = {TEXT["q1"]: '{"keywords": ["capital expenditures", "data centers"], "paraphrases": []}',
              TEXT["q2"]: "Keywords: revenue, Globex",  # malformed: not JSON
              TEXT["q3"]: '```json\n{"keywords": ["free cash flow"], "paraphrases": ["Initech FCF 2021"]}\n```',
              TEXT["q4"]: '{"keywords": [95, 0.9]}'}  # malformed: not strings; q5 gets an echo reply (malformed)
    b = Behaviour(script=script)
    with FakeLLM(b) as fake:
        out = retrieve(h, DATASET, "llm_expand", k=3, chunker_id=FLAT, llm_config=cfg(fake))
        assert len(b.requests) == 5
        p = params(toy, out["run_id"])
        assert (p["first_stage"], p["n_expansion_malformed"], p["n_llm_failed"]) == ("bm25", 3, 0)
        # the first stage searched question + expansion terms, or the plain question for a malformed reply
        ctx = Context(h, DATASET, FLAT, read_chunks(toy, DATASET, FLAT), batch_size=64)
        expected = {"q1": f"{TEXT['q1']} capital expenditures data centers", "q2": TEXT["q2"],
                    "q3": f"{TEXT['q3']} Initech FCF 2021 free cash flow"}
        want = BM25Retriever(ctx, "top").search([Query(q, t) for q, t in expected.items()], 3)
        res = results(toy, out["run_id"])
        for (qid, _), hits in zip(expected.items(), want):
            got = res.filter(pl.col("question_id") == qid)
            assert got["chunk_id"].to_list() == [x.chunk_id for x in hits]
            assert got["score"].to_list() == pytest.approx([x.score for x in hits])
        # the expansion pulled in Initech's capex page (it shares "data centers") for the ACME question
        assert f"INITECH_2021_10K::{FLAT}::00001" in ranking(toy, out["run_id"], "q1")[:2]
        dense = retrieve(h, DATASET, "llm_expand", k=10, condition="oracle_page", chunker_id=FLAT,
                         first_stage="dense", llm_config=cfg(fake))
        assert len(b.requests) == 5  # same prompts: all from the cache
    pd = params(toy, dense["run_id"])
    assert (pd["first_stage"], pd["embedder"], pd["n_llm_cache_hits"], pd["n_skipped"]) == (
        "dense", "all-MiniLM-L6-v2", 4, 1)
    gold_pages = {q: set(gold) for q, _, gold in QUESTIONS}
    for qid, doc, p0 in results(toy, dense["run_id"]).select("question_id", "doc_id", "page_start").iter_rows():
        assert (doc, p0) in gold_pages[qid]


@pytest.mark.slow
def test_rerank_over_multi_hyde_rescores_its_top_n_and_asks_the_llm_what_multi_hyde_asked(toy: Lake,
                                                                                          tmp_path: Path):
    """Dense + Multi-HyDE + ReRanker (the retrieval-gap study's Table 1): multi_hyde as a rerank's first stage. The
    rerank run's candidates are the multi_hyde run's top N, ordered by the cross-encoder's scores; its LLM calls
    are the multi_hyde run's (the same prompts and seeds: all served from the llm_calls cache)."""
    from support.models import build_local_cross_encoder

    ce_dir = build_local_cross_encoder(tmp_path / "minilm-ce", seed=7)
    h = toy.home
    b = Behaviour(script={TEXT["q4"]: Q4_PASSAGE})
    with FakeLLM(b) as fake:
        first = retrieve(h, DATASET, "multi_hyde", k=4, chunker_id=FLAT, hyde_n=2, llm_config=cfg(fake))
        calls = len(b.requests)
        rr = retrieve(h, DATASET, "rerank", k=2, chunker_id=FLAT, first_stage="multi_hyde", top_n=4, hyde_n=2,
                      reranker=str(ce_dir), llm_config=cfg(fake))
        assert len(b.requests) == calls == 2 * len(QUESTIONS)  # nothing asked again
    p = params(toy, rr["run_id"])
    assert (p["n_llm_calls_made"], p["n_llm_cache_hits"]) == (0, calls) and p["top_n"] == 4
    assert_reranked(toy, first["run_id"], rr["run_id"], ce_dir, k=2)
