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
import time
from collections.abc import Mapping
from typing import Any, Literal

import polars as pl
from pydantic import ConfigDict, Field, model_validator

from python_jobs.core.console import progress as console_progress
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.job_config import JobConfig
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.question_sets import select_splits, splits_param
from python_jobs.core.run_ids import derived_id
from python_jobs.core.shards import Shard
from python_jobs.corpus.lake_chunks import read_chunks, resolve_chunker
from python_jobs.llm.config import LLMConfig
from python_jobs.retrieval import INNER, Context, Query, RetrieverTree
from python_jobs.retrieval.conditions import CONDITIONS, restrictions
from python_jobs.retrieval.hyde import LLMRetrieverConfig, Rewriter, llm_run_settings

# params keys that are a shard's own work (shards.merge_run_row): summed over the shards, or kept per shard only
WORK = {"n_with_results": "sum", "prepare_seconds": "sum", "seconds": "sum", "queries_per_s": "shard"}
VERSIONED = ("lancedb", "bm25s", "sentence-transformers", "transformers", "torch", "numpy", "polars", "FlagEmbedding")
# The settings of the first retrievers enter every run's config hash (and params), with these values when the run's
# retriever does not use them; a setting added since enters only the hashes of the retrievers that have it. Frozen:
# it keeps the run ids already in users' lakes (tests/unit/retrieval/test_run_ids.py).
UNUSED = {"first_stage": None, "embedder": None, "long_text": "n/a", "dense_search": "n/a", "reranker": None,
          "rrf_k": 0, "top_n": None, "n_keywords": 0, "feedback_docs": 0, "feedback_terms": 0}


