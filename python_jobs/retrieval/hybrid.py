"""Reciprocal rank fusion (Cormack et al. 2009): score(d) = sum over lists of 1 / (rrf_k + rank_d), rank from 1."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from python_jobs.retrieval import Context, Depth, Hit, Query, Retriever, RetrieverConfig, RetrieverTree, register

# the fusion constant of every retriever that fuses by RRF (hybrid, multi_hyde's rrf fusion)
RRFConstant = Annotated[int, Field(ge=1, description="Reciprocal rank fusion constant.")]


@register
class HybridConfig(RetrieverConfig):
    """Reciprocal rank fusion of bm25 and dense, each list `top_n` deep."""

    name = "hybrid"
    needs = ("bm25", "dense")
    can_be_first_stage = True
    min_depth = 100

    rrf_k: RRFConstant = 60
    top_n: Depth = None

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        stages = [tree.build(ctx, k, level, name) for name in self.needs]
        return RRFRetriever(stages, rrf_k=self.rrf_k, depth=self.depth(k))  # type: ignore[arg-type]


def rrf(lists: list[list[Hit]], rrf_k: int) -> list[Hit]:
    score: dict[str, float] = {}
    first_seen: dict[str, tuple[int, int]] = {}
    for li, hits in enumerate(lists):
        for rank, h in enumerate(hits, start=1):
            score[h.chunk_id] = score.get(h.chunk_id, 0.0) + 1.0 / (rrf_k + rank)
            first_seen.setdefault(h.chunk_id, (rank, li))
    # ties (equal fused score) keep the better single-list rank, then the earlier list
    order = sorted(score, key=lambda c: (-score[c], first_seen[c]))
    return [Hit(c, score[c]) for c in order]


class RRFRetriever:
    def __init__(self, stages: list[Retriever], rrf_k: int, depth: int):
        self.stages, self.rrf_k, self.depth = stages, rrf_k, depth
        self.uses_dense = any(s.uses_dense for s in stages)

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        per_stage = [s.search(queries, max(depth, self.depth)) for s in self.stages]
        return [rrf([lists[i] for lists in per_stage], self.rrf_k)[:depth] for i in range(len(queries))]
