"""`finrag sweep` end to end on the toy corpus (support/toy_corpus.py, with reference answers): two shard processes
at once land what one unsharded process lands, a re-run runs nothing, an answer sweep over the baseline run (the
scripted LLM server) lands the runs `finrag answer` lands for the same settings, and `finrag build` turns both
sweeps into mart_sweep_runs and mart_sweep_parameter_effects, whose every row equals a reference computed here from
mart_retrieval_leaderboard / mart_generation_leaderboard with scipy's t-interval."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from scipy import stats

from python_jobs.core.lake import Lake
from python_jobs.warehouse.publishing import published_tables
from support.cli import MODELS_ONLY, dbt_build, run_finrag
from support.fake_llm import FakeLLM
from support.paths import PROJECT
from support.shards import assert_same_rows, land_chain_corpus
from support.sweeps import TOY_GRID
from support.toy_corpus import DATASET
from support.warehouse import warehouse_query

LEVEL = yaml.safe_load((PROJECT / "dbt_project.yml").read_text())["vars"]["sweep_effects_level"]


def sweep_json(home: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    return json.loads(run_finrag(home, "sweep", *args, "--json", env=env).stdout)


def reference_effects(home: Path, sweep_id: str, kind: str) -> dict[tuple, tuple]:
    """(parameter, value, metric, granularity, k) -> (n_runs, mean, ci_low, ci_high, is_best_value, spread), from
    the leaderboards' run means and the lake's sweep_runs rows."""
    members = Lake(home).read("sweep_runs", where={"sweep_id": sweep_id})
    if kind == "retrieval":
        means = warehouse_query(home, "select run_id, metric, granularity, k, mean from mart_retrieval_leaderboard")
    else:
        means = [(r, m, None, None, v) for r, m, v in warehouse_query(
            home, "select run_id, metric, mean from mart_generation_leaderboard where mean is not null")]
    higher = dict(warehouse_query(home, "select metric, higher_is_better from dim_metrics"))
    by_run = defaultdict(list)
    for run_id, metric, granularity, k, mean in means:
        by_run[run_id].append((metric, granularity, k, mean))
    groups: dict[tuple, list[float]] = defaultdict(list)
    for run_id, parameter, value in members.select("run_id", "parameter", "value").iter_rows():
        for metric, granularity, k, mean in by_run[run_id]:
            groups[(parameter, value, metric, granularity, k)].append(mean)
    out = {}
    for key, values in groups.items():
        n, mean = len(values), float(np.mean(values))
        scale = np.std(values, ddof=1) / np.sqrt(n) if n > 1 else None
        # scipy gives nan for a zero scale: the interval of equal means is that mean
        low, high = (None, None) if scale is None else (mean, mean) if scale == 0 else stats.t.interval(
            LEVEL, n - 1, loc=mean, scale=scale)
        # the mart cuts the interval to the means' scale, [0, 1]
        low, high = (None, None) if low is None else (min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0))
        siblings = [float(np.mean(v)) for k2, v in groups.items() if (k2[0], *k2[2:]) == (key[0], *key[2:])]
        best = max(siblings) if higher[key[2]] else min(siblings)
        out[key] = (n, mean, low, high, abs(mean - best) < 1e-12, max(siblings) - min(siblings))
    return out


def mart_effects(home: Path, sweep_id: str) -> dict[tuple, tuple]:
    rows = warehouse_query(home, f"""
        select parameter, value, metric, granularity, k, n_runs, mean, ci_low, ci_high, is_best_value,
            parameter_spread
        from mart_sweep_parameter_effects where sweep_id = '{sweep_id}'""")
    return {tuple(r[:5]): tuple(r[5:]) for r in rows}


def assert_close(got: dict[tuple, tuple], want: dict[tuple, tuple]) -> None:
    assert got.keys() == want.keys()
    for key, row in want.items():
        for a, b in zip(got[key], row, strict=True):
            assert (a is None and b is None) or a == pytest.approx(b, abs=1e-12), (key, got[key], row)


def test_sweeps_sharded_resumed_answered_and_built(tmp_path: Path) -> None:
    whole, home = tmp_path / "whole", tmp_path / "home"
    for h in (whole, home):
        land_chain_corpus(h)
    grid = tmp_path / "retrieval.yaml"
    grid.write_text(TOY_GRID)

    # two shard processes at once (they chunk and embed one at a time, then run their own configurations)
    procs = [subprocess.Popen([sys.executable, "-m", "python_jobs.cli", "--home", str(home), "sweep", str(grid),
                               "--shard", f"{i}/2", "--json"], cwd=PROJECT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "FINRAG_HOME": str(home)})
             for i in (1, 2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    shards = [json.loads(out) for out, _ in outs]
    assert sorted(s["ran"] for s in shards) == [2, 2] and len({s["sweep_id"] for s in shards}) == 1
    sweep_id = shards[0]["sweep_id"]

    # one unsharded process prints the same sweep id and lands the same rows
    assert run_finrag(whole, "sweep", str(grid)).stdout == f"{sweep_id}\n"
    for table, n in (("retrieval_runs", 4), ("sweeps", 1), ("sweep_runs", 8)):
        assert assert_same_rows(whole, home, table) == n
    assert_same_rows(whole, home, "retrieval_results")

    # a re-run runs nothing
    again = sweep_json(home, str(grid))
    assert (again["sweep_id"], again["landed_before"], again["ran"]) == (sweep_id, 4, 0)
    baseline = again["baseline_run_id"]
    assert run_finrag(home, "retrieve", "--retriever", "bm25", "--dataset", DATASET, "--k", "3", "--chunker-id",
                      "tok32o0-minilm").stdout == f"{baseline}\n"

    # an answer sweep over the baseline run, against the scripted LLM server
    answers = tmp_path / "answers.yaml"
    answers.write_text(f"dataset: {DATASET}\nkind: answer\nfixed:\n  retrieval_run_id: {baseline}\n  max_tokens: 32\n"
                       "parameters:\n  k: [1, 2]\n  context_tokens: [64, 1500]\n")
    with FakeLLM() as fake:
        env = {"FINRAG_LLM_BASE_URL": fake.base_url, "FINRAG_LLM_MODEL": "fake-model"}
        answered = sweep_json(home, str(answers), env=env)
        assert (answered["kind"], answered["ran"]) == ("answer", 4)
        one = run_finrag(home, "answer", "--retrieval-run", baseline, "--k", "2", "--context-tokens", "64",
                         "--max-tokens", "32", env=env).stdout.strip()
    members = Lake(home).read("sweep_runs", where={"sweep_id": answered["sweep_id"]})
    k2_64 = set(members.filter((pl.col("parameter") == "k") & (pl.col("value") == "2"))["run_id"]) & set(
        members.filter((pl.col("parameter") == "context_tokens") & (pl.col("value") == "64"))["run_id"])
    assert k2_64 == {one}
    assert len(Lake(home).partitions("generation_runs")) == 4

    dbt_build(home, *MODELS_ONLY)
    for sid, kind in ((sweep_id, "retrieval"), (answered["sweep_id"], "answer")):
        want = reference_effects(home, sid, kind)
        assert len(want) > (100 if kind == "retrieval" else 8)
        assert_close(mart_effects(home, sid), want)
    runs = warehouse_query(home, f"""
        select run_id, setting, is_baseline from mart_sweep_runs
        where sweep_id = '{sweep_id}' and metric = 'ndcg' and granularity = 'page' and k = 3 order by setting""")
    assert [r[1] for r in runs] == ["chunk_size=16, retriever=bm25", "chunk_size=16, retriever=keywords",
                                    "chunk_size=32, retriever=bm25", "chunk_size=32, retriever=keywords"]
    assert [r[0] for r in runs if r[2]] == [baseline]
    assert {"mart_sweep_runs", "mart_sweep_parameter_effects"} <= set(published_tables(home))
