"""LLM query expansion in front of a first stage (`first_stage`): the LLM lists search keywords and paraphrases of
the question (prompts/query_expansion_v1.txt), and the first stage searches "question paraphrases keywords".

The reply is parsed strictly: one JSON object {"keywords": [str, ...], "paraphrases": [str, ...]} (a ```json fence
around it is tolerated; other keys, non-string items or an empty result are not). A malformed reply, or a call that
finally fails, leaves that question's query unchanged and is counted in params (`n_expansion_malformed`,
`n_llm_failed`), never silently.
"""

from __future__ import annotations

import json
import re

from python_jobs.retrieval import Context, FirstStage, Hit, Query, Retriever, RetrieverTree, register
from python_jobs.retrieval.hyde import LLMRetrieverConfig, Temperature, rewriter_of

EXPANSION_TEMPLATE = "query_expansion_v1"
EXPANSION_MAX_TOKENS = 200
_FENCE = re.compile(r"^```(?:json)?\s*\n?(.*?)\n?```$", re.DOTALL)
KEYS = frozenset({"keywords", "paraphrases"})


@register
class LLMExpandConfig(LLMRetrieverConfig):
    """LLM keyword / paraphrase expansion in front of a first stage."""

    name = "llm_expand"
    template = EXPANSION_TEMPLATE
    max_tokens = EXPANSION_MAX_TOKENS

    first_stage: FirstStage = "bm25"
    llm_temperature: Temperature = 0.0

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        return LLMExpansion(ctx, tree.build(ctx, k, level, self.first_stage))


def parse_expansion(reply: str) -> list[str] | None:
    """The expansion terms (paraphrases first, then keywords, duplicates dropped), or None when malformed."""
    text = reply.strip()
    m = _FENCE.match(text)
    if m:
        text = m[1].strip()
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not obj or not set(obj) <= KEYS:
        return None
    items: list[str] = []
    for key in ("paraphrases", "keywords"):
        values = obj.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return None
        items.extend(v.strip() for v in values if v.strip())
    items = list(dict.fromkeys(items))
    return items or None


class LLMExpansion:
    def __init__(self, ctx: Context, inner: Retriever):
        self.ctx, self.inner, self.rw = ctx, inner, rewriter_of(ctx)
        self.uses_dense = inner.uses_dense

    def expand(self, queries: list[Query]) -> list[Query]:
        out = []
        for q, (reply,) in zip(queries, self.rw.complete(queries, "query_expansion")):
            if reply is None:
                self.rw.counts["n_llm_failed"] += 1
                out.append(q)
                continue
            terms = parse_expansion(reply)
            if terms is None:
                self.rw.counts["n_expansion_malformed"] += 1
                out.append(q)
                continue
            out.append(Query(q.question_id, " ".join([q.text, *terms]), q.restriction))
        return out

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        if not queries:
            return self.inner.search([], depth)  # warm-up: builds the first stage's indexes
        return self.inner.search(self.expand(queries), depth)
