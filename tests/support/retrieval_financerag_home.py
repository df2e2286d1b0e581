"""The FinanceRAG (ICAIF'24) sets landed with `finrag ingest beir`, once per test session (support/shared_home.py):
the seven real sets under ../shared/data/financerag_icaif24, each as the dataset `financerag_<name lower-cased>`, and
nothing else. Read by tests/integration/test_ingest_beir_trec.py (the landing's own checks) and
tests/integration/test_retrieval_metrics.py (the FinColBERT run's metrics), each on a private copy: the shared home
itself is never written."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import run_finrag
from support.paths import SHARED_DATA
from support.shared_home import copy_home, shared_home

# directory under financerag_icaif24 -> dataset name
FINANCERAG_SETS = {name: f"financerag_{name.lower()}" for name in
                   ("FinDER", "FinQABench", "FinanceBench", "TATQA", "FinQA", "ConvFinQA", "MultiHiertt")}


def _land(home: Path) -> dict:
    root = SHARED_DATA / "financerag_icaif24"
    for directory, dataset in FINANCERAG_SETS.items():
        run_finrag(home, "ingest", "beir", "--dir", str(root / directory), "--dataset", dataset)
    return {"datasets": FINANCERAG_SETS}


def land_financerag_copy(tmp_path_factory: pytest.TempPathFactory, home: Path) -> Path:
    """`home` (an empty directory: conftest's `home`) made a private copy of the shared home with the seven sets
    landed; the test writes into it as into any home."""
    shared, _facts = shared_home(tmp_path_factory, "financerag_beir", _land)
    return copy_home(shared, home)
