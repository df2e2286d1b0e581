"""`finrag retrieve` on the toy corpus (support/toy_corpus.py): bad input is reported with exit 2 and the field, a good
run prints its counts and a progress bar."""

from __future__ import annotations

from python_jobs.core.lake import Lake
from support.toy_corpus import DATASET, FLAT


def test_cli_retrieve_reports_bad_input_with_exit_2(toy: Lake, finrag):
    proc = finrag("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "3", check=False)
    assert proc.returncode == 2 and "field 'chunker_id'" in proc.stderr and "several chunkers" in proc.stderr
    ok = finrag("retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "3", "--chunker-id", FLAT)
    assert "questions=5" in ok.stdout and "rows=" in ok.stdout
    assert "retrieve bm25/full" in ok.stderr  # the progress bar
