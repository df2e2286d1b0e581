"""A landed `finrag train-reranker` training as a reranker (`--reranker trained:<training_id>`): each question is
scored only by the fold model that held its gold documents out (page_scoring/folds.py: `fold_of_question`; a
question outside every fold by fold sha256(question_id) mod k), so no question is scored by a model that saw it."""

from __future__ import annotations

from dataclasses import dataclass

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.page_scoring.folds import Fold, fold_of_question, gold_documents
from python_jobs.page_scoring.registry import Training, load_training

TRAINED = "trained:"
KIND = "reranker"  # its trainings' kind in model_trainings (python_jobs/reranking/training.py trains them)


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
