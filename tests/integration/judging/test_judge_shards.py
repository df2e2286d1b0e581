"""`finrag judge --shard I/N` over the toy chain (support/shards.py: a BM25 run of the toy corpus, a RAG answer run,
against the scripted OpenAI-compatible server): three shards of a judge run equal the unsharded run row for row, a
re-run of one shard replaces its files only; and a dbt build over a home whose retrieval, answer and judge runs
were all landed in shards sees one run of each in the marts."""

from __future__ import annotations

from pathlib import Path

from support.cli import dbt_build
from support.fake_llm import Behaviour, FakeLLM
from support.shards import (
    JUDGE_REPLY,
    RUN_ID,
    SHARDS,
    answer,
    assert_same_rows,
    judge,
    land_chain_corpus,
    partition_files,
    retrieve,
)
from support.toy_corpus import QUESTIONS
from support.warehouse import warehouse_query


def test_judge_shards_equal_the_unsharded_run_and_the_marts_see_one_run(tmp_path: Path) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    behaviour = Behaviour(script={"Metric: ": JUDGE_REPLY})  # every rubric's question block opens with it
    with FakeLLM(behaviour) as fake:
        land_chain_corpus(whole)
        retrieve(whole)
        answer_run = answer(whole, fake.base_url)
        judge_run = judge(whole, fake.base_url, answer_run)
        land_chain_corpus(sharded)
        for shard in SHARDS:
            retrieve(sharded, shard)
        assert {answer(sharded, fake.base_url, shard) for shard in SHARDS} == {answer_run}
        assert {judge(sharded, fake.base_url, answer_run, shard) for shard in SHARDS} == {judge_run}
        n_calls = len(behaviour.requests)
        assert assert_same_rows(whole, sharded, "judgments") == 2 * len(QUESTIONS)
        assert assert_same_rows(whole, sharded, "judge_runs") == 1
        assert assert_same_rows(whole, sharded, "llm_calls") == 3 * len(QUESTIONS)  # an answer, two judgments each

        # a re-run of shard 1 replaces its own file, from the cache; shards 2 and 3 keep theirs
        partition = f"judge_run_id={judge_run}"
        before = partition_files(sharded, "judgments", partition)
        judge(sharded, fake.base_url, answer_run, SHARDS[0])
        after = partition_files(sharded, "judgments", partition)
        mine = "shard-1-of-3.part-0.parquet"
        assert {n: v for n, v in after.items() if n != mine} == {n: v for n, v in before.items() if n != mine}
        assert after[mine][0] > before[mine][0] and len(behaviour.requests) == n_calls
    assert_same_rows(whole, sharded, "judgments")

    dbt_build(sharded, "--select", "+mart_retrieval_leaderboard", "+mart_generation_leaderboard",
              "+mart_judge_leaderboard", "--indirect-selection", "cautious")
    assert warehouse_query(sharded, "select distinct run_id, n_questions from mart_retrieval_leaderboard "
                                    "where metric = 'recall' and granularity = 'doc' and k = 3") == [(RUN_ID, 4)]
    assert warehouse_query(sharded, "select distinct run_id from mart_generation_leaderboard") == [(answer_run,)]
    assert warehouse_query(sharded, "select judge_run_id, metric, n_ok from mart_judge_leaderboard order by 2") == [
        (judge_run, "correctness", len(QUESTIONS)), (judge_run, "faithfulness", len(QUESTIONS))]
