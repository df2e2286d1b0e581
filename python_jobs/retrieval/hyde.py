"""LLM query rewriting for dense search: HyDE (Gao et al. 2022, "Precise Zero-Shot Dense Retrieval without Relevance
Labels") and its multi-passage variant.

- `hyde`: the LLM writes one hypothetical passage answering the question (temperature 0 by default); the search
  vector is the renormalised mean of the question's query vector and the passage's document vector — as the
  original HyDE does (it averages the hypothetical documents' vectors together with the query's own vector).
- `multi_hyde`: n passages (default 3) at temperature 0.7, each a distinct request (seed 0..n-1, so the cache keys
  differ). Fusion `mean`: one vector, the mean of the question's and all passages' vectors (original HyDE);
  fusion `rrf`: the question and each passage are searched on their own and the n + 1 lists fused by RRF.

Every call goes through the one LLM client (cache in `llm_calls`, retries, concurrency). A question whose calls
all finally fail (or return an empty text) is searched with the plain question and counted (`n_llm_failed`);
a multi_hyde question that lost only some passages uses the rest (`n_llm_calls_failed` counts failed calls).
The condition's restriction is applied as the LanceDB prefilter, exactly as in `dense`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import numpy as np

from python_jobs.core.errors import InputError
from python_jobs.corpus.encoders import load_embedder
from python_jobs.llm.client import ChatRequest, LLMClient
from python_jobs.llm.config import LLMConfig
from python_jobs.llm.prompts import PromptTemplate, load_template
from python_jobs.retrieval import Context, Hit, Query
from python_jobs.retrieval.dense import lance_table, search_vectors
from python_jobs.retrieval.hybrid import rrf

LLM_RETRIEVERS = ("hyde", "multi_hyde", "llm_expand")
HYDE_FUSIONS = ("mean", "rrf")
HYDE_TEMPLATE = "hyde_passage_v1"
EXPANSION_TEMPLATE = "query_expansion_v1"
HYDE_MAX_TOKENS = 256  # a filing-style paragraph; MiniLM reads 256 word pieces anyway
EXPANSION_MAX_TOKENS = 200
DEFAULT_TEMPERATURE = {"hyde": 0.0, "multi_hyde": 0.7, "llm_expand": 0.0}


@dataclass
class Rewriter:
    """The LLM side of one run, shared by the LLM retrievers through `Context.rewriter`: the client, the prompt,
    the settings that decide the ranking (hashed into the run id) and the counters that go into params."""

    client: LLMClient
    retriever: str
    template: PromptTemplate
    n: int
    temperature: float
    max_tokens: int
    fusion: str | None
    rrf_k: int
    counts: Counter = field(default_factory=Counter)

    @classmethod
    def open(cls, home: Any, retriever: str, config: LLMConfig | None = None, n: int = 3, fusion: str = "mean",
             temperature: float | None = None, rrf_k: int = 60, progress: bool = True) -> Rewriter:
        if retriever not in LLM_RETRIEVERS:
            raise ValueError(f"{retriever!r} is not an LLM retriever")
        if retriever == "multi_hyde" and n < 1:
            raise InputError(f"--hyde-n must be >= 1, got {n}", field="hyde_n")
        if fusion not in HYDE_FUSIONS:
            raise InputError(f"--hyde-fusion must be one of {HYDE_FUSIONS}, got {fusion!r}", field="hyde_fusion")
        t = DEFAULT_TEMPERATURE[retriever] if temperature is None else temperature
        if not 0.0 <= t <= 2.0:
            raise InputError(f"LLM temperature must be in [0, 2], got {t}", field="temperature")
        template = load_template(EXPANSION_TEMPLATE if retriever == "llm_expand" else HYDE_TEMPLATE)
        client = LLMClient(home, config, job_run_id=f"retrieve-{retriever}", progress=progress)
        return cls(client, retriever, template, n if retriever == "multi_hyde" else 1, t,
                   EXPANSION_MAX_TOKENS if retriever == "llm_expand" else HYDE_MAX_TOKENS,
                   fusion if retriever == "multi_hyde" else None, rrf_k)

    def settings(self) -> dict[str, Any]:
        """What decides the ranking on the LLM side (hashed): prompt version, model, endpoint host (never the key)."""
        cfg = self.client.config
        host = "embedded" if cfg.embedded else (urlparse(cfg.base_url).hostname or cfg.base_url)
        out: dict[str, Any] = {
            "prompt_template": self.template.ref, "llm_model": self.client.model,
            "llm_base_url_host": host, "llm_n": self.n, "llm_temperature": self.temperature,
            "llm_max_tokens": self.max_tokens,
        }
        if self.fusion:
            out["hyde_fusion"] = self.fusion
            if self.fusion == "rrf":
                out["hyde_rrf_k"] = self.rrf_k
        return out

    def stats(self) -> dict[str, int]:
        """The run's LLM counters (params, not hashed)."""
        keys = ("n_llm_requests", "n_llm_failed", "n_llm_calls_failed", "n_expansion_malformed")
        return {**{k: int(self.counts[k]) for k in keys}, "n_llm_calls_made": self.client.calls_made,
                "n_llm_cache_hits": self.client.cache_hits}

    def complete(self, queries: list[Query], purpose: str) -> list[list[str | None]]:
        """n replies per query (None = the call finally failed or returned nothing), in query order."""
        reqs = [ChatRequest(self.template.render(question=q.text), purpose, temperature=self.temperature,
                            max_tokens=self.max_tokens, seed=i if self.n > 1 else None)
                for q in queries for i in range(self.n)]
        results = self.client.complete_many(reqs, desc=purpose)
        self.counts["n_llm_requests"] += len(reqs)
        texts = [r.text if r.ok and r.text and r.text.strip() else None for r in results]
        self.counts["n_llm_calls_failed"] += sum(t is None for t in texts)
        return [texts[i * self.n : (i + 1) * self.n] for i in range(len(queries))]

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
    uses_dense = True

    def __init__(self, ctx: Context, level: str = "top"):
        if not ctx.embedder:
            raise InputError("HyDE needs an embedder", field="embedder")
        self.ctx, self.level, self.rw = ctx, level, rewriter_of(ctx)

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        table = lance_table(self.ctx, self.level)  # opened (and checked) before any LLM call
        emb = load_embedder(self.ctx.embedder)
        if not queries:
            return []
        replies = self.rw.complete(queries, "hyde")
        passages = [[p for p in ps if p is not None] for ps in replies]
        self.rw.counts["n_llm_failed"] += sum(not ps for ps in passages)  # searched with the plain question
        bs = self.ctx.batch_size
        qvecs = emb.encode_queries([q.text for q in queries], batch_size=bs)
        flat = [p for ps in passages for p in ps]
        pvecs = emb.encode_documents(flat, batch_size=bs, long_text=self.ctx.long_text)
        bounds = np.cumsum([0] + [len(ps) for ps in passages])
        per_query = [pvecs[bounds[i] : bounds[i + 1]] for i in range(len(queries))]
        if self.rw.fusion != "rrf":
            # original HyDE: the mean of the query vector and the hypothetical documents' vectors
            fused = np.stack([_unit(np.vstack([qvecs[i : i + 1], per_query[i]]).mean(axis=0))
                              for i in range(len(queries))])
            return search_vectors(self.ctx, self.level, table, queries, fused, depth)
        # rrf: the question and every passage searched alone, the lists fused
        owners = [i for i in range(len(queries)) for _ in range(1 + len(per_query[i]))]
        vecs = np.vstack([np.vstack([qvecs[i : i + 1], per_query[i]]) for i in range(len(queries))])
        lists = search_vectors(self.ctx, self.level, table, [queries[i] for i in owners], vecs, depth)
        grouped: list[list[list[Hit]]] = [[] for _ in queries]
        for i, hits in zip(owners, lists):
            grouped[i].append(hits)
        return [rrf(g, self.rw.rrf_k)[:depth] for g in grouped]
