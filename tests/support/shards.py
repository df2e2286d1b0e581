"""Helpers of the sharded-job tests (python_jobs/core/shards.py): a run's lake rows compared with the unsharded run's
(the columns that naturally differ left out), a partition's files with their mtimes and bytes, and the toy chain
(support/toy_corpus.py) of a BM25 run, an answer run and a judge run against the scripted LLM server, each sharded
or not."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard
from python_jobs.generation.runs import AnswerConfig, run_answers
from python_jobs.judge.runs import JudgeConfig, run_judge
from python_jobs.llm.config import LLMConfig
from support.retrieval_runs import retrieve as run_retrieve
from support.toy_corpus import DATASET, FLAT, QUESTIONS, land_corpus

# what differs between two runs of the same config by nature: when they landed, how long they took, and the LLM
# ledger's batch ids (random per job)
VOLATILE = ("created_at", "latency_ms", "batch_id")
# JSON keys likewise: in params, the timings and a sharded run's per-shard record; in an LLM response, the endpoint's
# completion id (the scripted server numbers its replies in the order it got them)
VOLATILE_KEYS = {"params": ("shards", "seconds", "prepare_seconds", "queries_per_s"), "response": ("id",)}
RUN_ID = "toy-run"
SHARDS = [Shard(i, 3) for i in (1, 2, 3)]
JUDGE_REPLY = '{"score": 1, "rationale": "supported"}'  # on both judged metrics' scales


def comparable(frame: pl.DataFrame) -> pl.DataFrame:
    """A table's rows without the volatile columns and params keys, sorted: equal for equal runs."""
    frame = frame.drop([c for c in VOLATILE if c in frame.columns])
    for column, keys in VOLATILE_KEYS.items():
        if column in frame.columns:
            frame = frame.with_columns(pl.col(column).map_elements(
                lambda text, keys=keys: json.dumps({k: v for k, v in json.loads(text).items() if k not in keys},
                                                   sort_keys=True), return_dtype=pl.String))
    return frame.sort([c for c in frame.columns if frame.schema[c] != pl.List(pl.String)])


def assert_same_rows(whole: Path, sharded: Path, table: str, **where: object) -> int:
    """The table's rows in the two homes are equal row for row (volatile columns left out); how many."""
    a = comparable(Lake(whole).read(table, where=where or None))
    b = comparable(Lake(sharded).read(table, where=where or None))
    assert a.height and a.equals(b), f"{table}: the sharded run's rows differ\n{a}\n{b}"
    return a.height


def partition_files(home: Path, table: str, partition: str) -> dict[str, tuple[int, bytes]]:
    """name -> (mtime ns, bytes) of each file of a lake partition directory (`run_id=R`)."""
    d = home / "lake" / table / partition
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(d.iterdir())}


# a reference answer per toy question (the generation marts score only questions that have one)
REFERENCES = {"q1": "$1,577 million", "q2": "$812 million", "q3": "8.0% and $410 million", "q4": "$95 million; 0.9",
              "q5": "Initech"}


def land_chain_corpus(home: Path) -> Lake:
    """The toy corpus (flat chunking only), its questions with reference answers."""
    lake = land_corpus(home, parent_child=False)
    questions = lake.read_partition("questions", DATASET).drop("load_id", "created_at")
    lake.land_one("questions", DATASET, questions.with_columns(
        pl.col("question_id").replace_strict(REFERENCES).map_elements(lambda r: [r], return_dtype=pl.List(pl.String))
        .alias("reference_answers")))
    assert len(REFERENCES) == len(QUESTIONS)
    return lake


def llm(fake_url: str) -> LLMConfig:
    return LLMConfig.from_env(base_url=fake_url, model="fake-model", timeout=5, max_attempts=2)


def retrieve(home: Path, shard: Shard | None = None, k: int = 3) -> dict[str, object]:
    return run_retrieve(home, DATASET, "bm25", k=k, chunker_id=FLAT, run_id=RUN_ID, shard=shard)


def answer(home: Path, fake_url: str, shard: Shard | None = None) -> str:
    cfg = AnswerConfig(retrieval_run_id=RUN_ID, k=2, max_tokens=64, ledger_batch=4)
    return run_answers(Lake(home), cfg, llm(fake_url), shard=shard)


def judge(home: Path, fake_url: str, answer_run_id: str, shard: Shard | None = None, repeats: int = 1) -> str:
    cfg = JudgeConfig(answer_run_id=answer_run_id, metrics=["correctness", "faithfulness"], max_tokens=64,
                      ledger_batch=4, repeats=repeats)
    return run_judge(Lake(home), cfg, llm(fake_url), shard=shard)
