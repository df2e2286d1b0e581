"""FinanceBench homes that several test modules start from, each landed once per test session through the real CLI
(support/shared_home.py: the first caller builds it under a file lock, every other module and xdist worker reuses
it). A shared home is read-only to its users: a module that writes (chunks, runs, a re-ingest) works on a copy
(`copy_home`).

- `questions_home`: `finrag ingest financebench` of the real questions and document list, no PDFs (the documents
  recorded without content): what answering closed-book, judging and answer / run files need.
- `one_pdf_home`: the same ingest with one real filing's PDF, BESTBUY_2024Q2_10Q (30 pages, the gold document of 3
  questions), read in place through a symlink: the smallest real corpus to chunk, index and retrieve over.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli import run_finrag
from support.paths import SHARED_DATA
from support.shared_home import shared_home

GOLD_DOC = "BESTBUY_2024Q2_10Q"


def ingest_args(pdfs: Path | None = None) -> list[str]:
    """`finrag ingest financebench` of the real files, with --pdfs when given."""
    d = SHARED_DATA / "financebench" / "data"
    args = ["ingest", "financebench", "--questions", str(d / "financebench_open_source.jsonl"),
            "--documents", str(d / "financebench_document_information.jsonl")]
    return [*args, "--pdfs", str(pdfs)] if pdfs is not None else args


def _questions(home: Path) -> dict:
    run_finrag(home, *ingest_args())
    return {}


def _one_pdf(home: Path) -> dict:
    pdfs = home.parent / "pdfs"  # beside the home, so a copy of the home never carries it
    pdfs.mkdir(exist_ok=True)
    link = pdfs / f"{GOLD_DOC}.pdf"
    if not link.is_symlink():
        link.symlink_to(SHARED_DATA / "financebench" / "pdfs" / f"{GOLD_DOC}.pdf")  # read in place
    proc = run_finrag(home, *ingest_args(pdfs))
    return {"pdfs": str(pdfs), "stderr": proc.stderr}


def questions_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real FinanceBench questions and document list, no PDFs (shared: read it, never write it)."""
    return shared_home(tmp_path_factory, "financebench_questions", _questions)[0]


def one_pdf_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(home, facts): the FinanceBench ingest with BESTBUY_2024Q2_10Q's PDF (shared: read it, never write it);
    facts["pdfs"] is the --pdfs directory it was ingested from, facts["stderr"] the ingest's notes."""
    return shared_home(tmp_path_factory, "financebench_one_pdf", _one_pdf)
