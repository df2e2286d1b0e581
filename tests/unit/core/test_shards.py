"""Sharded landings (python_jobs/core/shards.py, lake.py): the deterministic slice, each shard's own part files of
the run's partition, one merged run row, a re-run of one shard replacing only its files, a refused config, keys
checked across shards, and a killed shard's swap rolled forward."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from python_jobs.core import lake as lake_mod
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.core.shards import Shard, shard_number

QIDS = [f"q{i:02d}" for i in range(12)]
WORK = {"retrieval_runs": {"n_with_results": "sum", "seconds": "shard"}}


def land_questions(lake: Lake) -> None:
    n = len(QIDS)
    lake.land_one("questions", "ds", pl.DataFrame({"question_id": QIDS, "dataset": ["ds"] * n, "split": ["test"] * n,
                                                   "question": QIDS, "source": ["human"] * n}))


def run_frames(qids: list[str], k: str = "3", score: float = 1.0) -> list[tuple[str, str, pl.DataFrame]]:
    params = {"k": k, "n_with_results": len(qids), "seconds": 0.5}
    run = pl.DataFrame({"run_id": ["R"], "dataset": ["ds"], "retriever": ["bm25"], "condition": ["full"],
                        "params": [json.dumps(params)], "config_hash": ["h"], "config_id": ["c"], "source": ["finrag"]})
    results = pl.DataFrame({"run_id": ["R"] * len(qids), "question_id": qids, "dataset": ["ds"] * len(qids),
                            "rank": [1] * len(qids), "chunk_id": ["c1"] * len(qids), "doc_id": ["d1"] * len(qids),
                            "score": [score] * len(qids)})
    return [("retrieval_runs", "R", run), ("retrieval_results", "R", results)]


def land_shard(lake: Lake, shard: Shard, **kw: object) -> None:
    lake.land(run_frames([q for q in QIDS if shard.owns(q)], **kw), shard=shard, work=WORK)  # type: ignore[arg-type]


def files(home: Path, table: str) -> dict[str, tuple[int, bytes]]:
    d = home / "lake" / table / "run_id=R"
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(d.iterdir())}


def test_the_slice_is_stable_and_parses_i_of_n() -> None:
    assert shard_number("q00", 3) == shard_number("q00", 3)
    # SHA-256 of the id, first 8 bytes big-endian, mod N: fixed values, so a change of the rule shows here
    assert [shard_number(q, 3) for q in QIDS[:6]] == [2, 1, 3, 2, 1, 1]
    slices = [{q for q in QIDS if Shard(i, 3).owns(q)} for i in (1, 2, 3)]
    assert set().union(*slices) == set(QIDS) and sum(map(len, slices)) == len(QIDS)
    assert Shard.parse(" 2/3 ") == Shard(2, 3) and str(Shard(2, 3)) == "2/3" and Shard(2, 3).tag == "shard-2-of-3"
    for bad in ("0/3", "4/3", "1/0", "3", "a/b", "1/2/3"):
        with pytest.raises(InputError, match="a shard is I/N"):
            Shard.parse(bad)


def test_shards_land_their_own_files_and_one_merged_run_row(home: Path) -> None:
    lake = Lake(home)
    land_questions(lake)
    for i in (1, 2, 3):
        land_shard(lake, Shard(i, 3))
    assert sorted(files(home, "retrieval_results")) == [f"shard-{i}-of-3.part-0.parquet" for i in (1, 2, 3)]
    assert sorted(lake.read_partition("retrieval_results", "R")["question_id"]) == QIDS
    (run,) = lake.read("retrieval_runs").iter_rows(named=True)
    params = json.loads(run["params"])
    assert params["n_with_results"] == len(QIDS) and "seconds" not in params  # summed; kept per shard only
    assert sorted(params["shards"]) == ["1/3", "2/3", "3/3"] and params["shards"]["1/3"]["seconds"] == 0.5

    # a re-run of shard 2 replaces its own file only
    before = files(home, "retrieval_results")
    land_shard(lake, Shard(2, 3), score=2.0)
    after = files(home, "retrieval_results")
    assert {n: v for n, v in after.items() if "shard-2" not in n} == {n: v for n, v in before.items()
                                                                       if "shard-2" not in n}
    assert after["shard-2-of-3.part-0.parquet"] != before["shard-2-of-3.part-0.parquet"]
    scores = lake.read_partition("retrieval_results", "R").select("question_id", "score").rows()
    assert sorted(s for q, s in scores if Shard(2, 3).owns(q)) == [2.0] * sum(Shard(2, 3).owns(q) for q in QIDS)
    assert lake.read("retrieval_runs").height == 1

    # an unsharded landing of the run replaces every shard's files; a shard then replaces the unsharded ones
    lake.land(run_frames(QIDS))
    assert sorted(files(home, "retrieval_results")) == ["part-0.parquet"]
    assert "shards" not in json.loads(lake.read("retrieval_runs")["params"][0])
    land_shard(lake, Shard(1, 2))
    assert sorted(files(home, "retrieval_results")) == ["shard-1-of-2.part-0.parquet"]
    assert sorted(json.loads(lake.read("retrieval_runs")["params"][0])["shards"]) == ["1/2"]


def test_a_shard_with_another_config_or_a_clashing_key_is_refused(home: Path) -> None:
    lake = Lake(home)
    land_questions(lake)
    land_shard(lake, Shard(1, 3))
    before = files(home, "retrieval_results"), files(home, "retrieval_runs")
    with pytest.raises(InputError, match=r"shard 2/3 of run 'R' differs from its shard\(s\) 1/3 already landed: "
                                         r"params.k \('3' landed, '5' now\)") as e:
        land_shard(lake, Shard(2, 3), k="5")
    assert e.value.field == "shard"
    mine = [q for q in QIDS if Shard(1, 3).owns(q)]  # shard 2 claiming a question of shard 1
    with pytest.raises(InputError, match="already landed by run_id=R"):
        lake.land(run_frames(mine[:1]), shard=Shard(2, 3), work=WORK)
    assert (files(home, "retrieval_results"), files(home, "retrieval_runs")) == before


def test_a_shard_killed_mid_swap_is_rolled_forward(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = Lake(home)
    land_questions(lake)
    land_shard(lake, Shard(1, 2))
    real_replace = lake_mod.os.replace

    def dying_replace(src: object, dst: object) -> None:
        if "shard-2-of-2" in str(dst):
            raise KeyboardInterrupt("killed")  # after the journal's commit, before the shard's file moved in
        real_replace(src, dst)

    monkeypatch.setattr(lake_mod.os, "replace", dying_replace)
    with pytest.raises(KeyboardInterrupt):
        land_shard(lake, Shard(2, 2))
    monkeypatch.setattr(lake_mod.os, "replace", real_replace)
    recovered = Lake(home)
    assert sorted(recovered.read_partition("retrieval_results", "R")["question_id"]) == QIDS
    assert sorted(files(home, "retrieval_results")) == [f"shard-{i}-of-2.part-0.parquet" for i in (1, 2)]
