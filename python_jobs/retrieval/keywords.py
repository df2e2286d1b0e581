"""Keyword query expansion without an LLM, in front of any retriever.

The FinanceRAG systems append LLM-extracted keywords to each query. Here the keywords come from two statistical
sources: (1) the query's own content terms (finance tokenizer, question boilerplate removed), the `n_keywords` rarest
in the corpus by BM25 IDF; (2) pseudo-relevance feedback: the `feedback_terms` terms with the highest tf x idf in
the top `feedback_docs` BM25 hits (under the same condition) that are not already in the query. The expanded query
is the question followed by those keywords, so the key terms weigh more for BM25 and the dense encoder sees them.
"""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from python_jobs.retrieval import Context, FirstStage, Hit, Query, Retriever, RetrieverConfig, RetrieverTree, register
from python_jobs.retrieval.bm25 import bm25_index
from python_jobs.retrieval.finance_tokenizer import tokenize


@register
class KeywordsConfig(RetrieverConfig):
    """Query expansion without an LLM: the query's rarest terms and pseudo-relevance-feedback terms."""

    name = "keywords"
    can_be_first_stage = True

    first_stage: FirstStage = "bm25"
    n_keywords: int = Field(8, ge=0, description="Query terms kept (the rarest by BM25 IDF).")
    feedback_docs: int = Field(3, ge=0, description="Top BM25 hits read for feedback terms (0: no feedback).")
    feedback_terms: int = Field(5, ge=0, description="Feedback terms added (0: none).")

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        return KeywordExpansion(ctx, tree.build(ctx, k, level, self.first_stage), level, self)

# question boilerplate that carries no topic (the finance tokenizer keeps numbers, years, tickers and form types)
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how much many does do did has have had can could would should "
    "i you we me our your company company's amount total value according based using provided given show report "
    "reported statement statements information fy usd million billion thousand please answer round rounded "
    "calculate calculation figure figures number year quarter from than also any all only about".split()
)


class KeywordExpansion:
    def __init__(self, ctx: Context, inner: Retriever, level: str, cfg: KeywordsConfig):
        self.ctx, self.inner, self.level = ctx, inner, level
        self.n_keywords, self.feedback_docs, self.feedback_terms = cfg.n_keywords, cfg.feedback_docs, cfg.feedback_terms
        self.uses_dense = inner.uses_dense

    def keywords(self, queries: list[Query]) -> list[list[str]]:
        index = bm25_index(self.ctx, self.level)
        row_of = {c: i for i, c in enumerate(index.corpus.chunk_ids)}
        own = []
        for q in queries:
            terms = [t for t in dict.fromkeys(tokenize(q.text)) if t not in QUESTION_WORDS]
            own.append(sorted(terms, key=lambda t: -index.idf(t))[: self.n_keywords])
        feedback: list[list[Hit]] = [[] for _ in queries]
        if self.feedback_docs and self.feedback_terms:
            masks = [index.corpus.mask(q.restriction) if q.restriction else None for q in queries]
            feedback = index.search_tokens(own, masks, self.feedback_docs)
        out = []
        for kws, hits in zip(own, feedback):
            tf: Counter[str] = Counter()
            for h in hits:
                tf.update(t for t in index.tokens[row_of[h.chunk_id]] if t not in QUESTION_WORDS)
            seen = set(kws)
            prf = sorted((t for t in tf if t not in seen and len(t) > 2), key=lambda t: (-tf[t] * index.idf(t), t))
            out.append(kws + prf[: self.feedback_terms])
        return out

    def expand(self, queries: list[Query]) -> list[Query]:
        return [Query(q.question_id, f"{q.text} {' '.join(kw)}".strip(), q.restriction)
                for q, kw in zip(queries, self.keywords(queries))]

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        return self.inner.search(self.expand(queries), depth)
