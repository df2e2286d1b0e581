"""build_plan: which lake tables changed since the recorded build, and when the record cannot be trusted."""

from __future__ import annotations

import json
from pathlib import Path

from python_jobs.warehouse import build_plan


def _land(home: Path, table: str, partition: str, payload: bytes) -> None:
    d = home / "lake" / table / partition
    d.mkdir(parents=True, exist_ok=True)
    (d / "part-0.parquet").write_bytes(payload)


def test_plan_names_the_changed_tables(tmp_path: Path) -> None:
    home = tmp_path
    assert build_plan.plan(home).select is None  # no warehouse yet
    (home / "finrag.duckdb").write_bytes(b"")
    assert build_plan.plan(home).reason == "no record of a previous build"
    _land(home, "retrieval_results", "run_id=a", b"1")
    _land(home, "evidence", "dataset=x", b"1")
    build_plan.record(home, build_plan.lake_snapshot(home))
    p = build_plan.plan(home)
    assert p.select == [] and p.changed_tables == []

    _land(home, "retrieval_results", "run_id=b", b"22")  # a new partition
    _land(home, "evidence", "dataset=x", b"333")  # a replaced one
    (home / "lake" / "_staging" / "t").mkdir(parents=True)  # the lake's own bookkeeping is not a table
    p = build_plan.plan(home)
    assert p.changed_tables == ["evidence", "retrieval_results"]
    assert p.select == ["source:lake.evidence+", "source:lake.retrieval_results+"]

    build_plan.record(home, build_plan.lake_snapshot(home))
    import shutil

    shutil.rmtree(home / "lake" / "retrieval_results" / "run_id=a")  # a dropped partition
    assert build_plan.plan(home).changed_tables == ["retrieval_results"]


def test_other_code_means_every_model(tmp_path: Path) -> None:
    (tmp_path / "finrag.duckdb").write_bytes(b"")
    build_plan.record(tmp_path, {})
    state = build_plan.state_path(tmp_path)
    saved = json.loads(state.read_text())
    assert saved["code"] == build_plan.code_hash()
    state.write_text(json.dumps({**saved, "code": "0" * 64}))
    p = build_plan.plan(tmp_path)
    assert p.select is None and "changed since the last build" in p.reason
    build_plan.forget(tmp_path)
    assert build_plan.plan(tmp_path).reason == "no record of a previous build"


def test_code_hash_follows_the_project_files(tmp_path: Path) -> None:
    for d in ("models", "macros", "seeds", "tests/dbt"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "dbt_project.yml").write_text("name: x\n")
    (tmp_path / "models" / "m.sql").write_text("select 1")
    before = build_plan.code_hash(tmp_path)
    assert build_plan.code_hash(tmp_path) == before
    (tmp_path / "models" / "m.yml").write_text("models: []\n")  # a new test or doc file counts
    after = build_plan.code_hash(tmp_path)
    assert after != before
    (tmp_path / "models" / "m.sql").write_text("select 2")
    assert build_plan.code_hash(tmp_path) != after
