"""Two-stage retrieval and cascades: a first stage's top-N re-scored by a cross-encoder (sentence-transformers
CrossEncoder, FlagEmbedding FlagReranker with the `flag:` prefix, or `trained:<training_id>`: the fold models of a
`finrag train-reranker` training, each question scored by the fold that did not see it), best first; equal scores
keep the first-stage order.

- Passages (`rerank_passage`): `chunk` scores the chunk's text; `page` scores the pages a chunk covers (their text
  as the page scorer reads it: python_jobs/page_scoring/pages.py) and gives the chunk its best page's score — each
  page scored once per question however many candidates cover it.
- Cascades (FinanceRAG's "Multi-Reranker", top 200 -> top 20 -> k): a rerank stage's first stage may be another
  rerank stage (`--first-stage rerank`), whose settings are given as `first_stage.<setting>` (CLI:
  `--first-stage-reranker`, `--first-stage-top-n`, ...). The outer stage reads the inner one's top `top_n`, so the
  inner one must keep at least that many (its own `top_n`): a shallower inner stage is refused before the run.
- Page windows (`page_windows`, `page` only; python_jobs/page_scoring/windows.py): each page is read as overlapping
  windows of the model's length (word pieces counted with the question and the filing's label) and scores its best
  window (MaxP), so evidence past the first window is read. By default as the trained reranker was trained (its
  `page_windows`, stride and length); for another cross-encoder off unless asked (its tokenizer's length, at most
  512, half-window stride). Windowed scores are cached apart from whole-page ones.
- Fusion (`rerank_fusion`): `none` orders the candidates by the reranker's score alone; `trained` (a trained
  reranker only) by (1 - w) z(reranker) + w z(first stage) over each question's candidates, w the weight the fold
  model's training chose on its own training questions (python_jobs/page_scoring/rerankers.py: `fuse`); the landed
  score is the fused one, and the run's params hold each fold's w.
- Every score goes through the home's score cache (python_jobs/corpus/rerank_scores.py): a sweep over first stages,
  depths or k re-scores nothing it has scored. Each stage's pairs, cache hits, pairs scored, seconds and pairs / s
  and its cost per question (pairs and seconds) go into the run's params (`rerank`, outermost stage first), with
  the fold that scored each question for a trained reranker.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

import numpy as np
from pydantic import Field, field_validator

from python_jobs.core.errors import InputError
from python_jobs.core.job_config import required
from python_jobs.core.lake import Lake
from python_jobs.corpus.rerank_scores import ScoreStats, score_pairs
from python_jobs.page_scoring.pages import read_page_texts
from python_jobs.page_scoring.rerankers import FUSIONS, fuse, is_trained, load_trained
from python_jobs.page_scoring.windows import DEFAULT_STRIDE, PageWindows, candidate_scores, load_tokenizer
from python_jobs.retrieval import (
    INNER,
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

PASSAGES = ("chunk", "page")


@register
class RerankConfig(RetrieverConfig):
    """A first stage's top `top_n` re-scored by a cross-encoder (`top_n` 200 for FinanceRAG's two-stage 200 -> k);
    a rerank first stage makes a cascade."""

    name = "rerank"
    can_be_first_stage = True
    cascades = True
    min_depth = 20

    first_stage: FirstStage = "dense"
    reranker: str | None = Field(None, validate_default=True, description=(
        "Cross-encoder name or local path (flag: prefix = FlagReranker; trained:<training_id> = the fold models of "
        "a `finrag train-reranker` training)."))
    top_n: Depth = None
    rerank_passage: Literal[PASSAGES] = Field("chunk", description=(  # type: ignore[valid-type]
        "What the cross-encoder reads: the chunk's text, or the pages it covers (the chunk takes its best page's "
        "score)."))
    rerank_fusion: Literal[FUSIONS] = Field("none", description=(  # type: ignore[valid-type]
        "Order by the reranker's score alone, or fuse it with the first stage's by the weight a trained reranker's "
        "training chose on its training questions."))
    page_windows: bool | None = Field(None, description=(
        "page: read each page as overlapping windows of the model's length and score it by its best window (MaxP); "
        "default: as the trained reranker was trained (off for another cross-encoder)."))

    @field_validator("reranker")
    @classmethod
    def _given(cls, value: str | None) -> str:
        if not value:
            raise required("rerank needs --reranker (a cross-encoder name or local path, or trained:<training_id>)")
        return value

    def hashed(self) -> dict[str, Any]:
        out = self.model_dump()
        if out["rerank_passage"] == "chunk":  # added later: the runs that read chunks keep their ids
            del out["rerank_passage"]
        if out["rerank_fusion"] == "none":  # added later: the unfused runs keep their ids
            del out["rerank_fusion"]
        if out["page_windows"] is None:  # added later: the training decides; the earlier runs keep their ids
            del out["page_windows"]
        return out

    def check_inner(self, inner: RetrieverConfig, k: int) -> None:
        if isinstance(inner, RerankConfig):
            need, keep = self.depth(k), inner.depth(k)
            if keep < need:  # type: ignore[operator]
                raise InputError(f"the cascade's first stage keeps its top {keep} (first_stage.top_n) but the rerank "
                                 f"over it reads {need} (top_n): set --first-stage-top-n to at least {need}",
                                 field=INNER + "top_n")

    def build(self, ctx: Context, level: str, k: int, tree: RetrieverTree) -> Retriever:
        first = tree.inner(self).build(ctx, k, level)
        return RerankRetriever(ctx, level, first, self, top_n=self.depth(k))  # type: ignore[arg-type]


class RerankRetriever:
    def __init__(self, ctx: Context, level: str, first: Retriever, cfg: RerankConfig, top_n: int):
        self.ctx, self.level, self.first, self.top_n = ctx, level, first, top_n
        self.reranker, self.passage, self.fusion = str(cfg.reranker), cfg.rerank_passage, cfg.rerank_fusion
        self.page_windows = cfg.page_windows
        if self.page_windows and self.passage != "page":
            raise InputError("--page-windows splits pages: it needs --rerank-passage page", field="page_windows")
        self.window_params: dict[str, object] | None = None  # the page windows read, once scored
        self.uses_dense = first.uses_dense
        self.score_stats = ScoreStats()
        self.n_questions = 0
        self.fold_of: dict[str, int] = {}
        self.weight_of_fold: dict[int, float] = {}

    def _trained(self):
        if not is_trained(self.reranker):
            return None
        return self.ctx.cached(("trained_reranker", self.reranker, self.passage), lambda: load_trained(
            Lake(self.ctx.home), self.reranker, self.ctx.dataset, self.passage))

    def _pages(self):
        """(chunk_id -> the pages it covers, (doc, page) -> page text) for `page` passages."""
        trained = self._trained()
        doc_label = trained.training.doc_label if trained else True

        def build():
            pages = read_page_texts(Lake(self.ctx.home), self.ctx.dataset, doc_label)
            text = {(d, p): t for d, p, t in pages.select("doc_id", "page_number", "text").iter_rows()}
            corpus = self.ctx.corpus(self.level)
            covers: dict[str, list[tuple[str, int]]] = {}
            for c, d, a, b in zip(corpus.chunk_ids, corpus.doc_ids, corpus.page_start, corpus.page_end, strict=True):
                covers[c] = [(d, n) for n in range(int(a), max(int(a), int(b)) + 1) if (d, n) in text] if a >= 0 else []
            return covers, text

        return self.ctx.cached(("rerank_pages", self.level, doc_label), build)

    def _windows(self, model: str) -> PageWindows | None:
        """The page windows `model` reads (None: whole pages), one splitter per tokenizer and setting."""
        if self.passage != "page":
            return None
        trained = self._trained()
        params = trained.training.params if trained else {}
        on = self.page_windows if self.page_windows is not None else bool(params.get("page_windows", False))
        if not on:
            return None
        stride = float(params.get("window_stride") or DEFAULT_STRIDE)
        source = trained.model(trained.training.folds[0].fold) if trained else model

        def build() -> PageWindows:
            tok = load_tokenizer(source)
            length = int(params.get("max_length") or min(int(tok.model_max_length or 512), 512))
            return PageWindows(tok, length, stride, trained.training.doc_label if trained else True)

        return self.ctx.cached(("page_windows", self.reranker, source, stride), build)

    def search(self, queries: list[Query], depth: int) -> list[list[Hit]]:
        trained = self._trained()  # a bad training id or passage level fails before anything is searched
        if self.fusion == "trained":
            if trained is None:
                raise InputError(f"--rerank-fusion trained needs a trained reranker (trained:<training_id>), not "
                                 f"{self.reranker!r}", field="rerank_fusion")
            weights = {f.fold: trained.fusion_weight(f.fold) for f in trained.training.folds}
        if self.passage == "page":
            self._pages()
        candidates = self.first.search(queries, max(self.top_n, depth))
        if not queries:
            return []
        self.n_questions += len(queries)
        by_model: dict[str, list[int]] = {}
        weight = [0.0] * len(queries)
        for i, q in enumerate(queries):
            if trained is None:
                model = self.reranker
            else:
                fold = trained.fold_of(q.question_id)
                self.fold_of[q.question_id] = fold
                model = trained.model(fold)
                if self.fusion == "trained":
                    weight[i] = self.weight_of_fold[fold] = weights[fold]
            by_model.setdefault(model, []).append(i)
        out: list[list[Hit]] = [[] for _ in queries]
        for model, idx in by_model.items():
            for i, scores in zip(idx, self._score(model, [queries[i] for i in idx], [candidates[i] for i in idx]),
                                 strict=True):
                hits = candidates[i]
                if self.fusion == "trained":
                    scores = fuse(scores, np.array([h.score for h in hits]), weight[i])
                order = sorted(range(len(hits)), key=lambda j: (-scores[j], j))
                out[i] = [Hit(hits[j].chunk_id, float(scores[j])) for j in order][:depth]
        return out

    def _score(self, model: str, queries: list[Query], candidates: list[list[Hit]]) -> list[np.ndarray]:
        """Each query's candidates' scores by one model: every pair of the batch scored together (batched)."""
        windows = self._windows(model)
        if self.passage == "chunk":
            texts = self.ctx.texts
            units = [[[texts[h.chunk_id]] for h in hits] for hits in candidates]
        elif windows is None:
            covers, page_text = self._pages()
            units = [[[page_text[p] for p in covers[h.chunk_id]] for h in hits] for hits in candidates]
        else:  # MaxP: a chunk scores its pages' best window
            covers, page_text = self._pages()
            units = [[[w.text for p in covers[h.chunk_id] for w in windows.windows(q.text, page_text[p])]
                      for h in hits] for q, hits in zip(queries, candidates, strict=True)]
            self.window_params = windows.params()
        pairs, owner = [], []
        for qi, (q, per_hit) in enumerate(zip(queries, units, strict=True)):
            for hi, passages in enumerate(per_hit):
                for text in passages:
                    pairs.append((q.text, text))
                    owner.append((qi, hi))
        flat = score_pairs(self.ctx.home, model, pairs, self.ctx.batch_size, self.ctx.progress, self.score_stats,
                           windows.namespace() if windows else "")
        return candidate_scores(owner, flat, [len(hits) for hits in candidates])  # MaxP: a chunk's best page

    def stats(self) -> dict[str, object]:
        inner = self.first.stats().get("rerank", []) if isinstance(self.first, RerankRetriever) else []
        n = max(self.n_questions, 1)
        own = {"reranker": self.reranker, "top_n": self.top_n, "passage": self.passage, "fusion": self.fusion,
               **self.score_stats.as_dict(),
               "pairs_per_question": round(self.score_stats.pairs / n, 2),
               "seconds_per_question": round(self.score_stats.seconds / n, 4)}
        own["page_windows"] = self.window_params
        if self.fold_of:
            own["questions_by_fold"] = dict(sorted(Counter(self.fold_of.values()).items()))
            own["fold_of_question"] = dict(sorted(self.fold_of.items()))
        if self.weight_of_fold:
            own["fusion_weight_of_fold"] = {str(f): w for f, w in sorted(self.weight_of_fold.items())}
        return {"rerank": [own, *inner]}
