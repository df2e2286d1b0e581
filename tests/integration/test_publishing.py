"""`dbt build` is the interface: a plain `dbt build` publishes what every reader reads (macros/publishing/
publish_marts.sql), exactly as `finrag build` does; a reader that finds a newer build than what is published says so
instead of answering; a reader sees one build's files or the next one's; exports no manifest names any more are
deleted. Real dbt, real DuckDB, trec_eval's fixtures and the dashboard suites' home."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from python_jobs.warehouse.publishing import read_manifest
from support.cli import MODELS_ONLY
from support.dashboard_home import dashboard_home
from support.project_copy import copy_project, plain_dbt_build

pytestmark = pytest.mark.slow


def exports(home: Path) -> Path:
    return home / "exports" / "marts"


def published_frames(home: Path) -> dict[str, pl.DataFrame]:
    """Every published table as read through its manifest, rows sorted on every column."""
    manifest = read_manifest(home)
    out = {}
    for name, model in manifest.models.items():
        files = [str(exports(home) / f) for f in model.files]
        frame = duckdb.sql(f"select * from read_parquet({files})").pl()
        sortable = [c for c, t in frame.schema.items() if not isinstance(t, (pl.List, pl.Struct, pl.Array))]
        out[name] = frame.sort(sortable, nulls_last=True) if sortable and frame.height else frame
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("publishing") / "project")


def test_a_plain_dbt_build_refreshes_what_every_reader_reads(home: Path, finrag, shared_data: Path,
                                                            project: Path) -> None:
    fixtures = shared_data / "trec_eval_fixtures"
    finrag("ingest", "trec-qrels", str(fixtures / "qrels.test"), "--dataset", "trec")
    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec", "--run-id", "first")
    finrag("build", *MODELS_ONLY)
    first = read_manifest(home)
    finrag("ingest", "trec-run", str(fixtures / "results-302.test"), "--dataset", "trec", "--run-id", "second")

    plain_dbt_build(project, home, *MODELS_ONLY)
    manifest = read_manifest(home)
    assert manifest.build_id != first.build_id and manifest.built_at > first.built_at
    runs = finrag("sql", "select distinct run_id from mart_retrieval_leaderboard order by 1", "--format", "csv")
    assert runs.stdout.splitlines() == ["run_id", "first", "second"]
    scored = finrag("sql", "select count(distinct question_id) as n from fct_question_metric_scores "
                           "where run_id = 'second'", "--format", "csv")
    assert scored.stdout.splitlines() == ["n", "1"]
    report = finrag("report", "--run-id", "second", "--format", "trec")
    assert report.stdout.splitlines()[1].split() == ["num_q", "all", "1"]
    compared = finrag("compare", "--run-a", "first", "--run-b", "second", "--format", "json")
    assert json.loads(compared.stdout)
    # BI tools' way in: _views.sql, one view per published table over the same files
    views = duckdb.connect()
    views.execute((exports(home) / "_views.sql").read_text())
    assert sorted(r[0] for r in views.sql("select table_name from information_schema.tables").fetchall()) == \
        sorted(manifest.models)
    assert views.sql("select distinct run_id from mart_retrieval_leaderboard order by 1").fetchall() == \
        [("first",), ("second",)]

    # a build that does not publish: the readers say the published state is stale, and do not answer
    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec", "--run-id", "third")
    finrag("build", "--no-publish", *MODELS_ONLY)
    stale = finrag("sql", "select 1", check=False)
    assert stale.returncode == 2 and "stale" in stale.stderr and "finrag publish" in stale.stderr, stale.stderr
    assert finrag("report", "--run-id", "first", check=False).returncode == 2
    finrag("publish")
    runs = finrag("sql", "select count(distinct run_id) as n from mart_retrieval_leaderboard", "--format", "csv")
    assert runs.stdout.splitlines() == ["n", "3"]

    # the files of the current and the previous manifest are kept; the next build deletes the older ones
    out = exports(home)
    named = {f for m in read_manifest(home).models.values() for f in m.files}
    previous = {f for m in json.loads((out / "_manifest.previous.json").read_text())["models"] for f in m["files"]}
    plain_dbt_build(project, home, "--select", "dim_metrics")
    left = {p.relative_to(out).as_posix() for p in out.rglob("*.parquet")}
    assert named <= left  # now the previous manifest's
    older = {f for m in first.models.values() for f in m.files}  # the first build's: two manifests back
    assert older and not (older - named - previous) & left
    assert left <= named | previous | {f for m in read_manifest(home).models.values() for f in m.files}


def test_finrag_build_and_dbt_build_publish_the_same(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                                   project: Path) -> None:
    dash = dashboard_home(tmp_path_factory)  # built by `finrag build`
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(dash.home / "lake", home / "lake", symlinks=True)
    plain_dbt_build(project, home, *MODELS_ONLY)
    by_finrag, by_dbt = published_frames(dash.home), published_frames(home)
    assert sorted(by_dbt) == sorted(by_finrag)
    assert sum(frame.height for frame in by_dbt.values()) > 1000
    # pair_version names the build for a pair of answer or judge runs (their scores are summarised in every build,
    # fct_run_pairs), so it is the one column two builds of the same lake do not share
    differ = [name for name in by_finrag
              if not by_finrag[name].drop("pair_version", strict=False).equals(
                  by_dbt[name].drop("pair_version", strict=False))]
    assert differ == []