class RetrievalConfig(JobConfig):
    """A retrieval run: what decides its ranking (hashed into the run id: everything but run_id and batch_size) and
    how it runs. `from_dict` takes the retriever's settings flat beside the run's ({"retriever": "hybrid",
    "rrf_k": 10, "k": 5, ...})."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    dataset: str
    retriever: RetrieverTree
    k: int = Field(10, ge=1, description="Results per question.")
    condition: Literal[CONDITIONS] = "full"  # type: ignore[valid-type]
    chunker_id: str | None = Field(None, description="Chunks partition to search (default: the dataset's only one).")
    splits: tuple[str, ...] | None = Field(None, strict=False, description=(
        "Question splits to query (default: every split except 'dropped')."))
    run_id: str | None = Field(None, description="Run id (default: derived from the config hash).")
    batch_size: int = Field(64, ge=1, description="Query encoding / search batch size.")

    @model_validator(mode="after")
    def _stages_fit(self) -> RetrievalConfig:
        self.retriever.check(self.k)  # a cascade whose inner stage is shallower than the outer one reads
        return self

    @classmethod
    def from_dict(cls, values: Mapping[str, Any], *, file: str | None = None,
                  ignore_unknown: bool = False) -> RetrievalConfig:
        """The config of flat settings; with `ignore_unknown`, settings its retriever does not have are left out
        (`finrag retrieve`, whose options are every retriever's) instead of refused."""
        if "retriever" not in values:
            raise InputError("required field is missing", file=file, field="retriever")
        run = set(cls.model_fields) - {"retriever"}
        try:
            tree = RetrieverTree.of(values["retriever"], {k: v for k, v in values.items()
                                                          if k not in run and k != "retriever"},
                                    ignore_unknown=ignore_unknown)
        except InputError as exc:
            raise InputError(exc.detail, file=file, field=exc.field) from None
        return super().from_dict({**{k: v for k, v in values.items() if k in run}, "retriever": tree}, file=file)


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def config_fields(tree: RetrieverTree, k: int) -> dict[str, object]:
    """The retriever's settings as they enter the config hash and params: each stage's (the outermost stage's
    first-stage depth resolved for k), then UNUSED for the first retrievers' settings it does not have."""
    out: dict[str, object] = {"retriever": tree.retriever}
    for i, (stage, depth) in enumerate(zip(tree.stages, tree.depths(), strict=True)):
        values = stage.hashed()
        if "top_n" in values and (i == 0 or depth):
            values["top_n"] = stage.depth(k)
        for key, value in values.items():
            # a cascade's inner stage: its settings under their INNER names (only such runs have these keys)
            out.setdefault(INNER * depth + key if depth else key, value)
    return {**UNUSED, **out}


def identity(cfg: RetrievalConfig, chunker_id: str, llm: dict[str, object] | None = None) -> tuple[str, str, str]:
    """(run id, config hash, config id) of a run over the resolved chunker. `llm`: the LLM retrievers' settings
    (Rewriter.settings). The config id is the hash without the condition: a full run and its oracle counterparts
    share it (mart_oracle_gap). The run id is `<dataset>-<retriever>-<condition>-<hash[:10]>` unless given."""
    fields = config_fields(cfg.retriever, cfg.k)

    def digest(condition: str | None) -> str:
        # `llm` only for the LLM retrievers, so the hashes (and run ids) of every other config stay as they were
        blob = json.dumps({"dataset": cfg.dataset, "chunker_id": chunker_id, "condition": condition, "k": cfg.k,
                           **fields, **({"llm": llm} if llm else {})}, sort_keys=True)
        out = hashlib.sha256(blob.encode()).hexdigest()
        if cfg.splits:  # an explicit --split selection is another run (the default keeps the run ids as they were)
            out = hashlib.sha256(f"{out}|splits={','.join(cfg.splits)}".encode()).hexdigest()
        return out

    config_hash = digest(cfg.condition)
    run_id = check_id(cfg.run_id or derived_id(cfg.dataset, f"{cfg.retriever.retriever}-{cfg.condition}", config_hash),
                      "run id")
    return run_id, config_hash, digest(None)


def _llm_stage(tree: RetrieverTree) -> LLMRetrieverConfig | None:
    return next((s for s in tree.stages if isinstance(s, LLMRetrieverConfig)), None)


def planned_run_id(cfg: RetrievalConfig, chunker_id: str, llm_config: LLMConfig | None = None) -> str:
    """The run id `run_retrieval` lands `cfg` under over the chunks of `chunker_id`, known without running it (the
    LLM retrievers' model and host from `llm_config`, as their run will read them)."""
    stage = _llm_stage(cfg.retriever)
    return identity(cfg, chunker_id, llm_run_settings(stage, llm_config) if stage else None)[0]


def run_retrieval(lake: Lake, cfg: RetrievalConfig, *, llm_config: LLMConfig | None = None, progress: bool = True,
                  shard: Shard | None = None) -> dict[str, object]:
    """Run `cfg` and land it. Beside the config: the LLM endpoint of the LLM retrievers (the environment's, with
    its key; the model and host enter the hash through the client), whether to show progress, and this process's
    shard of the run (the run and its id are the whole run's)."""
    chunker_id = resolve_chunker(lake, cfg.dataset, cfg.chunker_id)
    llm_stage = _llm_stage(cfg.retriever)
    rewriter = Rewriter.open(lake.home, llm_stage, llm_config, progress=progress) if llm_stage else None
    try:
        return _run(lake, cfg, chunker_id, rewriter, progress, shard)
    finally:
        if rewriter is not None:
            rewriter.close()  # lands the LLM ledger's last batch, stops an embedded server


def _run(lake: Lake, cfg: RetrievalConfig, chunker_id: str, rewriter: Rewriter | None, progress: bool,
         shard: Shard | None) -> dict[str, object]:
    dataset, k, condition, splits, retriever = cfg.dataset, cfg.k, cfg.condition, cfg.splits, cfg.retriever.retriever
    llm = rewriter.settings() if rewriter else None
    run_id, digest, config_id = identity(cfg, chunker_id, llm)
    fields = config_fields(cfg.retriever, k)

    questions = lake.read("questions", where={"dataset": dataset}).sort("question_id")
    if questions.height == 0:
        raise InputError(f"no questions for dataset {dataset!r}: ingest them first", field="dataset")
    questions = select_splits(questions, splits)
    chunks = read_chunks(lake, dataset, chunker_id)
    limits = restrictions(condition, lake.read("evidence", where={"dataset": dataset}))
    queries = [
        Query(qid, text, limits.get(qid))
        for qid, text in questions.select("question_id", "question").iter_rows()
        if condition == "full" or qid in limits
    ]
    n_queried = len(queries)  # the whole run's, sharded or not
    if shard is not None:
        queries = [q for q in queries if shard.owns(q.question_id)]
    ctx = Context(lake.home, dataset, chunker_id, chunks, cfg.batch_size, progress, rewriter)
    engine = cfg.retriever.build(ctx, k)

    t0 = time.perf_counter()
    engine.search([], k)  # builds in-memory indexes, opens LanceDB, loads models: timed apart from the queries
    prepare_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    hits = []
    step = cfg.batch_size * 4
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
        **fields, "dataset": dataset, "chunker_id": chunker_id, "condition": condition, "k": k,
        "batch_size": cfg.batch_size, "splits": splits_param(splits, questions), "n_questions": questions.height,
        "n_queried": n_queried,
        "n_skipped": questions.height - n_queried, "n_with_results": results["question_id"].n_unique(),
        "corpus_chunks": chunks.height, "prepare_seconds": round(prepare_seconds, 3), "seconds": round(seconds, 3),
        "queries_per_s": round(len(queries) / seconds, 2) if seconds > 0 else None, "versions": package_versions(),
        **llm_stats, **engine_stats,
    }
    run = contract("retrieval_runs").frame([{
        "run_id": run_id, "dataset": dataset, "retriever": retriever, "condition": condition, "k": k,
        "embedder": fields["embedder"], "reranker": fields["reranker"], "chunker_id": chunker_id,
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
