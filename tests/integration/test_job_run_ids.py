"""Run ids stay as they were: retrieval, answer, judge and generation runs of representative configs, landed on the
toy corpus against the scripted LLM server, get the ids main gave the same runs before the configs were typed
(commit 99b8d65, where `run_answers` / `run_judge` / `run_generation` took their settings as keyword arguments).
The ids hash the model, the prompt templates' hashes and the topics file too, all unchanged here. One change is
deliberate: a judge run's params hold its reply schemas since the embedded server decodes under them (merge of the
constrained-decoding branch), so the judge runs' ids are the ones the schemas give. The retrieval
configs' ids without a lake: tests/unit/retrieval/test_run_ids.py."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from python_jobs.core.lake import Lake
from python_jobs.generation.runs import AnswerConfig, run_answers
from python_jobs.judge.runs import JudgeConfig, run_judge
from python_jobs.llm.config import LLMConfig
from python_jobs.qa_generation.pipeline import GenerationConfig, run_generation
from support.fake_llm import Behaviour, FakeLLM
from support.retrieval_runs import retrieve
from support.shards import land_chain_corpus
from support.toy_corpus import DATASET, FLAT

GEN_DATASET, GEN_CHUNKER = "genfin", "gen256"


def land_generation_corpus(lake: Lake) -> None:
    """Three filings of two chunks, each long enough to generate from (the toy corpus's pages are too short)."""
    words = "revenue grew in every segment while costs fell and the board raised the dividend again".split()
    docs = pl.DataFrame([{"doc_id": f"D{i}", "dataset": GEN_DATASET, "title": f"Company {i} 10-K", "doc_type": "10-K",
                          "has_content": True, "n_pages": 2} for i in range(3)])
    chunks = pl.DataFrame([{"chunk_id": f"D{i}::{GEN_CHUNKER}::{j:05d}", "doc_id": f"D{i}", "chunker_id": GEN_CHUNKER,
                            "ordinal": j, "page_start": j, "page_end": j, "dataset": GEN_DATASET, "n_tokens": 40,
                            "text": f"Company {i} page {j}. " + " ".join(words[(i + j) % 5:] + words) * 2}
                           for i in range(3) for j in range(2)])
    lake.land([("documents", GEN_DATASET, docs), ("chunks", f"{GEN_DATASET}.{GEN_CHUNKER}", chunks)])


def test_run_ids_of_existing_configs_are_unchanged(home: Path) -> None:
    lake = land_chain_corpus(home)
    land_generation_corpus(lake)
    bm25 = retrieve(home, DATASET, "bm25", k=3, chunker_id=FLAT)["run_id"]
    assert bm25 == "toyfin-bm25-full-8a6131387a"
    assert retrieve(home, DATASET, "keywords", k=3, chunker_id=FLAT, n_keywords=3)["run_id"] == \
        "toyfin-keywords-full-a7f68a7c48"
    with FakeLLM(Behaviour(script={"Score the answer": '{"score": 1, "rationale": "ok"}'})) as fake:
        llm = LLMConfig.from_env(base_url=fake.base_url, model="fake-model", timeout=5, max_attempts=2)
        rag = run_answers(lake, AnswerConfig(retrieval_run_id=bm25, k=2, max_tokens=64, ledger_batch=4), llm)
        assert rag == "toyfin-rag-00b32fefe0"
        cut = AnswerConfig(retrieval_run_id=bm25, dataset=DATASET, k=3, context_tokens=64, max_tokens=32,
                           temperature=0.2, max_words=300, limit=3)
        assert run_answers(lake, cut, llm) == "toyfin-rag-a56074c2da"
        closed = AnswerConfig(dataset=DATASET, question_ids=("q2", "q4"), splits=("test",))
        assert run_answers(lake, closed, llm) == "toyfin-closed_book-43f46e52cd"
        two = JudgeConfig(answer_run_id=rag, metrics=("correctness", "faithfulness"), max_tokens=64, ledger_batch=4)
        assert run_judge(lake, two, llm) == "toyfin-rag-00b32fefe0-judge-d8b7d6e3f4"
        limited = JudgeConfig(answer_run_id=rag, metrics=("correctness",), limit=2, passage_tokens=500)
        assert run_judge(lake, limited, llm) == "toyfin-rag-00b32fefe0-judge-862ce92c47"
        # every classification fails on the scripted server's echo replies: the run lands its attempts, and its id
        chunks = GenerationConfig(dataset=GEN_DATASET, tasks=("extractive", "multi_hop"), seed=7, sample=4, rounds=1)
        assert run_generation(lake, chunks, llm) == "qagen-genfin-4438ba8712"
        documents = GenerationConfig(dataset=GEN_DATASET, per_cell=1, unit="document", chunker_id=GEN_CHUNKER,
                                     max_topics=3, test_fraction=0.25, passage_chars=800)
        assert run_generation(lake, documents, llm) == "qagen-genfin-698398b134"
