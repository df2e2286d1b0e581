"""`finrag build` builds what the lake's changes reach: every model the first time, nothing when nothing changed,
the models downstream of a changed lake table otherwise, with their data tests scoped to the rows it touched, and
republishes only the marts it rebuilt. Real lake, real dbt, real DuckDB (trec_eval's own fixtures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from python_jobs.warehouse.publishing import read_manifest
from support.warehouse import warehouse_query


def _built(home: Path) -> dict[str, str]:
    results = json.loads((home / "dbt_target" / "run_results.json").read_text())["results"]
    return {r["unique_id"]: r["status"] for r in results}


def _compiled_tests(home: Path, prefix: str) -> dict[str, str]:
    """The compiled SQL of the data tests named `prefix`... that the last build ran, by unique id."""
    results = json.loads((home / "dbt_target" / "run_results.json").read_text())["results"]
    return {r["unique_id"]: r["compiled_code"] for r in results if r["unique_id"].startswith(f"test.finrag.{prefix}")}


def _models(built: dict[str, str]) -> set[str]:
    return {uid.split(".")[-1] for uid in built if uid.startswith("model.")}


@pytest.mark.slow
def test_build_follows_the_lake(home: Path, finrag, shared_data: Path) -> None:
    fixtures = shared_data / "trec_eval_fixtures"
    finrag("ingest", "trec-qrels", str(fixtures / "qrels.test"), "--dataset", "trec")
    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec", "--run-id", "first")

    first = finrag("build")
    assert "building every model: no warehouse yet" in first.stderr
    models = _models(_built(home))
    assert {"dim_documents", "mart_generation_leaderboard", "mart_retrieval_leaderboard"} <= models
    assert not any(uid.startswith("unit_test.") for uid in _built(home))  # unit tests only on request
    exports = home / "exports" / "marts"
    stamps = {name: m.files for name, m in read_manifest(home).models.items()}

    again = finrag("build")
    assert "nothing to build" in again.stderr
    assert {name: m.files for name, m in read_manifest(home).models.items()} == stamps

    finrag("ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec", "--run-id", "second")
    second = finrag("build")
    assert "the models downstream of retrieval_results, retrieval_runs" in second.stderr
    built = _built(home)
    assert set(built.values()) <= {"success", "pass", "no-op"}
    models = _models(built)
    assert {"stg_lake__retrieval_results", "int_retrieval_hits", "mart_retrieval_leaderboard"} <= models
    assert not models & {"dim_documents", "stg_lake__evidence", "mart_generation_leaderboard", "fct_evidence"}
    # republished: the rebuilt marts; kept as they were (the same files): the others
    after = {name: m.files for name, m in read_manifest(home).models.items()}
    assert after["mart_retrieval_leaderboard"] != stamps["mart_retrieval_leaderboard"]
    assert after["fct_evidence"] == stamps["fct_evidence"]
    assert all((exports / f).exists() for files in after.values() for f in files)
    assert set(after) >= {"fct_evidence", "mart_retrieval_leaderboard", "dim_metrics"}
    # the same file under two run ids: the same scores
    rows = warehouse_query(home, "select run_id, metric, k, mean from mart_retrieval_leaderboard "
                                 "where granularity = 'chunk' order by metric, k, run_id")
    assert {r[0] for r in rows} == {"first", "second"}
    for a, b in zip(rows[::2], rows[1::2]):
        assert a[1:3] == b[1:3] and a[3] == pytest.approx(b[3], abs=1e-12)

    # the data tests read what the build touched: the new run's partition and the new run's rows - as this build ran
    # them (its run results' compiled code: a compiled file under target/ may be an earlier build's, of a test whose
    # name another parse hashed otherwise)
    for model in ("stg_lake__retrieval_results", "fct_retrieval_question_scores", "mart_drilldown_results",
                  "mart_drilldown_first_gold_ranks"):
        ran = _compiled_tests(home, f"column_rules_{model}")
        assert ran, model
        for name, sql in ran.items():
            assert "where \"run_id\" in ('second')) dbt_subquery" in sql, (name, sql)
    # and so does the singular test over every run's scores, for the retrieval runs
    [text] = _compiled_tests(home, "assert_question_metric_scores_match_leaderboards").values()
    assert text.count("\"run_id\" in ('second')") == 2, text
    tested = warehouse_query(home, "select distinct run_id from finrag_tested_runs order by 1")
    assert tested == [("first",), ("second",)]

    # a re-landed input of the dataset (its qrels): every run of it is rebuilt and its rows tested again
    finrag("ingest", "trec-qrels", str(fixtures / "qrels.test"), "--dataset", "trec")
    third = finrag("build")
    assert "the models downstream of evidence" in third.stderr
    [text] = _compiled_tests(home, "column_rules_fct_retrieval_question_scores").values()
    assert "dbt_subquery" in text
    assert "\"run_id\" in ('first', 'second')" in text or "\"run_id\" in ('second', 'first')" in text

    # a build with dbt arguments is a subset: the next plain build cannot trust the record and builds every model
    finrag("build", "--select", "dim_metrics")
    assert "building every model: no record of a previous build" in finrag("build").stderr
