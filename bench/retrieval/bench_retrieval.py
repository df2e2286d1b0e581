"""Retrieval throughput on synthetic data (run by hand; not part of the test suite).

    .venv/bin/python bench/retrieval/bench_retrieval.py [--n-chunks 100000] [--n-queries 500] [--embed-chunks 256]

Prints, for one run on this machine:
- BM25 (bm25s + the finance tokenizer, the code `finrag retrieve` runs): index build time and queries/s,
  batched top-10 over N synthetic chunks;
- dense top-10 over N vectors, the same vectors three ways: LanceDB exact scan (the `flat` default, one search per
  query batch), LanceDB IVF_PQ (`ann`; build time, recall@10 against exact), and a numpy brute-force scan
  (matrix product + argpartition) — search only, query vectors precomputed; plus query encoding alone;
- embedding throughput: chunks/s of `finrag index`'s path (index_chunks into a scratch LanceDB, windows, appends)
  versus the model's raw `encode` on the same texts, for short (one-window) and long (1024-token) chunks.
The synthetic vectors are random unit vectors (search cost does not depend on what they mean); the texts are
finance-like word salad with numbers, so BM25 posting lists have realistic skew.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

# before the project's imports: huggingface_hub reads it when it is imported
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from python_jobs.corpus.encoders import load_embedder  # noqa: E402
from python_jobs.corpus.vectors import VectorStore, schema, search  # noqa: E402
from python_jobs.retrieval import Corpus  # noqa: E402
from python_jobs.retrieval.bm25 import BM25Index  # noqa: E402
from python_jobs.retrieval.finance_tokenizer import tokenize  # noqa: E402

WORDS = ("revenue income margin operating net cash flow capital expenditure dividend share repurchase debt interest "
         "expense tax rate segment growth inventory receivable payable goodwill impairment lease liability asset "
         "equity depreciation amortization guidance quarter fiscal year acquisition restructuring pension risk "
         "currency exchange hedge derivative covenant liquidity credit facility note bond rating customer supplier "
         "backlog order pricing cost sales gross ebitda adjusted diluted earnings per basic weighted average").split()


def synth_texts(n: int, words: int, rng: np.random.Generator) -> list[str]:
    # Zipf-like word choice: a few words everywhere, many rare ones (like real filings)
    p = 1 / np.arange(1, len(WORDS) + 1)
    p /= p.sum()
    out = []
    for _ in range(n):
        w = rng.choice(WORDS, size=words, p=p).tolist()
        w[rng.integers(words)] = f"{rng.integers(1, 9999):,}"
        w[rng.integers(words)] = f"fy{rng.integers(2015, 2025)}"
        out.append(" ".join(w))
    return out


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.1f}/s ({seconds:.2f} s for {n:,})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-chunks", type=int, default=100_000)
    ap.add_argument("--n-queries", type=int, default=500)
    ap.add_argument("--embed-chunks", type=int, default=256)
    ap.add_argument("--batch-size", type=int, default=64)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"# retrieval benchmark: {a.n_chunks:,} chunks, {a.n_queries} queries, {os.cpu_count()} CPUs")

    # ---- BM25 ---------------------------------------------------------------------------------------------------
    texts = synth_texts(a.n_chunks, 60, rng)
    frame = pl.DataFrame({"chunk_id": [f"c{i}" for i in range(a.n_chunks)],
                          "doc_id": [f"d{i // 50}" for i in range(a.n_chunks)],
                          "page_start": [0] * a.n_chunks, "page_end": [0] * a.n_chunks, "text": texts,
                          "parent_chunk_id": [None] * a.n_chunks})
    queries = synth_texts(a.n_queries, 8, rng)
    t = time.perf_counter()
    index = BM25Index(Corpus(frame))
    print(f"bm25 index build: {rate(a.n_chunks, time.perf_counter() - t)} chunks")
    t = time.perf_counter()
    toks = [tokenize(q) for q in queries]
    hits = index.search_tokens(toks, [None] * len(toks), 10)
    print(f"bm25 top-10 search (batched, incl. tokenizing): {rate(a.n_queries, time.perf_counter() - t)} queries")
    assert all(len(h) == 10 for h in hits)

    # ---- dense --------------------------------------------------------------------------------------------------
    emb = load_embedder()
    t = time.perf_counter()
    qv = emb.encode_queries(queries, batch_size=a.batch_size)
    print(f"query encoding (MiniLM, batch {a.batch_size}): {rate(a.n_queries, time.perf_counter() - t)} queries")
    vecs = rng.standard_normal((a.n_chunks, emb.dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = VectorStore(Path(tmp))
        table = store.db.create_table("bench", schema=schema(emb.dim))
        rows = pa.table({
            "chunk_id": frame["chunk_id"].to_arrow(), "doc_id": frame["doc_id"].to_arrow(),
            "dataset": pa.array(["bench"] * a.n_chunks), "chunker_id": pa.array(["synthetic"] * a.n_chunks),
            "page_start": pa.array([0] * a.n_chunks, pa.int32()), "page_end": pa.array([0] * a.n_chunks, pa.int32()),
            "parent_chunk_id": pa.nulls(a.n_chunks, pa.string()), "text": frame["text"].to_arrow(),
            "text_sha256": pa.nulls(a.n_chunks, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), emb.dim),
        })
        table.add(rows.cast(table.schema))
        where = "dataset = 'bench' AND chunker_id = 'synthetic' AND parent_chunk_id IS NULL"

        def run(mode: str) -> list[list[str]]:
            out = []
            for s in range(0, a.n_queries, a.batch_size):
                out += [r.column("chunk_id").to_pylist()
                        for r in search(table, qv[s : s + a.batch_size], where, 10, mode)]
            return out

        run("flat")  # warm-up (opens the dataset, caches)
        t = time.perf_counter()
        exact = run("flat")
        print(f"lancedb flat top-10 (batches of {a.batch_size}): {rate(a.n_queries, time.perf_counter() - t)} queries")
        t = time.perf_counter()
        ids = frame["chunk_id"].to_numpy()
        brute = []
        for s in range(0, a.n_queries, a.batch_size):
            sims = qv[s : s + a.batch_size] @ vecs.T
            top = np.argpartition(-sims, 10, axis=1)[:, :10]
            order = np.take_along_axis(top, np.argsort(-np.take_along_axis(sims, top, 1), axis=1), 1)
            brute += [ids[o].tolist() for o in order]
        print("numpy brute-force top-10 (same vectors, in memory): "
              f"{rate(a.n_queries, time.perf_counter() - t)} queries")
        agree = np.mean([len(set(x) & set(y)) / 10 for x, y in zip(exact, brute)])
        print(f"  lancedb flat vs numpy top-10 overlap: {agree:.4f}")
        t = time.perf_counter()
        VectorStore.create_ann_index(table, a.n_chunks)
        print(f"lancedb IVF_PQ build: {time.perf_counter() - t:.1f} s")
        run("ann")
        t = time.perf_counter()
        approx = run("ann")
        print(f"lancedb IVF_PQ top-10 (nprobes 20): {rate(a.n_queries, time.perf_counter() - t)} queries")
        rec = np.mean([len(set(x) & set(y)) / 10 for x, y in zip(exact, approx)])
        print(f"  IVF_PQ recall@10 against exact: {rec:.4f}")

    # ---- embedding ----------------------------------------------------------------------------------------------
    from python_jobs.core.lake import Lake
    from python_jobs.corpus.indexing import index_chunks

    for label, words in (("short (150 words, one window)", 150), ("long (760 words, ~4-5 windows)", 760)):
        etexts = synth_texts(a.embed_chunks, words, rng)
        t = time.perf_counter()
        emb.model.encode(etexts, batch_size=a.batch_size, normalize_embeddings=True)
        raw = time.perf_counter() - t
        with tempfile.TemporaryDirectory() as tmp:
            lake = Lake(Path(tmp))
            chunks = pl.DataFrame({
                "chunk_id": [f"e{i}" for i in range(a.embed_chunks)], "doc_id": ["d"] * a.embed_chunks,
                "dataset": ["bench"] * a.embed_chunks, "chunker_id": ["synthetic"] * a.embed_chunks,
                "ordinal": list(range(a.embed_chunks)), "text": etexts,
            })
            lake.land_one("chunks", "bench.synthetic", chunks)
            t = time.perf_counter()
            out = index_chunks(lake, "bench", "synthetic", batch_size=a.batch_size, progress=False)
            ours = time.perf_counter() - t
        print(f"embedding {label}: raw encode {rate(a.embed_chunks, raw)} chunks (truncates to 256); "
              f"finrag index (windowed) {rate(a.embed_chunks, ours)} chunks; {out['embedded']} embedded")


if __name__ == "__main__":
    main()
