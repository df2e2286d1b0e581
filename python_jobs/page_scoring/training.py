"""`finrag train-page-scorer`: fine-tune one page scorer per fold and land `model_trainings`.

Each fold model starts from the base model (default: the packaged all-MiniLM-L6-v2, from its local directory; any
sentence-transformers name or path, loaded through python_jobs/corpus/encoders.py) and is trained with
sentence-transformers' `SentenceTransformerTrainer` on the fold's training pairs (anchor = question, positive = the
gold page text of pages.py) with `MultipleNegativesRankingLoss` — the other pages of the batch are the negatives — and
the `NO_DUPLICATES` batch sampler, so a question with two gold pages, or a page gold for two questions, is never its
own in-batch negative. The page is truncated to the model's window (256 word pieces for MiniLM), as in scoring.
Optimiser: AdamW, linear decay after a linear warm-up (`warmup_ratio` of the steps).

Reproducible: Python's, numpy's and torch's generators are seeded, the trainer's data order too (`seed`,
`data_seed`), and `torch.use_deterministic_algorithms(True)` holds while a fold trains; the same seed on the same
pairs gives the same training id, the same folds and the same weights (checked bit for bit on CPU).

Where things go: fold models under `$FINRAG_HOME/models/page_scorer/<training_id>/fold-<f>/` (written to a staging
directory, moved into place when every fold is done, then the `model_trainings` rows land: a killed training leaves
nothing half-made). Retraining the same id replaces its models (and their cached page vectors) and rows. With
`epochs = 0` nothing is trained or saved: every fold "model" is the base model, which gives the untrained page
scorer through the same pipeline (a baseline for the trained one).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from python_jobs.core.config import models_dir
from python_jobs.core.console import progress as console_progress
from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.run_ids import derived_id
from python_jobs.corpus.encoders import DEFAULT_EMBEDDER, evict, load_trainable, resolve
from python_jobs.page_scoring.folds import Fold, Pair, make_folds, training_pairs
from python_jobs.page_scoring.pages import normalisation_params, read_page_texts

KIND = "page_scorer"


@dataclass(frozen=True)
class FoldTrainingConfig:
    """The settings every per-fold trainer has (the page scorer's, the reranker's: python_jobs/reranking/)."""

    dataset: str
    base_model: str = DEFAULT_EMBEDDER
    folds: int = 5
    epochs: int = 4
    seed: int = 0
    batch_size: int = 16
    learning_rate: float = 5e-5
    warmup_ratio: float = 0.1


@dataclass(frozen=True)
class TrainingConfig(FoldTrainingConfig):
    """Everything that decides the page scorer's fold models (hashed, with the pairs, into the training id)."""

    doc_label: bool = True


def kind_dir(home: Path, kind: str) -> Path:
    """Where a kind of training keeps its fold models: `<home>/models/<kind>/<training_id>/fold-<f>/`."""
    return models_dir(home) / kind


def page_scorer_dir(home: Path) -> Path:
    return kind_dir(home, KIND)


def fold_dir_name(fold: int) -> str:
    return f"fold-{fold}"


def pairs_digest(pairs: list[Pair]) -> str:
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps([p.question_id, p.doc_id, p.page_number, p.question, p.page_text],
                            ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


def training_id(cfg: TrainingConfig, digest: str) -> str:
    blob = json.dumps({**asdict(cfg), "normalisation": normalisation_params(cfg.doc_label), "pairs": digest,
                       "kind": KIND}, sort_keys=True)
    return derived_id(cfg.dataset, KIND, hashlib.sha256(blob.encode()).hexdigest())


@contextmanager
def seeded(seed: int):
    """Seed Python, numpy and torch, and hold torch to deterministic algorithms (restored afterwards)."""
    import torch

    before = torch.are_deterministic_algorithms_enabled()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before)


def check_config(cfg: TrainingConfig) -> None:
    if cfg.epochs < 0:
        raise InputError(f"--epochs must be >= 0, got {cfg.epochs}", field="epochs")
    if cfg.batch_size < 2:
        raise InputError(f"--batch-size must be >= 2 (in-batch negatives), got {cfg.batch_size}", field="batch_size")
    if not cfg.learning_rate > 0:
        raise InputError(f"--learning-rate must be > 0, got {cfg.learning_rate}", field="learning_rate")
    if not 0 <= cfg.warmup_ratio < 1:
        raise InputError(f"--warmup-ratio must be in [0, 1), got {cfg.warmup_ratio}", field="warmup_ratio")


