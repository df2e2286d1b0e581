"""LLM query rewriting for dense search: HyDE (Gao et al. 2022, "Precise Zero-Shot Dense Retrieval without Relevance
Labels") and its multi-passage variant.

- `hyde`: the LLM writes one hypothetical passage answering the question (greedy by default); the search vector
  is the renormalised mean of the question's query vector and the passage's document vector — as the original
  HyDE does (it averages the hypothetical documents' vectors together with the query's own vector).
- `multi_hyde`: `hyde_n` passages, sampled, each a distinct request (seed 0..n-1, so the cache keys differ).
  Fusion `mean`: one vector, the mean of the question's and all passages' vectors (original HyDE); fusion `rrf`:
  the question and each passage are searched on their own and the n + 1 lists fused by RRF.
(The defaults are their config classes', HydeConfig and MultiHydeConfig.)

Every call goes through the one LLM client (cache in `llm_calls`, retries, concurrency). A question whose calls
all finally fail (or return an empty text) is searched with the plain question and counted (`n_llm_failed`);
a multi_hyde question that lost only some passages uses the rest (`n_llm_calls_failed` counts failed calls).
The condition's restriction is applied as the LanceDB prefilter, exactly as in `dense`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlparse

import numpy as np
from pydantic import Field

from python_jobs.core.errors import InputError
from python_jobs.corpus.encoders import load_embedder
from python_jobs.llm.client import ChatRequest, LLMClient, model_name
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.prompts import PromptTemplate, load_template
from python_jobs.retrieval import FIRST_STAGE, Context, Hit, Query, Retriever, RetrieverConfig, RetrieverTree, register
from python_jobs.retrieval.dense import DenseConfig, lance_table, search_vectors
from python_jobs.retrieval.hybrid import HybridConfig, RRFConstant, rrf

HYDE_FUSIONS = ("mean", "rrf")
HYDE_TEMPLATE = "hyde_passage_v1"
HYDE_MAX_TOKENS = 256  # a filing-style paragraph; MiniLM reads 256 word pieces anyway

Temperature = Annotated[float, Field(ge=0, le=2, description="LLM sampling temperature.")]
HydeFusion = Annotated[Literal[HYDE_FUSIONS], Field(  # type: ignore[valid-type]
    description="Average the vectors (the question's included), or search each and fuse by RRF (--rrf-k).")]


class LLMRetrieverConfig(RetrieverConfig):
    """The settings of a retriever that calls the LLM. They decide the ranking with the prompt and the model, so
    they enter the config hash under `llm` (`Rewriter.settings`), not beside the other retrievers' settings; a
    wrapper's first stage enters it as every wrapper's does."""

    uses_llm = True
    template: ClassVar[str]  # the prompt (prompts/<template>.txt)
    max_tokens: ClassVar[int]  # completion tokens per call
    llm_temperature: float  # each LLM retriever declares its default

    @property
    def n(self) -> int:
        """Replies per question."""
        return 1

    def llm_settings(self) -> dict[str, Any]:
        return {"llm_n": self.n, "llm_temperature": self.llm_temperature, "llm_max_tokens": self.max_tokens}

    def hashed(self) -> dict[str, Any]:
        return self.model_dump(include={FIRST_STAGE})


@register
class HydeConfig(LLMRetrieverConfig):
    """HyDE: the search vector is the unit-length mean of the question's and one LLM-written passage's vectors."""

    name = "hyde"
    needs = ("dense",)
    can_be_first_stage = True
    template = HYDE_TEMPLATE
    max_tokens = HYDE_MAX_TOKENS

    llm_temperature: Temperature = 0.0

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        return HydeRetriever(ctx, level, tree.find(DenseConfig), rrf_k=None)


@register
class MultiHydeConfig(LLMRetrieverConfig):
    """HyDE with several passages (distinct seeds, so distinct cache keys), fused by the mean of all vectors or by
    RRF of one search per vector."""

    name = "multi_hyde"
    needs = ("dense",)
    can_be_first_stage = True  # the retrieval-gap study's Dense + Multi-HyDE + ReRanker: rerank over its top N
    template = HYDE_TEMPLATE
    max_tokens = HYDE_MAX_TOKENS

    hyde_n: int = Field(3, ge=1, description="Hypothetical passages per question.")
    hyde_fusion: HydeFusion = "mean"
    llm_temperature: Temperature = 0.7
    rrf_k: RRFConstant = HybridConfig.default("rrf_k")

    @property
    def n(self) -> int:
        return self.hyde_n

    def llm_settings(self) -> dict[str, Any]:
        return {**super().llm_settings(), "hyde_fusion": self.hyde_fusion,
                **({"hyde_rrf_k": self.rrf_k} if self.hyde_fusion == "rrf" else {})}

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        fused_by_rrf = self.hyde_fusion == "rrf"
        return HydeRetriever(ctx, level, tree.find(DenseConfig), rrf_k=self.rrf_k if fused_by_rrf else None)


def llm_run_settings(config: LLMRetrieverConfig, llm: LLMConfig | None,
                     template: PromptTemplate | None = None) -> dict[str, Any]:
    """What decides an LLM retriever's ranking on the LLM side (hashed into the run id): prompt version, model,
    endpoint host (never the key), and the retriever's own settings. Known before any call (a sweep plans its run
    ids with it)."""
    llm = llm or LLMConfig.from_env()
    template = template or load_template(config.template)
    host = "embedded" if llm.embedded else (urlparse(llm.base_url).hostname or llm.base_url)
    return {"prompt_template": template.ref, "llm_model": model_name(llm), "llm_base_url_host": host,
            **config.llm_settings()}


@dataclass
class Rewriter:
    """The LLM side of one run, shared by the LLM retrievers through `Context.rewriter`: the client, the prompt,
    the retriever's config and the counters that go into params."""

    client: LLMClient
    config: LLMRetrieverConfig
    template: PromptTemplate
    counts: Counter = field(default_factory=Counter)

    @classmethod
    def open(cls, home: Any, config: LLMRetrieverConfig, llm: LLMConfig | None = None,
             progress: bool = True) -> Rewriter:
        template = load_template(config.template)
        client = LLMClient(home, llm, job_run_id=f"retrieve-{config.name}", progress=progress)
        return cls(client, config, template)

    def settings(self) -> dict[str, Any]:
        """What decides the ranking on the LLM side (hashed into the run id)."""
        return llm_run_settings(self.config, self.client.config, self.template)

    def stats(self) -> dict[str, int]:
        """The run's LLM counters (params, not hashed)."""
        keys = ("n_llm_requests", "n_llm_failed", "n_llm_calls_failed", "n_expansion_malformed")
        return {**{k: int(self.counts[k]) for k in keys}, "n_llm_calls_made": self.client.calls_made,
                "n_llm_cache_hits": self.client.cache_hits}

    def complete(self, queries: list[Query], purpose: str) -> list[list[str | None]]:
        """n replies per query (None = the call finally failed or returned nothing), in query order."""
        n = self.config.n
        reqs = [ChatRequest(self.template.render(question=q.text), purpose, temperature=self.config.llm_temperature,
                            max_tokens=self.config.max_tokens, seed=i if n > 1 else None)
                for q in queries for i in range(n)]
        results = self.client.complete_many(reqs, desc=purpose)
        self.counts["n_llm_requests"] += len(reqs)
        texts = [r.text if r.ok and r.text and r.text.strip() else None for r in results]
        self.counts["n_llm_calls_failed"] += sum(t is None for t in texts)
        return [texts[i * n : (i + 1) * n] for i in range(len(queries))]

    def close(self) -> None:
        self.client.close()


