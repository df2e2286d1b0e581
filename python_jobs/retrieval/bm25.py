"""BM25 over a level of the chunks partition (bm25s, Lucene variant, the finance tokenizer)."""

from __future__ import annotations

import numpy as np

from python_jobs.retrieval import Context, Corpus, Hit, Query, Retriever, RetrieverConfig, RetrieverTree, register
from python_jobs.retrieval.finance_tokenizer import tokenize, tokenize_many


@register
class BM25Config(RetrieverConfig):
    """bm25s (Lucene BM25, k1 1.5, b 0.75) with the finance tokenizer. No settings."""

    name = "bm25"
    can_be_first_stage = True

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        return BM25Retriever(ctx, level)


class BM25Index:
    def __init__(self, corpus: Corpus, progress: bool = False):
        import bm25s  # here, not at the top: the registry imports every retriever module to read its config

        self.corpus = corpus
        self.tokens = tokenize_many(corpus.frame["text"].to_list())
        self.model = bm25s.BM25()  # k1=1.5, b=0.75, Lucene IDF
        self.model.index(self.tokens, show_progress=progress)
        df: dict[str, int] = {}
        for toks in self.tokens:
            for t in set(toks):
                df[t] = df.get(t, 0) + 1
        self.df = df

    def idf(self, term: str) -> float:
        n = len(self.corpus)
        return float(np.log(1 + (n - self.df.get(term, 0) + 0.5) / (self.df.get(term, 0) + 0.5)))

    def search_tokens(self, tokens: list[list[str]], masks: list[np.ndarray | None], depth: int) -> list[list[Hit]]:
        """Top `depth` chunks per query with a positive score (a chunk sharing no term is not retrieved)."""
        n = len(self.corpus)
        out: list[list[Hit] | None] = [None] * len(tokens)
        ids = self.corpus.chunk_ids
        # unrestricted queries go through bm25s' batched top-k in one call
        free = [i for i, (t, m) in enumerate(zip(tokens, masks)) if m is None and t]
        if free:
            docs, scores = self.model.retrieve([tokens[i] for i in free], k=min(depth, n), show_progress=False)
            for row, i in enumerate(free):
                out[i] = [Hit(ids[d], float(s)) for d, s in zip(docs[row], scores[row]) if s > 0]
        for i, (t, m) in enumerate(zip(tokens, masks)):
            if out[i] is not None:
                continue
            if not t or (m is not None and not m.any()):
                out[i] = []
                continue
            scores = self.model.get_scores(t)
            if m is not None:
                scores = np.where(m, scores, 0.0)
            top = np.argsort(-scores, kind="stable")[:depth]
            out[i] = [Hit(ids[d], float(scores[d])) for d in top if scores[d] > 0]
        return out  # type: ignore[return-value]


def bm25_index(ctx: Context, level: str) -> BM25Index:
    return ctx.cached(("bm25", level), lambda: BM25Index(ctx.corpus(level)))


class BM25Retriever:
    uses_dense = False

    def __init__(self, ctx: Context, level: str):
        self.ctx, self.level = ctx, level

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        index = bm25_index(self.ctx, self.level)
        masks = [index.corpus.mask(q.restriction) if q.restriction else None for q in queries]
        return index.search_tokens([tokenize(q.text) for q in queries], masks, depth)
