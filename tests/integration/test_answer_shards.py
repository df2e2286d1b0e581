"""`finrag answer --shard I/N` over a BM25 run of the toy corpus (support/toy_corpus.py) against the scripted
OpenAI-compatible server: three shards of a RAG answer run equal the unsharded run row for row (generation_runs,
answers and the LLM ledger), and a re-run of one shard replaces its files only, from the cache."""

from __future__ import annotations

from pathlib import Path

from python_jobs.core.lake import Lake
from support.fake_llm import Behaviour, FakeLLM
from support.shards import SHARDS, answer, assert_same_rows, partition_files, retrieve
from support.toy_corpus import QUESTIONS, land_corpus


def test_answer_shards_equal_the_unsharded_run(tmp_path: Path) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    for home in (whole, sharded):
        land_corpus(home, parent_child=False)
        retrieve(home)
    behaviour = Behaviour()
    with FakeLLM(behaviour) as fake:
        run_id = answer(whole, fake.base_url)
        assert [answer(sharded, fake.base_url, shard) for shard in SHARDS] == [run_id] * 3
        n_calls = len(behaviour.requests)
        assert assert_same_rows(whole, sharded, "answers") == len(QUESTIONS)
        assert assert_same_rows(whole, sharded, "generation_runs") == 1
        assert assert_same_rows(whole, sharded, "llm_calls") == len(QUESTIONS)  # one call per question each

        # a re-run of shard 3 replaces its own file, answered from the cache; shards 1 and 2 keep theirs
        partition = f"run_id={run_id}"
        before = partition_files(sharded, "answers", partition)
        assert sorted(before) == [f"shard-{i}-of-3.part-0.parquet" for i in (1, 2, 3)]
        answer(sharded, fake.base_url, SHARDS[2])
        after = partition_files(sharded, "answers", partition)
        mine = "shard-3-of-3.part-0.parquet"
        assert {n: v for n, v in after.items() if n != mine} == {n: v for n, v in before.items() if n != mine}
        assert after[mine][0] > before[mine][0] and len(behaviour.requests) == n_calls
    assert_same_rows(whole, sharded, "answers")
    assert Lake(sharded).read("generation_runs").height == 1