def rewriter_of(ctx: Context) -> Rewriter:
    rw = getattr(ctx, "rewriter", None)
    if rw is None:
        raise InputError("LLM retrievers need an LLM client (run them through `finrag retrieve`)", field="retriever")
    return rw


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return (v / n if n > 0 else v).astype(np.float32)


class HydeRetriever:
    """hyde and multi_hyde: the passages' vectors averaged with the question's (rrf_k None), or each searched and
    the lists fused by RRF."""

    uses_dense = True

    def __init__(self, ctx: Context, level: str, dense: DenseConfig, rrf_k: int | None):
        self.ctx, self.level, self.dense, self.rrf_k, self.rw = ctx, level, dense, rrf_k, rewriter_of(ctx)

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        table = lance_table(self.ctx, self.dense, self.level)  # opened (and checked) before any LLM call
        emb = load_embedder(self.dense.embedder)
        if not queries:
            return []
        replies = self.rw.complete(queries, "hyde")
        passages = [[p for p in ps if p is not None] for ps in replies]
        self.rw.counts["n_llm_failed"] += sum(not ps for ps in passages)  # searched with the plain question
        bs = self.ctx.batch_size
        qvecs = emb.encode_queries([q.text for q in queries], batch_size=bs)
        flat = [p for ps in passages for p in ps]
        pvecs = emb.encode_documents(flat, batch_size=bs, long_text=self.dense.long_text)
        bounds = np.cumsum([0] + [len(ps) for ps in passages])
        per_query = [pvecs[bounds[i] : bounds[i + 1]] for i in range(len(queries))]
        if self.rrf_k is None:
            # original HyDE: the mean of the query vector and the hypothetical documents' vectors
            fused = np.stack([_unit(np.vstack([qvecs[i : i + 1], per_query[i]]).mean(axis=0))
                              for i in range(len(queries))])
            return search_vectors(self.ctx, self.dense, self.level, table, queries, fused, depth)
        # rrf: the question and every passage searched alone, the lists fused
        owners = [i for i in range(len(queries)) for _ in range(1 + len(per_query[i]))]
        vecs = np.vstack([np.vstack([qvecs[i : i + 1], per_query[i]]) for i in range(len(queries))])
        lists = search_vectors(self.ctx, self.dense, self.level, table, [queries[i] for i in owners], vecs, depth)
        grouped: list[list[list[Hit]]] = [[] for _ in queries]
        for i, hits in zip(owners, lists):
            grouped[i].append(hits)
        return [rrf(g, self.rrf_k)[:depth] for g in grouped]