def prepare(lake: Lake, cfg: TrainingConfig) -> tuple[list[Pair], list[Fold]]:
    """The training pairs of the dataset and its document-level folds."""
    questions = lake.read("questions", where={"dataset": cfg.dataset})
    if questions.height == 0:
        raise InputError(f"no questions for dataset {cfg.dataset!r}: ingest them first", field="dataset")
    pages = read_page_texts(lake, cfg.dataset, cfg.doc_label)
    pairs = training_pairs(questions, lake.read("evidence", where={"dataset": cfg.dataset}), pages)
    if not pairs:
        raise InputError(f"dataset {cfg.dataset!r} has no (question, gold page) pair: no evidence page is in the "
                         "lake's pages", field="dataset")
    return pairs, make_folds(pairs, cfg.folds, cfg.seed)


def run_trainer(trainer, desc: str, progress: bool) -> list[float]:
    """Train a sentence-transformers trainer (bi-encoder or cross-encoder) with a stderr bar instead of its own bar
    and log printer (which write to stdout); returns the mean loss of each epoch (`logging_strategy="epoch"`)."""
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    losses_by_epoch: list[float] = []

    class Progress(TrainerCallback):
        def __init__(self):
            self.bar = None

        def on_train_begin(self, args, state, control, **kwargs):
            self.bar = console_progress(total=state.max_steps, desc=desc, unit="step", enabled=progress)

        def on_step_end(self, args, state, control, **kwargs):
            self.bar.update(state.global_step - self.bar.n)

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                losses_by_epoch.append(float(logs["loss"]))
                self.bar.set_postfix(loss=f"{float(logs['loss']):.4f}")

        def on_train_end(self, args, state, control, **kwargs):
            self.bar.close()

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    trainer.add_callback(Progress())
    trainer.train()
    return losses_by_epoch


def trainer_arguments(args_cls, work_dir: Path, epochs: int, batch_size: int, learning_rate: float,
                      warmup_ratio: float, seed: int, **extra):
    """The training arguments every fold trainer shares: CPU, seeded data order, a loss per epoch, nothing saved
    by the trainer itself (the fold model is saved once, at the end)."""
    return args_cls(
        output_dir=str(work_dir), num_train_epochs=epochs, per_device_train_batch_size=batch_size,
        learning_rate=learning_rate, warmup_steps=warmup_ratio, lr_scheduler_type="linear",
        seed=seed, data_seed=seed, logging_strategy="epoch", save_strategy="no", report_to="none", use_cpu=True,
        dataloader_num_workers=0, disable_tqdm=True, **extra,
    )


