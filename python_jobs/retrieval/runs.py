"""`finrag retrieve`: run a retriever over a dataset's questions and land the run (SPEC §4).

The dataset's questions (lake `questions`) are the queries; its chunks partition is the corpus (a BEIR dataset's
corpus entries, chunker id `corpus`). A run lands as one `retrieval_runs` row plus its `retrieval_results`
(rank 1..k per question, source 'finrag') in one atomic landing. The run id is derived from the config hash unless
given, and re-running the same config replaces its partitions.

Conditions: under `oracle_doc` / `oracle_page` each question's search is restricted (before ranking) to its gold
documents / gold pages from the lake `evidence`; questions without evidence (or without gold page numbers, for
oracle_page) are skipped and counted in params.n_skipped.

LLM retrievers (hyde, multi_hyde, llm_expand) call the one LLM client (python_jobs/llm/client.py); their prompt version,
model, endpoint host and sampling settings join the config hash (`llm` in params), and their call / fallback
counters go into params.

Sharded (`--shard I/N`, python_jobs/core/shards.py): every shard reads the whole question selection and corpus, and
searches only the queries whose question_id falls in its slice; the run id, config hash and the whole-run params
(n_questions, n_queried, n_skipped, splits) are those of the unsharded run. The work of each shard (`WORK`:
n_with_results, timings, the LLM retrievers' counters, the engine's stats) lands per shard under params.shards, with
the counts summed over the landed shards at the top level.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import time

import polars as pl

from python_jobs.core.console import progress as console_progress
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.question_sets import select_splits, splits_param
from python_jobs.core.shards import Shard
from python_jobs.corpus.encoders import DEFAULT_EMBEDDER, resolve
from python_jobs.llm.config import LLMConfig
from python_jobs.retrieval import (
    RETRIEVERS,
    Context,
    Query,
    RetrieverConfig,
    build,
    config_fields,
    default_top_n,
    stage_names,
)
from python_jobs.retrieval.conditions import CONDITIONS, restrictions
from python_jobs.retrieval.hyde import LLM_RETRIEVERS, Rewriter
from python_jobs.retrieval.page_scorer import DEFAULT_TOP_PAGES

# params keys that are a shard's own work (shards.merge_run_row): summed over the shards, or kept per shard only
WORK = {"n_with_results": "sum", "prepare_seconds": "sum", "seconds": "sum", "queries_per_s": "shard"}
VERSIONED = ("lancedb", "bm25s", "sentence-transformers", "transformers", "torch", "numpy", "polars", "FlagEmbedding")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def normalise(cfg: RetrieverConfig, k: int) -> RetrieverConfig:
    """Drop settings the retriever does not use, so they neither enter the hash nor mislead in params."""
    names = stage_names(cfg.retriever, cfg.first_stage)
    dense = "dense" in names
    keywords = "keywords" in names
    return RetrieverConfig(
        retriever=cfg.retriever,
        first_stage=names[1] if cfg.retriever in ("rerank", "keywords", "parent_child", "llm_expand") else None,
        embedder=resolve(cfg.embedder)[0] if dense else None,
        long_text=cfg.long_text if dense else "n/a",
        dense_search=cfg.dense_search if dense else "n/a",
        reranker=cfg.reranker if "rerank" in names else None,
        rrf_k=cfg.rrf_k if "hybrid" in names else 0,
        top_n=default_top_n(cfg, k),
        n_keywords=cfg.n_keywords if keywords else 0,
        feedback_docs=cfg.feedback_docs if keywords else 0,
        feedback_terms=cfg.feedback_terms if keywords else 0,
        model_training=cfg.model_training if cfg.retriever == "page_scorer" else None,
        top_pages=(None if cfg.retriever != "page_scorer"
                   else DEFAULT_TOP_PAGES if cfg.top_pages is None else cfg.top_pages),
    )


def config_hash(dataset: str, chunker_id: str, condition: str | None, k: int, cfg: RetrieverConfig,
                llm: dict[str, object] | None = None, splits: tuple[str, ...] | None = None) -> str:
    # `llm` only for the LLM retrievers, so the hashes (and run ids) of every other config stay as they were
    blob = json.dumps({"dataset": dataset, "chunker_id": chunker_id, "condition": condition, "k": k,
                       **config_fields(cfg), **({"llm": llm} if llm else {})}, sort_keys=True)
    digest = hashlib.sha256(blob.encode()).hexdigest()
    if splits:  # an explicit --split selection is another run (the default keeps the run ids as they were)
        digest = hashlib.sha256(f"{digest}|splits={','.join(splits)}".encode()).hexdigest()
    return digest


def default_run_id(dataset: str, condition: str, cfg: RetrieverConfig, digest: str) -> str:
    ds = re.sub(r"[^A-Za-z0-9_.-]", "_", dataset)[:60]
    return f"{ds}-{cfg.retriever}-{condition}-{digest[:10]}"


def run_retrieval(home, dataset: str, retriever: str, k: int = 10, condition: str = "full",
                  chunker_id: str | None = None, embedder: str | None = DEFAULT_EMBEDDER, long_text: str = "window",
                  dense_search: str = "flat", reranker: str | None = None, first_stage: str | None = None,
                  rrf_k: int = 60, top_n: int | None = None, n_keywords: int = 8, feedback_docs: int = 3,
                  feedback_terms: int = 5, run_id: str | None = None, batch_size: int = 64,
                  progress: bool = True, llm_config: LLMConfig | None = None, hyde_n: int = 3,
                  hyde_fusion: str = "mean", llm_temperature: float | None = None,
                  splits: tuple[str, ...] | None = None, model_training: str | None = None,
                  top_pages: int | None = None, shard: Shard | None = None) -> dict[str, object]:
    if retriever not in RETRIEVERS:
        raise InputError(f"unknown retriever {retriever!r}; one of {RETRIEVERS}", field="retriever")
    if condition not in CONDITIONS:
        raise InputError(f"unknown condition {condition!r}; one of {CONDITIONS}", field="condition")
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}", field="k")
    if rrf_k < 1:
        raise InputError(f"--rrf-k must be >= 1, got {rrf_k}", field="rrf_k")
    lake = Lake(home)
    chunker_id = lake.resolve_chunker(dataset, chunker_id)
    cfg = normalise(RetrieverConfig(retriever, first_stage, embedder, long_text, dense_search, reranker, rrf_k, top_n,
                                    n_keywords, feedback_docs, feedback_terms, model_training, top_pages), k)
    rewriter = (Rewriter.open(lake.home, retriever, llm_config, n=hyde_n, fusion=hyde_fusion,
                              temperature=llm_temperature, rrf_k=rrf_k, progress=progress)
                if retriever in LLM_RETRIEVERS else None)
    try:
        return _run(lake, dataset, retriever, k, condition, chunker_id, cfg, rewriter, run_id, batch_size, progress,
                    splits, shard)
    finally:
        if rewriter is not None:
            rewriter.close()  # lands the LLM ledger's last batch, stops an embedded server


def _run(lake: Lake, dataset: str, retriever: str, k: int, condition: str, chunker_id: str, cfg: RetrieverConfig,
         rewriter: Rewriter | None, run_id: str | None, batch_size: int, progress: bool,
         splits: tuple[str, ...] | None = None, shard: Shard | None = None) -> dict[str, object]:
    llm = rewriter.settings() if rewriter else None
    digest = config_hash(dataset, chunker_id, condition, k, cfg, llm, splits)
    # the same config under every condition: a full run and its oracle counterparts share it (mart_oracle_gap)
    config_id = config_hash(dataset, chunker_id, None, k, cfg, llm, splits)
    run_id = check_id(run_id or default_run_id(dataset, condition, cfg, digest), "run id")

    questions = lake.read("questions", where={"dataset": dataset}).sort("question_id")
    if questions.height == 0:
        raise InputError(f"no questions for dataset {dataset!r}: ingest them first", field="dataset")
    questions = select_splits(questions, splits)
    chunks = lake.read_chunks(dataset, chunker_id)
    limits = restrictions(condition, lake.read("evidence", where={"dataset": dataset}))
    queries = [
        Query(qid, text, limits.get(qid))
        for qid, text in questions.select("question_id", "question").iter_rows()
        if condition == "full" or qid in limits
    ]
    n_queried = len(queries)  # the whole run's, sharded or not
    if shard is not None:
        queries = [q for q in queries if shard.owns(q.question_id)]
    ctx = Context(lake.home, dataset, chunker_id, chunks, cfg.embedder, cfg.long_text, cfg.dense_search,
                  batch_size, progress, rewriter)
    engine = build(cfg, ctx, "top", k)

    t0 = time.perf_counter()
    engine.search([], k)  # builds in-memory indexes, opens LanceDB, loads models: timed apart from the queries
    prepare_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    hits = []
    step = max(batch_size, 1) * 4
    with console_progress(total=len(queries), desc=f"retrieve {retriever}/{condition}", unit="q",
                          enabled=progress) as bar:
        for start in range(0, len(queries), step):
            batch = queries[start : start + step]
            hits.extend(engine.search(batch, k))
            bar.update(len(batch))
    seconds = time.perf_counter() - t0

    ranked = [(q.question_id, r, h.chunk_id, h.score) for q, qh in zip(queries, hits, strict=True)
              for r, h in enumerate(qh[:k], start=1)]
    qids, ranks, chunk_ids, scores = (list(x) for x in zip(*ranked, strict=True)) if ranked else ([], [], [], [])
    meta = chunks.select("chunk_id", "doc_id", "page_start", "page_end")
    results = (
        contract("retrieval_results").frame(question_id=qids, rank=ranks, chunk_id=chunk_ids, score=scores)
        .join(meta, on="chunk_id", how="left")
        .with_columns(pl.lit(run_id).alias("run_id"), pl.lit(dataset).alias("dataset"))
        .sort("question_id", "rank")
    )
    llm_stats = {"llm": llm, **rewriter.stats()} if rewriter else {}
    engine_stats = engine.stats() if hasattr(engine, "stats") else {}
    params = {
        **config_fields(cfg), "dataset": dataset, "chunker_id": chunker_id, "condition": condition, "k": k,
        "batch_size": batch_size, "splits": splits_param(splits, questions), "n_questions": questions.height,
        "n_queried": n_queried,
        "n_skipped": questions.height - n_queried, "n_with_results": results["question_id"].n_unique(),
        "corpus_chunks": chunks.height, "prepare_seconds": round(prepare_seconds, 3), "seconds": round(seconds, 3),
        "queries_per_s": round(len(queries) / seconds, 2) if seconds > 0 else None, "versions": package_versions(),
        **llm_stats, **engine_stats,
    }
    run = contract("retrieval_runs").frame([{
        "run_id": run_id, "dataset": dataset, "retriever": retriever, "condition": condition, "k": k,
        "embedder": cfg.embedder, "reranker": cfg.reranker, "chunker_id": chunker_id,
        "params": json.dumps(params, sort_keys=True), "config_hash": digest, "config_id": config_id,
        "question_splits": params["splits"], "source": "finrag",
    }])
    # a shard's own work: the LLM counters summed over the shards, the engine's stats (page_scorer) kept per shard
    work = {**WORK, **{key: "sum" for key in llm_stats if key != "llm"}, **dict.fromkeys(engine_stats, "shard")}
    lake.land([("retrieval_runs", run_id, run), ("retrieval_results", run_id, results)], shard=shard,
              work={"retrieval_runs": work})
    return {"run_id": run_id, "questions": len(queries), "skipped": params["n_skipped"], "rows": results.height,
            "seconds": params["seconds"], "queries_per_s": params["queries_per_s"],
            **({"shard": str(shard)} if shard else {})}
