"""Scoring (question, passage) pairs with a cross-encoder, through a score cache.

The cache holds one score per (model, question text, passage text) in `<home>/models/reranker_scores.sqlite`:
a model is its canonical name (the `flag:` prefix included: each backend keeps its own scores) and, for a local
directory, a fingerprint of its files (name, size, modification time), so a retrained model is another model; a pair
is the SHA-256 of the question's and the passage's texts. Page windows (page_scoring/windows.py) are cached under
the model's key and the windows' settings (`namespace`), apart from whole pages. A sweep over first stages, depths
or k, or a cascade's stages, re-scores no pair a run has scored.
Everything in it can be deleted: it only saves recomputing.

Scoring is batched (`batch_size` pairs a forward pass), the pairs not in the cache only, each distinct pair once,
with a progress bar over the pairs; `ScoreStats` counts the pairs asked, the cache hits, the pairs scored and the
seconds spent scoring (a run's params, the bench's throughput).
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from python_jobs.core.config import models_dir
from python_jobs.core.console import progress as console_progress
from python_jobs.corpus.encoders import load_reranker, resolve

CACHE_FILE = "reranker_scores.sqlite"
WEIGHT_FILES = ("config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json", "modules.json")


@dataclass
class ScoreStats:
    pairs: int = 0  # pairs asked for
    cache_hits: int = 0  # of them, found in the cache
    scored: int = 0  # distinct pairs the model scored
    seconds: float = 0.0  # spent scoring (model load excluded)

    def add(self, other: ScoreStats) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "seconds": round(self.seconds, 3),
                "pairs_per_s": round(self.scored / self.seconds, 2) if self.seconds > 0 else None}


def model_key(name: str) -> str:
    """The cache's name of a model: canonical name, and for a local directory a fingerprint of its files."""
    canonical, _, target = resolve(name)
    path = Path(target)
    if not path.is_dir():
        return canonical
    h = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and f.name in WEIGHT_FILES:
            st = f.stat()
            h.update(f"{f.relative_to(path).as_posix()}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return f"{canonical}@{h.hexdigest()[:16]}"


def pair_key(query: str, passage: str) -> str:
    return hashlib.sha256(f"{query}\x00{passage}".encode()).hexdigest()[:32]


class ScoreCache:
    """The home's reranker score cache (one SQLite file; safe for several processes)."""

    def __init__(self, home: Path):
        self.path = models_dir(home) / CACHE_FILE

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=120)
        con.execute("pragma journal_mode=wal")
        con.execute("create table if not exists scores (model text not null, pair text not null, score real not null,"
                    " primary key (model, pair)) without rowid")
        return con

    def get(self, model: str, keys: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        if not keys:
            return out
        con = self._connect()
        try:
            uniq = sorted(set(keys))
            for start in range(0, len(uniq), 500):
                part = uniq[start : start + 500]
                marks = ",".join("?" * len(part))
                out.update(con.execute(f"select pair, score from scores where model = ? and pair in ({marks})",
                                       [model, *part]).fetchall())
        finally:
            con.close()
        return out

    def put(self, model: str, scores: dict[str, float]) -> None:
        if not scores:
            return
        con = self._connect()
        try:
            with con:
                con.executemany("insert or replace into scores values (?, ?, ?)",
                                [(model, k, float(v)) for k, v in scores.items()])
        finally:
            con.close()


def score_pairs(home: Path, reranker: str, pairs: list[tuple[str, str]], batch_size: int = 32,
                progress: bool = True, stats: ScoreStats | None = None, namespace: str = "") -> np.ndarray:
    """One score per (question, passage) pair by the cross-encoder `reranker` (name, path or `flag:` name), the
    cached ones read, the rest scored in batches and cached. A `namespace` (e.g. the page windows' settings) keeps
    its scores apart from those of the same model without it: a window that is a whole page is cached twice, once
    in each, so windowed and whole-page scores never share an entry."""
    own = ScoreStats(pairs=len(pairs))
    if not pairs:
        return np.zeros(0, dtype=np.float64)
    cache = ScoreCache(home)
    model = model_key(reranker) + (f"#{namespace}" if namespace else "")
    keys = [pair_key(q, p) for q, p in pairs]
    known = cache.get(model, keys)
    own.cache_hits = sum(k in known for k in keys)
    todo: dict[str, tuple[str, str]] = {}
    for k, pair in zip(keys, pairs, strict=True):
        if k not in known:
            todo.setdefault(k, pair)
    if todo:
        rr = load_reranker(reranker)
        items = list(todo.items())
        t0 = time.perf_counter()
        step = max(batch_size, 1) * 4
        with console_progress(total=len(items), desc=f"rerank {Path(rr.name).name}", unit="pair",
                              enabled=progress) as bar:
            for start in range(0, len(items), step):
                part = items[start : start + step]
                got = rr.score([p for _, p in part], batch_size=batch_size)
                fresh = {k: float(s) for (k, _), s in zip(part, got, strict=True)}
                cache.put(model, fresh)
                known.update(fresh)
                bar.update(len(part))
        own.seconds = time.perf_counter() - t0
        own.scored = len(items)
    if stats is not None:
        stats.add(own)
    return np.asarray([known[k] for k in keys], dtype=np.float64)
