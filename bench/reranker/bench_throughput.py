"""Cross-encoder scoring throughput on this machine's CPU: pairs per second of a MiniLM-sized cross-encoder (the
packaged all-MiniLM-L6-v2 under a fresh head, as `finrag train-reranker` starts from; a trained fold scores at the
same speed) through the scorer the rerank retriever uses (python_jobs/corpus/rerank_scores.py: batched, cached), by
batch size and window, and the same pairs again from the score cache.

    .venv/bin/python -m bench.reranker.bench_throughput [--pairs 256] [--threads N]

Prints one line per configuration; the figures are in bench/reranker/README.md."""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from python_jobs.corpus.encoders import load_trainable_cross_encoder, set_threads
from python_jobs.corpus.rerank_scores import ScoreStats, score_pairs
from python_jobs.page_scoring.training import seeded

WORDS = ("revenue income margin segment capital expenditure debt notes dividend share repurchase inventory "
         "receivable cash flow operating lease goodwill impairment tax rate fiscal quarter million billion").split()


def pairs(n: int, words: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(" ".join(rng.choices(WORDS, k=12)) + "?", " ".join(rng.choices(WORDS, k=words))) for _ in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    set_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        for window, words in ((256, 400), (512, 400)):
            model = home / f"ce-{window}"
            with seeded(0):
                _, ce = load_trainable_cross_encoder(None, window)
            ce.save(str(model), create_model_card=False)
            for batch in (8, 32, 64):
                todo = pairs(args.pairs, words, seed=window * 100 + batch)
                fresh = ScoreStats()
                score_pairs(home, str(model), todo, batch, progress=False, stats=fresh)
                again = ScoreStats()
                t0 = time.perf_counter()
                score_pairs(home, str(model), todo, batch, progress=False, stats=again)
                cached = time.perf_counter() - t0
                print(f"window {window:3d} batch {batch:2d}: {fresh.scored} pairs scored in {fresh.seconds:6.1f} s = "
                      f"{fresh.scored / fresh.seconds:6.1f} pairs/s; again from the cache: {again.cache_hits} hits "
                      f"in {cached:.3f} s ({again.cache_hits / cached:,.0f} pairs/s)", flush=True)


if __name__ == "__main__":
    main()
