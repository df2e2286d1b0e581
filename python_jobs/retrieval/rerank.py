"""Two-stage retrieval: a first stage's top-N re-scored by a cross-encoder (sentence-transformers CrossEncoder or
FlagEmbedding FlagReranker), best first; equal scores keep the first-stage order."""

from __future__ import annotations

from pydantic import Field, field_validator

from python_jobs.core.console import progress
from python_jobs.core.job_config import required
from python_jobs.corpus.encoders import load_reranker
from python_jobs.retrieval import (
    Context,
    Depth,
    FirstStage,
    Hit,
    Query,
    Retriever,
    RetrieverConfig,
    RetrieverTree,
    register,
)


@register
class RerankConfig(RetrieverConfig):
    """A first stage's top `top_n` re-scored by a cross-encoder (`top_n` 200 for FinanceRAG's two-stage 200 -> k)."""

    name = "rerank"
    can_be_first_stage = True
    min_depth = 20

    first_stage: FirstStage = "dense"
    reranker: str | None = Field(None, validate_default=True,
                                 description="Cross-encoder name or local path (flag: prefix = FlagReranker).")
    top_n: Depth = None

    @field_validator("reranker")
    @classmethod
    def _given(cls, value: str | None) -> str:
        if not value:
            raise required("rerank needs --reranker (a cross-encoder name or local path)")
        return value

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        first = tree.build(ctx, k, level, self.first_stage)
        return RerankRetriever(ctx, first, self.reranker, top_n=self.depth(k))  # type: ignore[arg-type]


class RerankRetriever:
    def __init__(self, ctx: Context, first: Retriever, reranker: str, top_n: int):
        self.ctx, self.first, self.reranker, self.top_n = ctx, first, reranker, top_n
        self.uses_dense = first.uses_dense

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        model = load_reranker(self.reranker)
        candidates = self.first.search(queries, max(self.top_n, depth))
        out: list[list[Hit]] = []
        for q, hits in progress(list(zip(queries, candidates)), desc="rerank", unit="q",
                                  enabled=self.ctx.progress and bool(queries)):
            scores = model.score([(q.text, self.ctx.texts[h.chunk_id]) for h in hits], batch_size=self.ctx.batch_size)
            order = sorted(range(len(hits)), key=lambda i: (-scores[i], i))
            out.append([Hit(hits[i].chunk_id, float(scores[i])) for i in order][:depth])
        return out
