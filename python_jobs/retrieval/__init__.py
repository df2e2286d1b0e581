"""Retrievers for `finrag retrieve` (a shared, non-verb package).

Every retriever answers `search(queries, depth) -> [[Hit, ...] per query]`, best first, over one *level* of a chunks
partition: `top` = chunks without a parent (every chunk of a flat chunker; the parents of a parent-child chunker),
`child` = chunks with a parent. Each query carries its condition's `Restriction` (None under `full`), which every
retriever applies *before* ranking (a filter, never a post-hoc cut), so oracle runs rank only the candidate set.

Composition: `hybrid` fuses bm25 + dense; `rerank`, `keywords`, `llm_expand` and `parent_child` wrap a first stage;
`hyde` / `multi_hyde` search dense with LLM-written hypothetical passages (the LLM retrievers share
`Context.rewriter`, the run's one LLM client); `page_scorer` keeps each question's top pages by a fold model of a
`finrag train-page-scorer` training and ranks the chunks on them by dense similarity.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.rules import RULES
from python_jobs.retrieval.conditions import Restriction

RETRIEVERS = ("bm25", "dense", "hybrid", "rerank", "parent_child", "keywords", "hyde", "multi_hyde", "llm_expand",
              "page_scorer")
FIRST_STAGES = ("bm25", "dense", "hybrid", "keywords", "rerank")
LEVELS = ("top", "child")


@dataclass(frozen=True)
class Query:
    question_id: str
    text: str
    restriction: Restriction | None = None


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    score: float


class Retriever(Protocol):
    uses_dense: bool

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]: ...


@dataclass
class Corpus:
    """The searchable chunks of one level, in a fixed order (row i of every array is chunk i)."""

    frame: pl.DataFrame  # chunk_id, doc_id, page_start, page_end, text, parent_chunk_id

    @cached_property
    def chunk_ids(self) -> np.ndarray:
        return self.frame["chunk_id"].to_numpy().astype(object)

    @cached_property
    def doc_ids(self) -> np.ndarray:
        return self.frame["doc_id"].to_numpy().astype(object)

    @cached_property
    def page_start(self) -> np.ndarray:
        return self.frame["page_start"].fill_null(-1).to_numpy()

    @cached_property
    def page_end(self) -> np.ndarray:
        # the last page a chunk covers, by the rules' page coverage (-1: none)
        return self.frame.select(RULES.last_page(pl.col("page_start"), pl.col("page_end"))).to_series() \
            .fill_null(-1).to_numpy()

    def mask(self, r: Restriction) -> np.ndarray:
        return r.mask(self.doc_ids, self.page_start, self.page_end)

    def __len__(self) -> int:
        return self.frame.height


@dataclass
class Context:
    """What retrievers share within one run: the chunks partition, lazily built indexes and models."""

    home: Path
    dataset: str
    chunker_id: str
    chunks: pl.DataFrame  # the whole partition
    embedder: str | None = None
    long_text: str = "window"
    dense_search: str = "flat"
    batch_size: int = 64
    progress: bool = True
    rewriter: Any = None  # hyde.Rewriter of the LLM retrievers (hyde, multi_hyde, llm_expand); None otherwise
    _cache: dict = field(default_factory=dict, repr=False)

    def corpus(self, level: str) -> Corpus:
        key = ("corpus", level)
        if key not in self._cache:
            has_parent = pl.col("parent_chunk_id").is_not_null()
            frame = self.chunks.filter(has_parent if level == "child" else ~has_parent).sort(
                "doc_id", "ordinal", "chunk_id"
            )
            if frame.height == 0:
                what = "child chunks (chunk with --parent-size/--parent-overlap)" if level == "child" else "chunks"
                raise InputError(f"chunks partition {self.dataset}.{self.chunker_id} has no {what}", field="chunker_id")
            self._cache[key] = Corpus(
                frame.select("chunk_id", "doc_id", "page_start", "page_end", "text", "parent_chunk_id")
            )
        return self._cache[key]

    @cached_property
    def texts(self) -> dict[str, str]:
        return dict(zip(self.chunks["chunk_id"].to_list(), self.chunks["text"].to_list()))

    def cached(self, key: tuple, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


@dataclass(frozen=True)
class RetrieverConfig:
    """Everything that decides a run's ranking (hashed into the run id; batch size and progress are not)."""

    retriever: str
    first_stage: str | None = None
    embedder: str | None = None
    long_text: str = "window"
    dense_search: str = "flat"
    reranker: str | None = None
    rrf_k: int = 60
    top_n: int | None = None
    n_keywords: int = 8
    feedback_docs: int = 3
    feedback_terms: int = 5
    # page_scorer only; None for every other retriever, and then left out of the config hash and params, so the
    # run ids of the other retrievers stay as they were
    model_training: str | None = None
    top_pages: int | None = None


