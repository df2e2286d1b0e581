"""The dbt project itself: builds on an empty home, seeds, topic tree errors (finrag sql:
tests/integration/test_sql.py). The topic seed against the OmniEval tree: tests/unit/sources/test_topic_tree.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from python_jobs.demo.pipeline import JUDGED_REPORT, leaderboard_queries
from python_jobs.warehouse.publishing import read_manifest
from support.cli import dbt_build, run_finrag
from support.paths import PROJECT
from support.shared_home import copy_home
from support.warehouse import warehouse_query


@pytest.fixture(scope="module")
def empty_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty home built once for the module (both tests only read it); the suite's one DuckDB run of every dbt
    unit test."""
    home = tmp_path_factory.mktemp("empty") / "warehouse"
    home.mkdir()
    dbt_build(home, "--unit-tests")
    return home


def test_build_on_an_empty_home_is_green(empty_built: Path) -> None:
    home = empty_built
    assert warehouse_query(home, "select count(*) from dim_documents") == [(0,)]
    assert warehouse_query(home, "select count(*) from omnieval_topics") == [(46,)]
    out = run_finrag(home, "sql", "select level, count(*) as n from omnieval_topics group by 1 order by 1",
                     "--format", "json")
    assert json.loads(out.stdout) == [
        {"level": 0, "n": 1}, {"level": 1, "n": 5}, {"level": 2, "n": 16}, {"level": 3, "n": 24}
    ]
    # the demo's closing leaderboards run on what `finrag sql` reads (the published marts): an empty result here
    for title, sql in leaderboard_queries("demo_synthetic", 5):
        assert json.loads(run_finrag(home, "sql", sql, "--format", "json").stdout) == [], title
    assert json.loads(run_finrag(home, *JUDGED_REPORT[1], "--format", "json").stdout) == []
    # that every model also runs on Spark (not merely transpiles) is tests/integration/test_spark_target.py


def test_dbt_takes_its_settings_from_the_project(empty_built: Path) -> None:
    """dbt_project.yml's `flags:` are the one place of dbt's own settings, for `finrag build` as for a plain `dbt
    build`: no usage events (the manifest records the setting dbt ran with), and dbt.log at INFO, without debug
    events."""
    manifest = json.loads((empty_built / "dbt_target" / "manifest.json").read_text())
    assert manifest["metadata"]["send_anonymous_usage_stats"] is False
    log = (empty_built / "dbt_logs" / "dbt.log").read_text()
    assert "[info ]" in log and "[debug]" not in log


def test_a_build_out_of_memory_names_the_model_and_publishes_nothing(empty_built: Path, tmp_path: Path) -> None:
    """Under a memory limit too small for any model (8 MB: DuckDB's own catalog needs more), the build fails, says
    which model ran out of memory, the limit, how to raise it and how to spread the work; the marts published by the
    last good build stay as they were."""
    home = copy_home(empty_built, tmp_path / "warehouse")
    before = read_manifest(home)
    proc = run_finrag(home, "build", "--quiet", "--select", "+mart_retrieval_by_slice", check=False,
                      env={"FINRAG_DUCKDB_MEMORY_LIMIT": "8MB"})
    assert proc.returncode == 1
    (advice,) = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert re.match(r"error: (model|data test) \w+.* ran out of memory under the DuckDB memory limit of 8MB "
                    r"\(profiles.yml, FINRAG_DUCKDB_MEMORY_LIMIT\); nothing was published", advice), advice
    assert "FINRAG_DUCKDB_MEMORY_LIMIT=16GB finrag build" in advice and "--target spark" in advice
    after = read_manifest(home)
    assert (after.build_id, after.models) == (before.build_id, before.models)
    assert json.loads(run_finrag(home, "sql", "select count(*) as n from mart_retrieval_by_slice",
                                 "--format", "json").stdout) == [{"n": 0}]


def test_topic_tree_errors_name_the_node(tmp_path: Path, finrag) -> None:
    bad = tmp_path / "tree.json"
    bad.write_text(json.dumps({"topic_name": "root", "sub_topics": [{"name": "oops"}]}))
    out = finrag("topics", "flatten", "--tree", str(bad), "--out", str(tmp_path / "t.csv"), check=False)
    assert out.returncode == 2
    assert f"file {bad}, field '$.sub_topics[0].topic_name'" in out.stderr
    assert not (tmp_path / "t.csv").exists()