def fine_tune(cfg: TrainingConfig, pairs: list[Pair], out_dir: Path, work_dir: Path,
              progress: bool = True, desc: str = "train") -> tuple[list[float], int, dict[str, object]]:
    """Fine-tune a fresh copy of the base model on pairs; save it to out_dir. Returns the mean loss of each epoch,
    the model's window (max_seq_length: pages are truncated to it) and nothing more to record."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    with seeded(cfg.seed):
        _, model = load_trainable(cfg.base_model)
        data = Dataset.from_dict({"anchor": [p.question for p in pairs], "positive": [p.page_text for p in pairs]})
        args = trainer_arguments(SentenceTransformerTrainingArguments, work_dir, cfg.epochs, cfg.batch_size,
                                 cfg.learning_rate, cfg.warmup_ratio, cfg.seed,
                                 batch_sampler=BatchSamplers.NO_DUPLICATES)
        trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data,
                                             loss=MultipleNegativesRankingLoss(model))
        losses = run_trainer(trainer, desc, progress)
        model.save(str(out_dir), create_model_card=False)
    return losses, int(model.max_seq_length), {}


# fit(fold, its training pairs, the directory to save the fold model to, a scratch directory, the bar's label) ->
# (mean loss per epoch, the model's window, what else the fold's params record)
FitFold = Callable[[Fold, list[Pair], Path, Path, str], tuple[list[float], int, dict[str, object]]]


# finish(the training's model directory, holding fold-<f>/ for every fold) -> fold -> more params of its row
FinishFolds = Callable[[Path], dict[int, dict[str, object]]]


def train_folds(lake: Lake, kind: str, tid: str, pairs: list[Pair], folds: list[Fold], fit: FitFold | None,
                base_row: dict[str, object], params: dict[str, object], progress: bool = True,
                finish: FinishFolds | None = None) -> list[dict]:
    """The one per-fold training loop of the warehouse's trainers (the page scorer, the reranker): each fold's model
    trained by `fit` on the pairs of its training documents only (None: nothing is trained, the base model scores),
    saved to a staging directory, moved to `<home>/models/<kind>/<tid>/fold-<f>/` once every fold is done, then
    `finish` (if any: a step that needs every fold model in place, as the reranker's choice of its fusion weight)
    adds to each fold's params, then one `model_trainings` row per fold lands (base_row's columns, `params` with the
    fold's own). A killed training leaves no rows; retraining an id replaces its models, their caches and its rows."""
    root = kind_dir(lake.home, kind)
    stage = root / f".staging-{uuid.uuid4().hex}"
    rows = []
    try:
        for fold in folds:
            train_docs, test_docs = set(fold.train_doc_ids), set(fold.test_doc_ids)
            train = [p for p in pairs if p.doc_id in train_docs]
            held = [p for p in pairs if p.doc_id in test_docs]
            if {p.question_id for p in train} & {p.question_id for p in held}:  # make_folds keeps them apart
                raise RuntimeError(f"fold {fold.fold}: a question has pairs on both sides")
            t0 = time.perf_counter()
            model_path = window = None
            epoch_losses: list[float] = []
            extra: dict[str, object] = {}
            if fit is not None:
                work = stage / f"_trainer-{fold.fold}"
                epoch_losses, window, extra = fit(fold, train, stage / fold_dir_name(fold.fold), work,
                                                  f"train {tid} fold {fold.fold + 1}/{len(folds)}")
                shutil.rmtree(work, ignore_errors=True)
                model_path = (root / tid / fold_dir_name(fold.fold)).relative_to(lake.home).as_posix()
            seconds = time.perf_counter() - t0
            if fit is not None:
                say(f"fold {fold.fold}: {len(train)} pairs, {len(fold.test_doc_ids)} test documents, "
                    f"{seconds:.1f} s, epoch losses {[round(x, 4) for x in epoch_losses]}")
            rows.append({
                **base_row, "training_id": tid, "fold": fold.fold, "n_folds": len(folds), "kind": kind,
                "model_path": model_path, "train_doc_ids": list(fold.train_doc_ids),
                "test_doc_ids": list(fold.test_doc_ids), "n_train_pairs": len(train), "n_test_pairs": len(held),
                "epoch_losses": epoch_losses, "train_seconds": round(seconds, 3),
                "params": json.dumps({**params, "n_pairs": len(pairs),
                                      "n_train_questions": len({p.question_id for p in train}),
                                      "test_question_ids": sorted({p.question_id for p in held}),
                                      "max_seq_length": window, **extra}, sort_keys=True),
            })
        final = root / tid
        if final.exists():  # a retrain replaces the old models and the caches beside them
            trash = root / f".trash-{uuid.uuid4().hex}"
            os.replace(final, trash)
            shutil.rmtree(trash, ignore_errors=True)
        if fit is not None:
            os.replace(stage, final)
        for fold in folds:  # a model loaded earlier in this process from the old files is stale
            evict(str(final / fold_dir_name(fold.fold)))
        if finish is not None:
            more = finish(final)
            for row in rows:
                row["params"] = json.dumps({**json.loads(row["params"]), **more.get(row["fold"], {})},
                                           sort_keys=True)
        lake.land([("model_trainings", tid, contract("model_trainings").frame(rows))])
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return rows


def train_page_scorer(lake: Lake, cfg: TrainingConfig, training_id_override: str | None = None,
                      progress: bool = True) -> dict[str, object]:
    """Train one page scorer per document-level fold; land one `model_trainings` row per fold."""
    check_config(cfg)
    canonical, _, _ = resolve(cfg.base_model)
    cfg = TrainingConfig(**{**asdict(cfg), "base_model": canonical})
    pairs, folds = prepare(lake, cfg)
    digest = pairs_digest(pairs)
    tid = check_id(training_id_override or training_id(cfg, digest), "training id")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    def fit(fold: Fold, train: list[Pair], out: Path, work: Path, desc: str):
        return fine_tune(cfg, train, out, work, progress, desc=desc)

    t_all = time.perf_counter()
    rows = train_folds(lake, KIND, tid, pairs, folds, fit if cfg.epochs > 0 else None,
                       {"dataset": cfg.dataset, "base_model": cfg.base_model},
                       {**asdict(cfg), "normalisation": normalisation_params(cfg.doc_label), "pairs_sha256": digest},
                       progress)
    total = time.perf_counter() - t_all
    return {"training_id": tid, "dataset": cfg.dataset, "folds": len(folds), "pairs": len(pairs),
            "epochs": cfg.epochs, "train_seconds": round(sum(r["train_seconds"] for r in rows), 1),
            "seconds": round(total, 1)}
