"""The same dbt project on Spark (profiles.yml's `spark` target, README "Scaling"): every model builds there, with
the unit tests of the models whose SQL differs by engine and one data test of each kind, and every table equals
DuckDB's row for row (floats to 1e-9).

Of the unit tests, those of the models that call a dispatched macro (adapter.dispatch, directly or through other
macros: macros/cross_db/ and the retrieval macros with a Spark spelling), chosen from DuckDB's manifest: their SQL
is not DuckDB's there. A model without one runs the same SQL text on both engines, and its table on Spark is proven
equal to DuckDB's below; its hand-worked cases ran on DuckDB (30 of 62 unit tests, ~45 s of Spark queries).

Of the data tests, one per generic test and shape of arguments (column_rules with unique + not_null, with
accepted_values, ...; relationships; in_rule; ...) and every singular test, chosen from DuckDB's manifest: that runs
every test macro's SQL on Spark once. The rest would check Spark's tables, which equal DuckDB's where DuckDB's build
ran all of them (`build --all` below): 134 more Spark queries, ~70 s of the suite's CPU, and nothing they could find.

The warehouse is small but covers every mart: the dashboard suites' home (a synthetic corpus with retrieval, answer
and RAG runs; real FinanceBench questions with two human-labelled answer runs and a judge run), a sweep of four
retrieval runs over the synthetic corpus, plus trec_eval's own test fixture (qrels.test and results.test: 50
topics, about 50,000 ranked results). Both engines build it from the same lake; the Spark tables are read straight
from their Parquet files (tests/support/spark_equality.py).
"""

from __future__ import annotations

import json
import shutil

import pytest

from support.cli import run_finrag
from support.dashboard_home import dashboard_home
from support.paths import PROJECT, SHARED_DATA
from support.spark_equality import compare_warehouses, duckdb_tables

# the project's models (dbt ls --resource-type model): one .sql file each
MODELS = len(list((PROJECT / "models").rglob("*.sql")))


