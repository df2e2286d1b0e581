"""Parent-child retrieval: search the small child chunks, return their parents (deduplicated, in the order of each
parent's best child; a parent's score is its best child's score)."""

from __future__ import annotations

from python_jobs.core.errors import InputError
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
class ParentChildConfig(RetrieverConfig):
    """Its first stage searches the child chunks of a parent-child chunking (`finrag chunk --parent-size`), `top_n`
    children deep; it returns their parents."""

    name = "parent_child"
    min_depth = 100
    depth_per_k = 10  # children per parent wanted

    first_stage: FirstStage = "dense"
    top_n: Depth = None

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        children = tree.build(ctx, k, "child", self.first_stage)
        return ParentChildRetriever(ctx, children, child_depth=self.depth(k))  # type: ignore[arg-type]


class ParentChildRetriever:
    def __init__(self, ctx: Context, children: Retriever, child_depth: int):
        self.ctx, self.children, self.child_depth = ctx, children, child_depth
        self.uses_dense = children.uses_dense
        corpus = ctx.corpus("child").frame
        self.parent_of = dict(zip(corpus["chunk_id"].to_list(), corpus["parent_chunk_id"].to_list()))
        unknown = set(self.parent_of.values()) - set(ctx.texts)
        if unknown:
            raise InputError(f"child chunks name {len(unknown)} parents missing from the partition, "
                             f"e.g. {sorted(unknown)[0]!r}", field="parent_chunk_id")

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        out: list[list[Hit]] = []
        for hits in self.children.search(queries, max(depth, self.child_depth)):
            parents: dict[str, float] = {}
            for h in hits:
                parents.setdefault(self.parent_of[h.chunk_id], h.score)
                if len(parents) == depth:
                    break
            out.append([Hit(p, s) for p, s in parents.items()])
        return out