OPTIONAL_CONFIG = ("model_training", "top_pages")


def config_fields(cfg: RetrieverConfig) -> dict[str, object]:
    """The config as a dict for the hash and params: the page-scorer settings only when set."""
    return {k: v for k, v in asdict(cfg).items() if not (k in OPTIONAL_CONFIG and v is None)}


def stage_names(retriever: str, first_stage: str | None = None) -> list[str]:
    """The retrievers a config runs, outermost first (the same defaults as `build`)."""
    if retriever in ("bm25", "dense"):
        return [retriever]
    if retriever == "hybrid":
        return ["hybrid", "bm25", "dense"]
    if retriever in ("hyde", "multi_hyde", "page_scorer"):
        return [retriever, "dense"]
    inner = first_stage or ("bm25" if retriever in ("keywords", "llm_expand") else "dense")
    return [retriever, *stage_names(inner)]


def default_top_n(cfg: RetrieverConfig, k: int) -> int | None:
    """The first-stage depth: rerank 20 (use 200 for the FinanceRAG two-stage), hybrid fuses 100-deep lists,
    parent_child reads 10 children per parent wanted."""
    if cfg.top_n is not None:
        return cfg.top_n
    return {"rerank": max(20, k), "hybrid": max(100, k), "parent_child": max(100, 10 * k)}.get(cfg.retriever)


def build(cfg: RetrieverConfig, ctx: Context, level: str = "top", k: int = 10) -> Retriever:
    """The retriever tree for a config. `rerank`, `keywords`, `llm_expand` and `parent_child` wrap `first_stage`
    (default: bm25 for keywords and llm_expand, dense otherwise)."""
    from python_jobs.retrieval import bm25, dense, hybrid, hyde, keywords, llm_expand, page_scorer, parent_child, rerank

    name = cfg.retriever
    top_n = default_top_n(cfg, k)
    if name == "bm25":
        return bm25.BM25Retriever(ctx, level)
    if name == "dense":
        return dense.DenseRetriever(ctx, level)
    if name == "hybrid":
        return hybrid.RRFRetriever(
            [bm25.BM25Retriever(ctx, level), dense.DenseRetriever(ctx, level)], rrf_k=cfg.rrf_k, depth=top_n or 100
        )
    if name in ("hyde", "multi_hyde"):
        return hyde.HydeRetriever(ctx, level)
    if name == "page_scorer":
        return page_scorer.PageScorerRetriever(ctx, level, cfg.model_training, cfg.top_pages)
    inner_name = cfg.first_stage or ("bm25" if name in ("keywords", "llm_expand") else "dense")
    if inner_name not in FIRST_STAGES or inner_name == name:
        raise InputError(f"--first-stage {inner_name!r} is not valid for {name}; one of {FIRST_STAGES}",
                         field="first_stage")
    # the inner stage of a wrapper is the plain retriever (its own first stage, if any, defaults)
    inner_cfg = RetrieverConfig(**{**cfg.__dict__, "retriever": inner_name, "first_stage": None, "top_n": None})
    if name == "parent_child":
        return parent_child.ParentChildRetriever(ctx, build(inner_cfg, ctx, "child", k), child_depth=top_n or 100)
    inner = build(inner_cfg, ctx, level, k)
    if name == "rerank":
        if not cfg.reranker:
            raise InputError("rerank needs --reranker (a cross-encoder name or local path)", field="reranker")
        return rerank.RerankRetriever(ctx, inner, cfg.reranker, top_n=top_n or 20)
    if name == "keywords":
        return keywords.KeywordExpansion(
            ctx, inner, level, n_keywords=cfg.n_keywords, feedback_docs=cfg.feedback_docs,
            feedback_terms=cfg.feedback_terms,
        )
    if name == "llm_expand":
        return llm_expand.LLMExpansion(ctx, inner)
    raise InputError(f"unknown retriever {name!r}; one of {RETRIEVERS}", field="retriever")