@pytest.fixture(scope="module")
def spark_home(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = dashboard_home(tmp_path_factory)
    home = tmp_path_factory.mktemp("spark_target") / "warehouse"
    shutil.copytree(base.home / "lake", home / "lake")  # the lake only: both warehouses are built here
    fixtures = SHARED_DATA / "trec_eval_fixtures"
    run_finrag(home, "ingest", "trec-qrels", str(fixtures / "qrels.test"), "--dataset", "trec_test")
    run_finrag(home, "ingest", "trec-run", str(fixtures / "results.test"), "--dataset", "trec_test",
               "--run-id", "STANDARD")
    # a sweep of two chunk sizes x two retrievers (bm25 and keyword expansion: the lake has no vectors)
    grid = home.parent / "sweep.yaml"
    grid.write_text("dataset: demo_synthetic\nfixed: {k: 5, chunk_overlap: 32}\nparameters:\n"
                    "  chunk_size: [128, 256]\n  retriever: [bm25, keywords]\n"
                    "baseline: {chunk_size: 256, retriever: bm25}\n")
    run_finrag(home, "sweep", str(grid))
    run_finrag(home, "build", "--all")
    manifest = json.loads((home / "dbt_target" / "manifest.json").read_text())
    built = run_finrag(home, "build", "--target", "spark", "--unit-tests", "--indirect-selection", "empty",
                       "--select", "resource_type:model", "resource_type:seed",
                       *sorted(unit_tests_of_dispatching_models(manifest)),
                       *sorted(one_data_test_per_kind(manifest).values()), timeout=1800)
    results = json.loads((home / "dbt_target_spark" / "run_results.json").read_text())
    return {"home": home, "facts": base.facts, "results": results, "stderr": built.stderr, "manifest": manifest}


def one_data_test_per_kind(manifest: dict) -> dict[tuple, str]:
    """(generic test name or the singular test's own, its argument names) -> the first such data test's name."""
    chosen: dict[tuple, str] = {}
    for node in sorted(manifest["nodes"].values(), key=lambda n: n["unique_id"]):
        if node["resource_type"] != "test":
            continue
        generic = node.get("test_metadata") or {}
        kind = (generic.get("name", node["name"]),
                tuple(sorted(set(generic.get("kwargs", {})) - {"model", "column_name"})))
        chosen.setdefault(kind, node["name"])
    return chosen


def unit_tests_of_dispatching_models(manifest: dict) -> set[str]:
    """The unit tests of the models whose macros (followed through the macros they call) include one that dispatches
    on the adapter."""
    macros = manifest["macros"]
    dispatching = {uid for uid, macro in macros.items() if "adapter.dispatch" in macro["macro_sql"]}

    def reached(start: list[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(start)
        while todo:
            uid = todo.pop()
            if uid in macros and uid not in seen:
                seen.add(uid)
                todo.extend(macros[uid]["depends_on"]["macros"])
        return seen

    return {test["name"] for test in manifest["unit_tests"].values()
            if reached(manifest["nodes"][test["depends_on"]["nodes"][0]]["depends_on"]["macros"]) & dispatching}


def test_every_model_unit_test_and_kind_of_data_test_runs_on_spark(spark_home: dict) -> None:
    results = spark_home["results"]["results"]
    by_kind: dict[str, list[str]] = {}
    for r in results:
        by_kind.setdefault(r["unique_id"].split(".")[0], []).append(r["status"])
    by_kind.pop("operation", None)  # the on-run-end hook (nothing to record on Spark)
    by_kind.pop("exposure", None)  # the dashboard's exposures: no-ops
    assert {kind: sorted(set(statuses)) for kind, statuses in by_kind.items()} == {
        "model": ["success"], "seed": ["success"], "test": ["pass"], "unit_test": ["pass"]}
    assert len(by_kind["model"]) == MODELS
    # the unit tests of every model whose SQL differs by engine, and a data test of each kind
    manifest = spark_home["manifest"]
    kinds = one_data_test_per_kind(manifest)
    unit_tests = unit_tests_of_dispatching_models(manifest)
    assert len(by_kind["test"]) == len(kinds) >= 10
    assert {name for name, _ in kinds} >= {"column_rules", "relationships", "not_null", "in_rule",
                                           "in_metric_registry", "known_in_dataset"}
    assert len(by_kind["unit_test"]) == len(unit_tests) > 25
    # the retrieval metrics' cases (ranking, ties, trec_eval's rules) are among them
    assert {"mart_retrieval_leaderboard", "fct_retrieval_question_scores", "int_retrieval_hits"} <= {
        manifest["unit_tests"][uid]["depends_on"]["nodes"][0].split(".")[-1] for uid in manifest["unit_tests"]
        if manifest["unit_tests"][uid]["name"] in unit_tests}


def test_every_table_is_equal_on_duckdb_and_spark(spark_home: dict) -> None:
    home = spark_home["home"]
    tables = duckdb_tables(home)
    # every mart and seed, and the incremental intermediate models (tables on both engines): 51 today
    assert len(tables) >= 48
    filled = {name for name, frame in tables.items() if frame.height}
    assert {"mart_retrieval_leaderboard", "mart_retrieval_by_slice", "mart_oracle_gap", "fct_judge_scores",
            "mart_judge_leaderboard", "fct_generation_question_scores", "mart_generation_leaderboard",
            "mart_run_comparison", "fct_question_metric_scores", "mart_topic_task_matrix",
            "fct_retrieval_evidence_overlap", "mart_llm_costs", "dim_runs", "mart_datasets", "mart_run_pair_questions",
            "mart_retrieval_board", "mart_retrieval_slices_with_oracle", "mart_judge_disagreements",
            "mart_drilldown_results", "mart_drilldown_first_gold_ranks", "mart_drilldown_answers",
            "mart_drilldown_prompt_chunks", "mart_sweep_runs",
            "mart_sweep_parameter_effects", "fct_judge_answer_scores", "mart_judge_reliability",
            "fct_judge_calibration_pairs", "mart_judge_calibrated", "mart_judge_trust",
            "mart_judge_calibrated_by_slice"} <= filled
    assert compare_warehouses(home) == {}


def test_sql_and_report_read_the_spark_warehouse(spark_home: dict) -> None:
    home = spark_home["home"]
    board = ("select granularity, metric, k, mean, n_questions from mart_retrieval_leaderboard "
             "where run_id = 'STANDARD' and k in (0, 10) order by granularity, metric, k")
    on_duckdb = json.loads(run_finrag(home, "sql", board, "--format", "json").stdout)
    on_spark = json.loads(run_finrag(home, "sql", "--target", "spark", board, "--format", "json").stdout)
    assert len(on_duckdb) >= 10
    assert [{k: v for k, v in row.items() if k != "mean"} for row in on_spark] == [
        {k: v for k, v in row.items() if k != "mean"} for row in on_duckdb]
    assert [row["mean"] for row in on_spark] == pytest.approx([row["mean"] for row in on_duckdb], abs=1e-9)
    # trec_eval's layout from the Spark marts: the same lines as from DuckDB's, to 12 decimals
    trec = run_finrag(home, "report", "--run-id", "STANDARD", "--format", "trec").stdout
    trec_spark = run_finrag(home, "report", "--target", "spark", "--run-id", "STANDARD", "--format", "trec").stdout
    assert trec_spark == trec and "map                   \tall\t" in trec
    # read-only is enforced by parsing, before any session starts
    refused = run_finrag(home, "sql", "--target", "spark", "insert into dim_metrics select * from dim_metrics",
                         check=False)
    assert refused.returncode == 2 and "read-only" in refused.stderr
    assert "Py4J" not in refused.stderr

