"""Running a sweep (python_jobs/sweeps/runs.py) on the toy corpus (support/toy_corpus.py), with BM25 and keyword
expansion over two chunk sizes (no model to load): its runs are the runs `finrag retrieve` lands for the same
settings, its rows record the grid, its parameters and its baseline run; a re-run lands nothing; an interrupted
sweep resumes with the configurations that had not landed; its shards together land the unsharded sweep; a run
whose shards have not all landed is run again, and so is an answer run whose LLM calls all failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import python_jobs.sweeps.runs as sweep_runs
from python_jobs.core.errors import JobError
from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard
from python_jobs.llm.config import LLMConfig
from python_jobs.sweeps.grid import parse_grid
from python_jobs.sweeps.runs import landed_runs, plan_sweep, run_sweep
from support.fake_llm import Behaviour, FakeLLM
from support.retrieval_runs import retrieve
from support.shards import assert_same_rows, land_chain_corpus
from support.sweeps import TOY_GRID
from support.toy_corpus import DATASET, FLAT, land_corpus


def sweep(home: Path, shard: Shard | None = None, dry_run: bool = False) -> dict:
    plan = plan_sweep(Lake(home), parse_grid(TOY_GRID, "grid.yaml"))
    return run_sweep(Lake(home), plan, shard=shard, dry_run=dry_run, progress=False)


@pytest.fixture
def landings(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The tables of every Lake.land call from here on (each call one landing)."""
    calls: list[list[str]] = []
    real = Lake.land

    def counted(self: Lake, frames, *args, **kwargs):
        frames = list(frames)
        calls.append(sorted({table for table, _, _ in frames}))
        return real(self, frames, *args, **kwargs)

    monkeypatch.setattr(Lake, "land", counted)
    return calls


def run_rows(home: Path) -> dict[str, object]:
    """run id -> created_at of the lake's retrieval runs."""
    runs = Lake(home).read("retrieval_runs")
    return dict(zip(runs["run_id"].to_list(), runs["created_at"].to_list(), strict=True))


def test_a_sweep_lands_the_verbs_runs_and_its_rows(home: Path, landings: list[list[str]]) -> None:
    land_corpus(home, parent_child=False)
    landings.clear()
    out = sweep(home)
    assert (out["configurations"], out["landed_before"], out["ran"], out["chunkings_made"]) == (4, 0, 4, 2)
    # the sweep's rows, the two chunkings, then one landing per run: nothing else
    assert landings == [["sweep_runs", "sweeps"], ["chunks"], ["chunks"],
                        *[["retrieval_results", "retrieval_runs"]] * 4]
    lake = Lake(home)
    sweep_row = lake.read("sweeps").row(0, named=True)
    members = lake.read("sweep_runs").sort("run_id", "parameter")
    # each configuration's run is the run `finrag retrieve` lands for the same settings (same id, same row)
    expected = {}
    for size in (16, 32):
        for retriever in ("bm25", "keywords"):
            run_id = retrieve(home, DATASET, retriever, k=3, chunker_id=f"tok{size}o0-minilm")["run_id"]
            expected[run_id] = {"chunk_size": str(size), "retriever": retriever}
    assert sorted(run_rows(home)) == sorted(expected)
    assert {r: dict(zip(g["parameter"], g["value"], strict=True))
            for (r,), g in members.group_by("run_id")} == expected
    grid_values = {"chunk_size": ["16", "32"], "retriever": ["bm25", "keywords"]}
    assert members.height == 8 and all(grid_values[p].index(v) == i for p, v, i in members.select(
        "parameter", "value", "value_order").iter_rows())
    baseline = next(r for r, v in expected.items() if v == {"chunk_size": "32", "retriever": "bm25"})
    assert {k: sweep_row[k] for k in ("sweep_id", "dataset", "kind", "parameters", "n_runs", "baseline_run_id")} == {
        "sweep_id": out["sweep_id"], "dataset": DATASET, "kind": "retrieval", "parameters": ["chunk_size", "retriever"],
        "n_runs": 4, "baseline_run_id": baseline}
    assert json.loads(sweep_row["grid"])["parameters"] == {"chunk_size": [16, 32], "retriever": ["bm25", "keywords"]}
    assert out["sweep_id"].startswith(f"{DATASET}-sweep-")


def test_a_rerun_lands_nothing(home: Path, landings: list[list[str]]) -> None:
    land_corpus(home, parent_child=False)
    first = sweep(home)
    before = run_rows(home)
    sweeps_before = Lake(home).read("sweeps")["created_at"].to_list()
    landings.clear()
    again = sweep(home)
    assert landings == []
    assert (again["sweep_id"], again["landed_before"], again["ran"]) == (first["sweep_id"], 4, 0)
    assert run_rows(home) == before and Lake(home).read("sweeps")["created_at"].to_list() == sweeps_before
    # a dry run says the same and lands nothing either
    dry = sweep(home, dry_run=True)
    assert [c["status"] for c in dry["plan"]] == ["landed"] * 4 and landings == []


