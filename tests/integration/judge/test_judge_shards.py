"""`finrag judge --shard I/N` over the toy chain (support/shards.py: a BM25 run of the toy corpus, a RAG answer run,
against the scripted OpenAI-compatible server): three shards of a judge run with two repeats (--repeats 2) equal the
unsharded run row for row, a re-run of one shard replaces its files only; and a dbt build over a home whose
retrieval, answer and judge runs were all landed in shards sees one run of each in the marts, each answer once
(its mean over its repeats), and the judge's test-retest alpha as the krippendorff package computes it."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pytest

from python_jobs.core.lake import Lake
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
    # every rubric's question block opens with "Metric: "; the judge says 1 with seed 1 and 0 with seed 2
    behaviour = Behaviour(script={"Metric: ": [JUDGE_REPLY, '{"score": 0, "rationale": "partly"}']})
    with FakeLLM(behaviour) as fake:
        land_chain_corpus(whole)
        retrieve(whole)
        answer_run = answer(whole, fake.base_url)
        judge_run = judge(whole, fake.base_url, answer_run, repeats=2)
        land_chain_corpus(sharded)
        for shard in SHARDS:
            retrieve(sharded, shard)
        assert {answer(sharded, fake.base_url, shard) for shard in SHARDS} == {answer_run}
        assert {judge(sharded, fake.base_url, answer_run, shard, repeats=2) for shard in SHARDS} == {judge_run}
        n_calls = len(behaviour.requests)
        assert assert_same_rows(whole, sharded, "judgments") == 2 * 2 * len(QUESTIONS)
        assert assert_same_rows(whole, sharded, "judge_runs") == 1
        # an answer and two metrics x two repeats each
        assert assert_same_rows(whole, sharded, "llm_calls") == (1 + 2 * 2) * len(QUESTIONS)

        # a re-run of shard 1 replaces its own file, from the cache; shards 2 and 3 keep theirs
        partition = f"judge_run_id={judge_run}"
        before = partition_files(sharded, "judgments", partition)
        judge(sharded, fake.base_url, answer_run, SHARDS[0], repeats=2)
        after = partition_files(sharded, "judgments", partition)
        mine = "shard-1-of-3.part-0.parquet"
        assert {n: v for n, v in after.items() if n != mine} == {n: v for n, v in before.items() if n != mine}
        assert after[mine][0] > before[mine][0] and len(behaviour.requests) == n_calls
    assert_same_rows(whole, sharded, "judgments")

    dbt_build(sharded, "--select", "+mart_retrieval_leaderboard", "+mart_generation_leaderboard",
              "+mart_judge_leaderboard", "+mart_judge_reliability", "--indirect-selection", "cautious")
    assert warehouse_query(sharded, "select distinct run_id, n_questions from mart_retrieval_leaderboard "
                                    "where metric = 'recall' and granularity = 'doc' and k = 3") == [(RUN_ID, 4)]
    assert warehouse_query(sharded, "select distinct run_id from mart_generation_leaderboard") == [(answer_run,)]
    # each answer once, with its repeats' mean: correctness (1 -> 2/3, 0 -> 1/3) 0.5, faithfulness (1, 0.5) 0.75
    board = warehouse_query(sharded, "select judge_run_id, metric, n_ok, n_repeats, mean from mart_judge_leaderboard "
                                     "order by 2")
    assert board == [(judge_run, "correctness", len(QUESTIONS), 2, pytest.approx(0.5)),
                     (judge_run, "faithfulness", len(QUESTIONS), 2, pytest.approx(0.75))]
    # the repeats disagree on every answer, alike: alpha as the package computes it; every correctness verdict flips
    # at the pass threshold (2/3 passes, 1/3 does not), no faithfulness one does (1 and 0.5 both pass)
    reliability = warehouse_query(sharded, "select metric, level_of_measurement, n_answers, n_values, alpha, "
                                           "share_flipping from mart_judge_reliability order by 1")
    judgments = Lake(sharded).read("judgments").sort("question_id", "repeat")
    for metric, level, n_answers, n_values, alpha, share in reliability:
        scores = judgments.filter(judgments["metric"] == metric)
        data = np.array([scores.filter(scores["repeat"] == r)["raw_score"].to_list() for r in (1, 2)])
        assert (level, n_answers, n_values) == ("interval", len(QUESTIONS), 2 * len(QUESTIONS))
        assert alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level),
                                      abs=1e-12)
        assert share == (1.0 if metric == "correctness" else 0.0)
