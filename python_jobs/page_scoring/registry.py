"""A landed page-scorer training: its folds, its fold models, which fold model may score which question, and the
page vectors of each fold model, cached.

The page vectors of a fold model are every page of the dataset as pages.py writes it, embedded truncated to the
model's window, stored as `<fold dir>/page_vectors/<digest>.npy` (digest of the pages' ids and texts and the model):
under condition `full` each question's candidates are all pages of the corpus, so every fold model embeds the whole
corpus once; a later run (another k, top P or condition) reads the cache. With epochs = 0 the folds share the base
model and one cache (`<training dir>/base/page_vectors`).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from python_jobs.core.console import progress as console_progress
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.corpus.encoders import load_embedder
from python_jobs.page_scoring.folds import Fold
from python_jobs.page_scoring.pages import digest
from python_jobs.page_scoring.training import KIND, kind_dir


@dataclass(frozen=True)
class FoldModel:
    fold: int
    train_doc_ids: tuple[str, ...]
    test_doc_ids: tuple[str, ...]
    model: str  # what load_embedder loads: the fold model's directory, or the base model (epochs = 0)
    cache_dir: Path
    params: dict = field(default_factory=dict)  # the fold's row's params (a reranker's fusion weight among them)


@dataclass
class Training:
    training_id: str
    dataset: str
    base_model: str
    params: dict
    folds: list[FoldModel]
    timings: dict[int, dict[str, object]] = field(default_factory=dict)

    @property
    def doc_label(self) -> bool:
        return bool(self.params.get("doc_label", True))

    def as_folds(self) -> list[Fold]:
        return [Fold(f.fold, f.train_doc_ids, f.test_doc_ids) for f in self.folds]


def load_training(lake: Lake, training_id: str, kind: str = KIND, field: str = "model_training") -> Training:
    """A landed training of `kind` (its rows and fold models); errors name the option `field` that gave the id."""
    rows = lake.read_partition("model_trainings", training_id).sort("fold")
    verb = f"finrag train-{kind.replace('_', '-')}"
    if rows.height == 0:
        raise InputError(f"no model training {training_id!r} in the lake: run `{verb}` first", field=field)
    if rows["kind"][0] != kind:
        raise InputError(f"model training {training_id!r} is a {rows['kind'][0]} training, not a {kind} one "
                         f"(`{verb}` makes those)", field=field)
    n = rows["n_folds"][0]
    if rows["fold"].to_list() != list(range(n)):
        raise InputError(f"model training {training_id!r} has folds {rows['fold'].to_list()}, expected 0..{n - 1}",
                         field=field)
    root = kind_dir(lake.home, kind) / training_id
    folds = []
    for r in rows.iter_rows(named=True):
        if r["model_path"] is None:
            model, cache = r["base_model"], root / "base"
        else:
            path = lake.home / r["model_path"]
            if not (path / "config_sentence_transformers.json").exists():
                raise InputError(f"the model of fold {r['fold']} of {training_id!r} is missing ({path}): retrain it "
                                 f"with `{verb}`", field=field)
            model, cache = str(path), path
        folds.append(FoldModel(r["fold"], tuple(r["train_doc_ids"]), tuple(r["test_doc_ids"]), model,
                               cache / "page_vectors", json.loads(r["params"] or "{}")))
    first = rows.row(0, named=True)
    return Training(training_id, first["dataset"], first["base_model"], json.loads(first["params"] or "{}"), folds)


def page_vectors(training: Training, fold: int, pages: pl.DataFrame, batch_size: int = 32,
                 progress: bool = True) -> np.ndarray:
    """The fold model's unit vectors of `pages` (doc_id, page_number, text), row i for page i; cached."""
    fm = training.folds[fold]
    key = digest(pages.select("doc_id", "page_number", "text"), fm.model)[:20]
    path = fm.cache_dir / f"{key}.npy"
    t0 = time.perf_counter()
    if path.exists():
        vecs = np.load(path)
        if vecs.shape[0] == pages.height:
            training.timings[fold] = {"cached": True, "seconds": round(time.perf_counter() - t0, 3)}
            return vecs
    emb = load_embedder(fm.model)
    texts = pages["text"].to_list()
    parts = []
    step = max(batch_size, 1) * 4
    with console_progress(total=len(texts), desc=f"page vectors fold {fold}", unit="page", enabled=progress) as bar:
        for start in range(0, len(texts), step):
            parts.append(emb.encode_documents(texts[start : start + step], batch_size=batch_size, long_text="truncate"))
            bar.update(min(step, len(texts) - start))
    vecs = np.concatenate(parts) if parts else np.zeros((0, emb.dim), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{uuid.uuid4().hex}.npy")
    np.save(tmp, vecs)
    os.replace(tmp, path)
    training.timings[fold] = {"cached": False, "seconds": round(time.perf_counter() - t0, 3),
                              "pages_per_s": round(len(texts) / max(time.perf_counter() - t0, 1e-9), 2)}
    return vecs
