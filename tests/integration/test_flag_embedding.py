"""The `flag:` paths users take with BGE-M3 / bge-reranker-v2-m3, run here on the packaged MiniLM weights loaded from
their local directory (FlagEmbedding installed, nothing downloaded): the embedder indexes and searches through the
CLI, the reranker re-scores a first stage, and both equal FlagEmbedding's own models called directly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from python_jobs.corpus.encoders import default_model_path
from python_jobs.corpus.vectors import VectorStore, sql_str, table_name
from support.models import build_local_cross_encoder
from support.toy_corpus import DATASET, FLAT, QUESTIONS, land_corpus, ranking, results

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm_dir() -> str:
    return default_model_path()


@pytest.fixture(scope="module")
def flag_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_local_cross_encoder(tmp_path_factory.mktemp("flag-ce") / "minilm-ce", seed=11)


def test_flag_embedder_indexes_and_searches_like_flagmodel(home: Path, finrag, minilm_dir: str) -> None:
    from FlagEmbedding import FlagModel

    lake = land_corpus(home, parent_child=False)
    embedder = f"flag:{minilm_dir}"
    finrag("index", "--dataset", DATASET, "--chunker-id", FLAT, "--embedder", embedder)
    out = finrag("retrieve", "--retriever", "dense", "--dataset", DATASET, "--chunker-id", FLAT, "--k", "3",
                 "--embedder", embedder)
    run_id = out.stdout.strip()
    run = lake.read_partition("retrieval_runs", run_id).row(0, named=True)
    assert run["embedder"] == embedder

    # the reference: FlagEmbedding's own model on the same local weights
    model = FlagModel(minilm_dir, devices="cpu")
    chunks = lake.read_partition("chunks", f"{DATASET}.{FLAT}").sort("chunk_id")
    docs = np.asarray(model.encode(chunks["text"].to_list()), dtype=np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    table = VectorStore(home).open(table_name(embedder, "window"))
    stored = (table.search().where(f"dataset = {sql_str(DATASET)} AND chunker_id = {sql_str(FLAT)}")
              .select(["chunk_id", "vector"]).limit(None).to_arrow())
    by_id = dict(zip(stored["chunk_id"].to_pylist(), stored["vector"].to_pylist(), strict=True))
    got = np.asarray([by_id[c] for c in chunks["chunk_id"]], dtype=np.float32)
    assert np.abs(got - docs).max() < 1e-4  # short chunks: one window each, so the average is the vector
    for qid, text, _ in QUESTIONS:
        q = np.asarray(model.encode_queries([text]), dtype=np.float32)[0]
        q /= np.linalg.norm(q)
        expect = [chunks["chunk_id"][int(i)] for i in np.argsort(-(docs @ q), kind="stable")[:3]]
        assert ranking(lake, run_id, qid) == expect


def test_flag_reranker_rescores_like_flagreranker(home: Path, finrag, flag_cross_encoder: Path) -> None:
    from FlagEmbedding import FlagReranker

    lake = land_corpus(home, parent_child=False)
    first = finrag("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--chunker-id", FLAT, "--k", "4")
    first_id = first.stdout.strip()
    reranker = f"flag:{flag_cross_encoder}"
    out = finrag("retrieve", "--retriever", "rerank", "--first-stage", "bm25", "--top-n", "4", "--dataset", DATASET,
                 "--chunker-id", FLAT, "--k", "2", "--reranker", reranker)
    run_id = out.stdout.strip()
    run = lake.read_partition("retrieval_runs", run_id).row(0, named=True)
    assert run["reranker"] == reranker and json.loads(run["params"])["top_n"] == 4

    model = FlagReranker(str(flag_cross_encoder), devices="cpu")
    texts = dict(lake.read_partition("chunks", f"{DATASET}.{FLAT}").select("chunk_id", "text").iter_rows())
    res = results(lake, run_id)
    for qid, text, _ in QUESTIONS:
        cands = ranking(lake, first_id, qid)
        # the rerank stage lands FlagReranker's normalised scores (the logit's sigmoid), as CrossEncoder does
        scores = np.asarray(model.compute_score([[text, texts[c]] for c in cands], normalize=True),
                            dtype=np.float64).reshape(-1)
        order = sorted(range(len(cands)), key=lambda i: (-scores[i], i))[:2]
        got = res.filter(pl.col("question_id") == qid)
        assert got["chunk_id"].to_list() == [cands[i] for i in order]
        assert got["score"].to_list() == pytest.approx([float(scores[i]) for i in order], abs=1e-5)