def test_every_source_and_mart_column_is_described(empty_built: Path) -> None:
    """Docs coverage, dbt's own manifest against the built relations: every column of every staging view (the lake
    sources as dbt reads them; the sources file itself is generated from the contract, where every column is
    described: tests/unit/core/test_contracts.py), every mart and every seed has a description."""
    home = empty_built
    manifest = json.loads((home / "dbt_target" / "manifest.json").read_text())
    documented: dict[str, tuple[str, dict]] = {}
    layers = ("models/staging", "models/marts", "seeds")
    for node in manifest["nodes"].values():
        if node["resource_type"] in ("model", "seed") and node["original_file_path"].startswith(layers):
            documented[node["alias"]] = (node["original_file_path"], node["columns"])
    built = warehouse_query(home, "select table_name, column_name from information_schema.columns")
    missing = sorted(
        f"{where}: {column}"
        for table, column in built
        if table in documented
        for where, columns in [documented[table]]
        if not (columns.get(column) or {}).get("description", "").strip()
    )
    assert len({table for table, _ in built} & documented.keys()) >= 30
    assert missing == []


def test_a_fresh_home_starts_from_the_last_parse_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """dbt_runner's parse cache: dbt parses the project in full for the first home, and a second fresh home starts
    from that parse state and parses nothing again (dbt's state check passes: the home's path is in neither the
    profile's connection nor a parsed file; the lake's location is read when a model compiles, by the project's
    source()); a run under --vars leaves the shared state alone. The lake's views name the home's absolute path, so
    the warehouse file opens from any directory."""
    from python_jobs.warehouse.dbt_runner import parse_cache, run_dbt

    monkeypatch.setenv("FINRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DBT_LOG_LEVEL_FILE", "debug")  # dbt logs its partial-parse decisions at debug level

    def parse(home: Path, *args: str) -> str:
        assert run_dbt(["parse", *args], home=home, quiet=True) == 0
        return (home / "dbt_logs" / "dbt.log").read_text()

    first = parse(tmp_path / "a")
    assert "Unable to do partial parsing because saved manifest not found" in first
    assert parse_cache().exists()
    second = parse(tmp_path / "b")
    assert "Partial parsing enabled: 0 files deleted, 0 files added, 0 files changed" in second
    assert "Starting full parse" not in second
    # no parsed node names a home; the second home's view of a lake table names its own absolute path
    manifest = (tmp_path / "b" / "dbt_target" / "manifest.json").read_text()
    assert f"{tmp_path / 'a'}/lake/" not in manifest and f"{tmp_path / 'b'}/lake/" not in manifest
    assert run_dbt(["run", "--select", "stg_lake__chunks"], home=tmp_path / "b", quiet=True) == 0
    [(view,)] = warehouse_query(tmp_path / "b", "select sql from duckdb_views() where view_name = 'stg_lake__chunks'")
    assert f"read_parquet('{tmp_path / 'b'}/lake/chunks/*/*.parquet'" in view
    nodes = [set(json.loads((tmp_path / h / "dbt_target" / "manifest.json").read_text())["nodes"]) for h in "ab"]
    models = {f"model.finrag.{sql.stem}" for sql in (PROJECT / "models").rglob("*.sql")}
    assert nodes[0] == nodes[1] and models < nodes[0]
    cached = parse_cache().read_bytes()  # the second home's
    # the state is this checkout's: another checkout of the project (a CI clone) neither reads nor replaces it, as
    # its parsed seeds would name the other checkout's files
    from python_jobs.warehouse import dbt_runner

    ours = parse_cache()
    with monkeypatch.context() as other:
        other.setattr(dbt_runner, "PROJECT_DIR", tmp_path / "another_checkout")
        theirs = parse_cache()
    assert theirs.parent == ours.parent and theirs != ours
    # a home whose state another checkout wrote (a bench home rebuilt from a second worktree) starts from this
    # checkout's state instead: kept, its seed paths would reach this checkout's cache after the build
    home_target = tmp_path / "b" / "dbt_target"
    (home_target / dbt_runner.PARSE_STATE).write_bytes(b"another checkout's state")
    (home_target / dbt_runner.PARSE_STATE_CHECKOUT).write_text(str(tmp_path / "another_checkout"))
    dbt_runner._seed_parse_state(home_target)
    assert (home_target / dbt_runner.PARSE_STATE).read_bytes() == cached
    assert (home_target / dbt_runner.PARSE_STATE_CHECKOUT).read_text() == str(dbt_runner.PROJECT_DIR.resolve())
    # this checkout's own state stays
    (home_target / dbt_runner.PARSE_STATE).write_bytes(b"ours")
    dbt_runner._seed_parse_state(home_target)
    assert (home_target / dbt_runner.PARSE_STATE).read_bytes() == b"ours"
    # a parse under other vars neither starts from nor replaces the shared state (it fits only the project's vars)
    third = parse(tmp_path / "c", "--vars", "{retrieval_ks: [1]}")
    assert "Starting full parse" in third
    assert parse_cache().read_bytes() == cached
