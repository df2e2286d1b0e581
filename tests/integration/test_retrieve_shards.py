"""`finrag retrieve --shard I/N` on the toy corpus (support/toy_corpus.py): three shards landing at once (two
`finrag retrieve` processes and this one) give the unsharded BM25 run row for row, each shard in its own part files
of the run's partition, with one merged run row; a re-run of one shard replaces its files only; a shard of another
config is refused, and a malformed --shard is a usage error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from support.cli import run_finrag
from support.paths import PROJECT
from support.shards import RUN_ID, SHARDS, assert_same_rows, partition_files, retrieve
from support.toy_corpus import DATASET, FLAT, QUESTIONS, land_corpus

PARTITION = f"run_id={RUN_ID}"


def test_retrieve_shards_equal_the_unsharded_run(tmp_path: Path) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    for home in (whole, sharded):
        land_corpus(home, parent_child=False)
    retrieve(whole)
    args = ["retrieve", "--retriever", "bm25", "--dataset", DATASET, "--chunker-id", FLAT, "--k", "3", "--run-id",
            RUN_ID, "--json"]
    procs = [subprocess.Popen([sys.executable, "-m", "python_jobs.cli", *args, "--shard", str(shard)], cwd=PROJECT,
                              env={**os.environ, "FINRAG_HOME": str(sharded)}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for shard in SHARDS[:2]]
    n_third = int(retrieve(sharded, SHARDS[2])["questions"])  # meanwhile, in this process
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert sum(json.loads(out)["questions"] for out, _ in outs) + n_third == len(QUESTIONS)

    assert_same_rows(whole, sharded, "retrieval_results")
    assert assert_same_rows(whole, sharded, "retrieval_runs") == 1
    assert sorted(partition_files(sharded, "retrieval_results", PARTITION)) == [
        f"shard-{i}-of-3.part-0.parquet" for i in (1, 2, 3)]
    params = json.loads(Lake(sharded).read("retrieval_runs")["params"][0])
    assert sorted(params["shards"]) == ["1/3", "2/3", "3/3"]
    assert sum(s["n_with_results"] for s in params["shards"].values()) == params["n_with_results"] == len(QUESTIONS)

    # a re-run of shard 2 replaces its own file; shards 1 and 3 keep theirs, untouched
    before = partition_files(sharded, "retrieval_results", PARTITION)
    retrieve(sharded, SHARDS[1])
    after = partition_files(sharded, "retrieval_results", PARTITION)
    mine = "shard-2-of-3.part-0.parquet"
    assert {n: v for n, v in after.items() if n != mine} == {n: v for n, v in before.items() if n != mine}
    assert after[mine][0] > before[mine][0]
    assert_same_rows(whole, sharded, "retrieval_results")
    assert_same_rows(whole, sharded, "retrieval_runs")

    # a shard of another config under the run's id lands nothing
    with pytest.raises(InputError, match=r"shard 1/3 of run 'toy-run' differs from its shard\(s\) 2/3, 3/3 already "
                                         r"landed: column k \(3 landed, 5 now\)"):
        retrieve(sharded, SHARDS[0], k=5)
    assert partition_files(sharded, "retrieval_results", PARTITION) == after

    for bad, why in (("4/3", "1 <= I <= N, got 4/3"), ("2", "a shard is I/N (e.g. 2/3), got '2'")):
        proc = run_finrag(sharded, "retrieve", "--retriever", "bm25", "--dataset", DATASET, "--chunker-id", FLAT,
                          "--shard", bad, check=False)
        assert proc.returncode == 2 and "Invalid value for '--shard'" in proc.stderr and why in proc.stderr
