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
    assert saved["code_signature"] == build_plan.code_signature()
    # a file touched, not changed (another signature, the same contents): the contents decide, nothing to build
    state.write_text(json.dumps({**saved, "code_signature": "0" * 64}))
    assert build_plan.plan(tmp_path).reason == "nothing changed in the lake or the project since the last build"
    state.write_text(json.dumps({**saved, "code": "0" * 64, "code_signature": "0" * 64}))
    p = build_plan.plan(tmp_path)
    assert p.select is None and "changed since the last build" in p.reason
    build_plan.forget(tmp_path)
    assert build_plan.plan(tmp_path).reason == "no record of a previous build"


def test_code_hash_follows_the_project_files(tmp_path: Path) -> None:
    for d in ("models", "macros", "seeds", "tests/dbt", "notes", "pkg/sub"):
        (tmp_path / d).mkdir(parents=True)
    # the paths dbt reads come from dbt_project.yml; the Python from profiles.yml's plugin and its imports
    (tmp_path / "dbt_project.yml").write_text("name: x\nmodel-paths: [models]\nmacro-paths: [macros]\n"
                                              "test-paths: [tests/dbt]\ntarget-path: target\n")
    (tmp_path / "profiles.yml").write_text("x:\n  outputs:\n    dev:\n      plugins:\n        - module: pkg.plugin\n")
    (tmp_path / "models" / "m.sql").write_text("select 1")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "plugin.py").write_text("from pkg.sub import helper\nimport json\n")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "helper.py").write_text("X = 1\n")
    (tmp_path / "pkg" / "sub" / "rules.yml").write_text("a: 1\n")
    (tmp_path / "pkg" / "unused.py").write_text("Y = 1\n")
    files = {p.relative_to(tmp_path).as_posix() for p in build_plan.code_files(tmp_path)}
    assert files == {"dbt_project.yml", "profiles.yml", "models/m.sql", "pkg/__init__.py", "pkg/plugin.py",
                     "pkg/sub/__init__.py", "pkg/sub/helper.py", "pkg/sub/rules.yml"}
    before = build_plan.code_hash(tmp_path)
    assert build_plan.code_hash(tmp_path) == before
    (tmp_path / "models" / "m.yml").write_text("models: []\n")  # a new test or doc file counts
    after = build_plan.code_hash(tmp_path)
    assert after != before
    (tmp_path / "models" / "m.sql").write_text("select 2")
    assert build_plan.code_hash(tmp_path) != after
    changed = build_plan.code_hash(tmp_path)
    (tmp_path / "pkg" / "sub" / "helper.py").write_text("X = 2\n")  # Python the plugin imports counts
    assert build_plan.code_hash(tmp_path) != changed
    changed = build_plan.code_hash(tmp_path)
    (tmp_path / "notes" / "n.md").write_text("x")  # a folder dbt does not read does not
    (tmp_path / "pkg" / "unused.py").write_text("Y = 2\n")  # nor a module nothing imports
    assert build_plan.code_hash(tmp_path) == changed


def test_code_signature_changes_whenever_the_code_may_have(tmp_path: Path) -> None:
    """The no-op build's shortcut: the signature (names, sizes, mtimes) covers every file code_hash reads."""
    (tmp_path / "models").mkdir()
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "dbt_project.yml").write_text("name: x\nmodel-paths: [models]\ntarget-path: target\n")
    (tmp_path / "profiles.yml").write_text("x:\n  outputs:\n    dev:\n      plugins:\n        - module: pkg.plugin\n")
    (tmp_path / "models" / "m.sql").write_text("select 1")
    (tmp_path / "pkg" / "plugin.py").write_text("from pkg.sub import helper\n")
    (tmp_path / "pkg" / "sub" / "helper.py").write_text("X = 1\n")
    seen = {build_plan.code_signature(tmp_path)}
    assert build_plan.code_signature(tmp_path) in seen
    for path, text in (("models/m.sql", "select 22"), ("models/new.yml", "models: []\n"),
                       ("pkg/sub/helper.py", "X = 22\n"), ("dbt_project.yml", "name: y\nmodel-paths: [models]\n")):
        (tmp_path / path).write_text(text)
        signature = build_plan.code_signature(tmp_path)
        assert signature not in seen, path
        seen.add(signature)
