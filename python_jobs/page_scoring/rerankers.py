"""A landed `finrag train-reranker` training as a reranker (`--reranker trained:<training_id>`): each question is
scored only by the fold model that held its gold documents out (page_scoring/folds.py: `fold_of_question`; a
question outside every fold by fold sha256(question_id) mod k), so no question is scored by a model that saw it.

Fusion (`--rerank-fusion trained`): a question's candidates are ordered by `fuse`, (1 - w) z(reranker score) +
w z(first-stage score), z standardising over that question's candidates, with the weight w its fold model's training
chose (python_jobs/reranking/training.py: on the fold's training questions only, from `FUSION_WEIGHTS`). w = 1 is
the first stage's order, w = 0 the reranker's alone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.page_scoring.folds import Fold, fold_of_question, gold_documents
from python_jobs.page_scoring.registry import Training, load_training

TRAINED = "trained:"
KIND = "reranker"  # its trainings' kind in model_trainings (python_jobs/reranking/training.py trains them)
FUSIONS = ("none", "trained")
FUSION_WEIGHTS = tuple(i / 10 for i in range(11))  # the first stage's share, 0 (reranker alone) .. 1 (first stage)


def standardised(x: np.ndarray) -> np.ndarray:
    """(x - mean) / sd over one question's candidates; all zeros when they are all equal."""
    x = np.asarray(x, dtype=np.float64)
    sd = x.std() if x.size else 0.0
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def fuse(reranker: np.ndarray, first_stage: np.ndarray, weight: float) -> np.ndarray:
    """One question's fused candidate scores: (1 - weight) z(reranker) + weight z(first stage)."""
    return (1.0 - weight) * standardised(reranker) + weight * standardised(first_stage)


def is_trained(reranker: str) -> bool:
    return reranker.startswith(TRAINED)


@dataclass
class TrainedReranker:
    training: Training
    folds: list[Fold]
    gold: dict[str, frozenset[str]]

    @property
    def passage(self) -> str:
        return str(self.training.params.get("passage", "chunk"))

    def fold_of(self, question_id: str) -> int:
        return fold_of_question(self.folds, question_id, self.gold)

    def model(self, fold: int) -> str:
        return self.training.folds[fold].model

    def fusion_weight(self, fold: int) -> float:
        """The first stage's weight in the fusion, as the fold's training chose it."""
        fusion = self.training.folds[fold].params.get("fusion")
        if not fusion:
            raise InputError(f"reranker training {self.training.training_id!r} chose no fusion weight (trained "
                             "before fusion existed): retrain it with `finrag train-reranker`", field="rerank_fusion")
        return float(fusion["weight"])


def load_trained(lake: Lake, reranker: str, dataset: str, passage: str) -> TrainedReranker:
    """The training `trained:<id>` names, checked against the run: its dataset and its passage level."""
    tid = reranker[len(TRAINED):].strip()
    if not tid:
        raise InputError("--reranker trained: needs a training id (trained:<training_id> of `finrag train-reranker`)",
                         field="reranker")
    training = load_training(lake, tid, KIND, field="reranker")
    if training.dataset != dataset:
        raise InputError(f"--reranker {reranker!r} was trained on dataset {training.dataset!r}, not {dataset!r}",
                         field="reranker")
    out = TrainedReranker(training, training.as_folds(),
                          gold_documents(lake.read("evidence", where={"dataset": dataset})))
    if out.passage != passage:
        raise InputError(f"--reranker {reranker!r} was trained on {out.passage} passages, not {passage} ones: "
                         f"run with --rerank-passage {out.passage}", field="rerank_passage")
    return out
