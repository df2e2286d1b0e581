"""Fixtures of the QA generation suites (implementations in support/qa_generation_home.py)."""

from __future__ import annotations

import pytest

from support.qa_generation_home import synth_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The synthetic corpus (2 companies, 4 filings) ingested and chunked 256/32 into a base home, once per test
    session (shared by the QA generation modules: copy it with fresh_home, never write it)."""
    return synth_corpus(tmp_path_factory)
