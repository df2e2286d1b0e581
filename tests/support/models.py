"""Models the tests build from the packaged MiniLM weights (no cross-encoder with trained weights installs from the
package index, and tests never download)."""

from __future__ import annotations

import os
from pathlib import Path

from python_jobs.corpus.encoders import resolve


def build_local_cross_encoder(out_dir: str | os.PathLike[str], base: str | None = None, seed: int = 0) -> Path:
    """Save a CrossEncoder made from a local bi-encoder's transformer weights plus a fresh, seeded 1-output head.

    No cross-encoder with weights installs from the package index, so tests exercise the rerank stage with this:
    it proves the plumbing (loading by path, scoring pairs, re-ordering), not ranking quality.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    _, _, target = resolve(base)
    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(target, num_labels=1, local_files_only=True)
    tok = AutoTokenizer.from_pretrained(target, local_files_only=True)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out
