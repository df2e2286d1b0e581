"""Reciprocal rank fusion (Cormack et al. 2009): score(d) = sum over lists of 1 / (rrf_k + rank_d), rank from 1."""

from __future__ import annotations

from python_jobs.retrieval import Hit, Query, Retriever


def rrf(lists: list[list[Hit]], rrf_k: int = 60) -> list[Hit]:
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
    def __init__(self, stages: list[Retriever], rrf_k: int = 60, depth: int = 100):
        self.stages, self.rrf_k, self.depth = stages, rrf_k, depth
        self.uses_dense = any(s.uses_dense for s in stages)

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        per_stage = [s.search(queries, max(depth, self.depth)) for s in self.stages]
        return [rrf([lists[i] for lists in per_stage], self.rrf_k)[:depth] for i in range(len(queries))]
