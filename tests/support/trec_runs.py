"""TREC run files a test writes from its rankings: one file per run, named <run>.trec."""

from __future__ import annotations

from pathlib import Path


def write_trec_runs(directory: Path, lines: dict[str, list[str]]) -> dict[str, Path]:
    """Each run's TREC lines written to <directory>/<run>.trec: run name -> path."""
    out = {}
    for name, text in lines.items():
        out[name] = directory / f"{name}.trec"
        out[name].write_text("\n".join(text) + "\n")
    return out
