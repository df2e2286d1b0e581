"""The toy sweep the sweep tests run (support/toy_corpus.py): two chunk sizes x BM25 and keyword expansion (no model
to load), k 3, the larger chunks' BM25 run its baseline."""

from __future__ import annotations

from support.toy_corpus import DATASET

TOY_GRID = f"""\
dataset: {DATASET}
fixed:
  k: 3
parameters:
  chunk_size: [16, 32]
  retriever: [bm25, keywords]
baseline: {{chunk_size: 32, retriever: bm25}}
"""
