"""Two-stage retrieval: a first stage's top-N re-scored by a cross-encoder (sentence-transformers CrossEncoder or
FlagEmbedding FlagReranker), best first; equal scores keep the first-stage order."""

from __future__ import annotations

from python_jobs.core.console import progress
from python_jobs.corpus.encoders import load_reranker
from python_jobs.retrieval import Context, Hit, Query, Retriever


class RerankRetriever:
    def __init__(self, ctx: Context, first: Retriever, reranker: str, top_n: int = 20):
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