def test_an_interrupted_sweep_resumes_with_what_had_not_landed(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                               landings: list[list[str]]) -> None:
    land_corpus(home, parent_child=False)
    real = sweep_runs.run_retrieval
    ran: list[str] = []

    def interrupted(home_, cfg, **kwargs):
        if len(ran) == 2:  # Ctrl-C while the third run starts
            raise KeyboardInterrupt
        out = real(home_, cfg, **kwargs)
        ran.append(str(out["run_id"]))
        return out

    monkeypatch.setattr(sweep_runs, "run_retrieval", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sweep(home)
    landed = run_rows(home)
    assert sorted(landed) == sorted(ran)
    plan = plan_sweep(Lake(home), parse_grid(TOY_GRID, "grid.yaml"))
    assert landed_runs(Lake(home), plan) == set(ran)

    monkeypatch.setattr(sweep_runs, "run_retrieval", real)
    landings.clear()
    out = sweep(home)
    assert (out["landed_before"], out["ran"], out["chunkings_made"]) == (2, 2, 0)
    # the sweep's rows had landed before the runs: the re-run lands the two missing runs and nothing else
    assert landings == [["retrieval_results", "retrieval_runs"]] * 2
    after = run_rows(home)
    assert len(after) == 4 and {r: after[r] for r in landed} == landed  # the first two untouched


def test_two_shards_together_land_the_unsharded_sweep(tmp_path: Path) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    for h in (whole, sharded):
        land_corpus(h, parent_child=False)
    assert sweep(whole)["ran"] == 4
    first, second = (sweep(sharded, Shard(i, 2)) for i in (1, 2))
    plan = plan_sweep(Lake(whole), parse_grid(TOY_GRID, "grid.yaml"))
    ids = [c.run_id for c in plan.configurations]
    # configurations 1 and 3 of the grid's order to shard 1/2, 2 and 4 to shard 2/2
    assert (first["ran"], second["ran"], first["landed_before"], second["landed_before"]) == (2, 2, 0, 2)
    assert [c.run_id for c in plan.mine(Shard(1, 2))] == ids[0::2]
    assert assert_same_rows(whole, sharded, "retrieval_runs") == 4
    assert_same_rows(whole, sharded, "retrieval_results")
    assert assert_same_rows(whole, sharded, "sweeps") == 1
    assert assert_same_rows(whole, sharded, "sweep_runs") == 8
    assert_same_rows(whole, sharded, "chunks")


def test_a_run_whose_shards_have_not_all_landed_is_run_again(home: Path) -> None:
    land_corpus(home, parent_child=False)
    sweep(home, Shard(1, 2))  # chunks both sizes, runs configurations 1 and 3
    plan = plan_sweep(Lake(home), parse_grid(TOY_GRID, "grid.yaml"))
    second = plan.configurations[1]
    # the second configuration, landed by `finrag retrieve --shard 1/2` only: not landed yet for the sweep
    retrieve(home, DATASET, "keywords", k=3, chunker_id="tok16o0-minilm", shard=Shard(1, 2))
    assert second.run_id in Lake(home).partitions("retrieval_runs")
    assert second.run_id not in landed_runs(Lake(home), plan)
    retrieve(home, DATASET, "keywords", k=3, chunker_id="tok16o0-minilm", shard=Shard(2, 2))
    assert second.run_id in landed_runs(Lake(home), plan)
    assert sweep(home, Shard(2, 2))["ran"] == 1  # the fourth configuration only


def test_an_answer_run_whose_calls_all_failed_is_run_again(home: Path) -> None:
    land_chain_corpus(home)
    bm25 = retrieve(home, DATASET, "bm25", k=3, chunker_id=FLAT)["run_id"]
    grid = parse_grid(f"dataset: {DATASET}\nkind: answer\nfixed: {{retrieval_run_id: {bm25}, max_tokens: 16}}\n"
                      "parameters:\n  k: [1, 2]\n", "answers.yaml")
    with FakeLLM(Behaviour(always={"": "500"})) as down:
        failing = LLMConfig(base_url=down.base_url, model="fake-model", timeout=5, max_attempts=1)
        plan = plan_sweep(Lake(home), grid, failing)
        with pytest.raises(JobError, match=r"2 of 2 runs landed with every LLM call failed"):
            run_sweep(Lake(home), plan, failing, progress=False)
    ids = {c.run_id for c in plan.configurations}
    assert set(Lake(home).partitions("generation_runs")) == ids and landed_runs(Lake(home), plan) == set()
    with FakeLLM() as up:
        working = LLMConfig(base_url=up.base_url, model="fake-model", timeout=5, max_attempts=1)
        # the same runs: an answer run's id hashes the model, not the host
        again = plan_sweep(Lake(home), grid, working)
        assert again.sweep_id == plan.sweep_id
        assert run_sweep(Lake(home), again, working, progress=False)["ran"] == 2
    assert landed_runs(Lake(home), plan) == ids
    assert Lake(home).read("answers")["error"].null_count() == 2 * 5  # both runs, every toy question answered
