"""The learned page scorer of the retrieval-gap study as a retriever: pages first, then chunks.

For each question: the fold model of `--model-training` that did not see the question's document (folds.py:
`fold_of_question` — the fold whose test documents hold its gold documents) scores the question's candidate pages
(every page of the dataset under `full`; the pages of its gold documents / its gold pages under `oracle_doc` /
`oracle_page`) by cosine similarity of its embeddings; the top `top_pages` P (its default is the study's) are kept,
ties by document and page order; then the chunks covering a kept page (page_start <= p <= page_end) are ranked by
dense similarity — the run's embedder and its LanceDB vectors, as `dense` — and the top k returned. A question
whose candidates hold no page gets no results.

Which fold scored each question goes into the run's params (`page_scorer.fold_of_question`), with the page-vector
timings of each fold model (or that they came from the cache).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from pydantic import Field, field_validator

from python_jobs.core.errors import InputError
from python_jobs.core.job_config import required
from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import load_embedder
from python_jobs.page_scoring.folds import fold_of_question, gold_documents
from python_jobs.page_scoring.pages import read_page_texts
from python_jobs.page_scoring.registry import load_training, page_vectors
from python_jobs.retrieval import Context, Hit, Query, Retriever, RetrieverConfig, RetrieverTree, register
from python_jobs.retrieval.conditions import Restriction
from python_jobs.retrieval.dense import DenseConfig, lance_table, search_vectors


@register
class PageScorerConfig(RetrieverConfig):
    """The retrieval-gap study's learned page scorer: each question's top pages by a fold model of a training, then
    the chunks on them by dense similarity (the run's embedder)."""

    name = "page_scorer"
    needs = ("dense",)

    model_training: str | None = Field(None, validate_default=True, description=(
        "The `finrag train-page-scorer` training whose fold models score the pages."))
    top_pages: int = Field(20, ge=1, description="Pages kept per question; chunks are ranked within them.")

    @field_validator("model_training")
    @classmethod
    def _given(cls, value: str | None) -> str:
        if not value:
            raise required("page_scorer needs --model-training (a `finrag train-page-scorer` training id)")
        return value

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        return PageScorerRetriever(ctx, level, tree.find(DenseConfig), self)


class PageScorerRetriever:
    uses_dense = True

    def __init__(self, ctx: Context, level: str, dense: DenseConfig, cfg: PageScorerConfig):
        self.ctx, self.level, self.dense = ctx, level, dense
        self.training_id, self.top_pages = cfg.model_training, cfg.top_pages
        self.fold_of: dict[str, int] = {}
        self.kept: dict[str, list[tuple[str, int]]] = {}

    def _state(self):
        def build():
            lake = Lake(self.ctx.home)
            training = load_training(lake, self.training_id)
            if training.dataset != self.ctx.dataset:
                raise InputError(f"model training {self.training_id!r} was trained on dataset {training.dataset!r}, "
                                 f"not {self.ctx.dataset!r}", field="model_training")
            pages = read_page_texts(lake, self.ctx.dataset, training.doc_label)
            gold = gold_documents(lake.read("evidence", where={"dataset": self.ctx.dataset}))
            return training, pages, gold

        return self.ctx.cached(("page_scorer", self.training_id), build)

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        training, pages, gold = self._state()
        table = lance_table(self.ctx, self.dense, self.level)  # the chunk vectors must exist before any page is scored
        if not queries:
            return []
        folds = training.as_folds()
        by_fold: dict[int, list[int]] = {}
        for i, q in enumerate(queries):
            f = fold_of_question(folds, q.question_id, gold)
            self.fold_of[q.question_id] = f
            by_fold.setdefault(f, []).append(i)
        doc = pages["doc_id"].to_numpy().astype(object)
        num = pages["page_number"].to_numpy()
        restricted: list[Query | None] = [None] * len(queries)
        for f in sorted(by_fold):
            idx = by_fold[f]
            pv = page_vectors(training, f, pages, batch_size=self.ctx.batch_size, progress=self.ctx.progress)
            qv = load_embedder(training.folds[f].model).encode_queries([queries[i].text for i in idx],
                                                                       batch_size=self.ctx.batch_size)
            scores = qv @ pv.T
            for row, i in enumerate(idx):
                q = queries[i]
                allowed = (np.ones(len(num), dtype=bool) if q.restriction is None
                           else q.restriction.mask(doc, num, num))
                cand = np.flatnonzero(allowed)
                # best score first; ties keep the pages' (document, page) order
                order = cand[np.lexsort((cand, -scores[row, cand]))][: self.top_pages]
                kept = sorted((str(doc[j]), int(num[j])) for j in order)
                self.kept[q.question_id] = kept
                if kept:
                    restricted[i] = Query(q.question_id, q.text,
                                          Restriction(tuple(sorted({d for d, _ in kept})), tuple(kept)))
        todo = [i for i, q in enumerate(restricted) if q is not None]
        out: list[list[Hit]] = [[] for _ in queries]
        if todo:
            vecs = load_embedder(self.dense.embedder).encode_queries([queries[i].text for i in todo],
                                                                   batch_size=self.ctx.batch_size)
            for i, hits in zip(todo, search_vectors(self.ctx, self.dense, self.level, table,
                                                    [restricted[i] for i in todo], vecs, depth), strict=True):
                out[i] = hits
        return out

    def stats(self) -> dict[str, object]:
        training = self._state()[0]
        return {"page_scorer": {
            "training_id": self.training_id, "base_model": training.base_model, "n_folds": len(training.folds),
            "top_pages": self.top_pages, "questions_by_fold": dict(sorted(Counter(self.fold_of.values()).items())),
            "fold_of_question": dict(sorted(self.fold_of.items())),
            "page_vectors": {str(f): t for f, t in sorted(training.timings.items())},
        }}
