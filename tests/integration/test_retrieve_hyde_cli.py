"""LLM query-rewriting retrievers on the toy corpus (support/toy_corpus.py): bad LLM options are input errors that
land nothing, and `finrag retrieve --retriever multi_hyde` against the scripted OpenAI-compatible server sends the
API key to the server and never prints it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.llm.config import LLMConfig
from support.cli import run_finrag
from support.fake_llm import Behaviour, FakeLLM
from support.query_rewriting import KEY, Q4_PASSAGE, TEXT, params
from support.retrieval_runs import retrieve
from support.toy_corpus import DATASET, FLAT, land_flat_indexed, results


@pytest.fixture
def toy(home: Path) -> Lake:
    """The flat chunking only, indexed (overrides conftest's `toy`), as tests/unit/retrieval/test_retrieve_hyde.py."""
    return land_flat_indexed(home)


def test_bad_llm_options_and_cli(toy: Lake):
    with pytest.raises(InputError) as e:
        retrieve(toy.home, DATASET, "multi_hyde", k=3, chunker_id=FLAT, hyde_n=0,
                 llm_config=LLMConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    assert e.value.field == "hyde_n"
    with pytest.raises(InputError) as e:  # an endpoint without a model name
        retrieve(toy.home, DATASET, "hyde", k=3, chunker_id=FLAT,
                 llm_config=LLMConfig(base_url="http://127.0.0.1:9/v1"))
    assert toy.partitions("retrieval_runs") == []
    b = Behaviour(script={TEXT["q4"]: Q4_PASSAGE})
    with FakeLLM(b) as fake:
        os.environ["FINRAG_LLM_BASE_URL"] = fake.base_url
        os.environ["FINRAG_LLM_API_KEY"] = KEY
        try:
            proc = run_finrag(toy.home, "retrieve", "--retriever", "multi_hyde", "--dataset", DATASET, "--chunker-id",
                              FLAT, "--k", "3", "--hyde-n", "2", "--hyde-fusion", "rrf", "--llm-model", "fake-model",
                              "--max-attempts", "2")
        finally:
            del os.environ["FINRAG_LLM_BASE_URL"], os.environ["FINRAG_LLM_API_KEY"]
    assert len(b.requests) == 10 and all(h == f"Bearer {KEY}" for h in b.auth_headers)
    (run_id,) = toy.partitions("retrieval_runs")
    assert proc.stdout == f"{run_id}\n" and KEY not in proc.stdout + proc.stderr
    p = params(toy, run_id)
    assert (p["llm"]["llm_n"], p["llm"]["hyde_fusion"], p["n_llm_calls_made"]) == (2, "rrf", 10)
    assert results(toy, run_id)["question_id"].n_unique() == 5
