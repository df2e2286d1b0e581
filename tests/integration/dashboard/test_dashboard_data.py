"""Publishing the marts to Parquet, the dashboard's data functions against hand-worked values and the warehouse
itself, and the dbt exposures (dbt docs generate on a built home)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import polars.selectors as cs
import pytest

from dashboards.data import common, costs, diagnosis, drilldown, judge_agreement, leaderboard, run_vs_run, sweeps
from dashboards.pages import PAGES as DASHBOARD_PAGES
from python_jobs.core.lake import Lake
from support.cli import run_finrag
from support.dashboard_home import DATASET, DashHome
from support.paths import PROJECT
from support.published import read_mart
from support.shared_home import copy_home

# the dashboard's one list of pages: every page has its exposure, and every exposure a page
PAGES = tuple(page.url_path for page in DASHBOARD_PAGES)


def model_exists(name: str) -> bool:
    return any(PROJECT.glob(f"models/**/{name}.sql"))


def db_frame(home: Path, sql: str) -> pl.DataFrame:
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        return con.sql(sql).pl()
    finally:
        con.close()


def mart_names_in_project() -> set[str]:
    return {p.stem for p in (PROJECT / "models" / "marts").rglob("*.sql")}


def seed_names_in_project() -> set[str]:
    return {p.stem for p in (PROJECT / "seeds").glob("*.csv")}


def test_publish_writes_every_mart_with_its_rows(dash: DashHome) -> None:
    out = dash.home / "exports" / "marts"
    manifest = json.loads((out / "_manifest.json").read_text())
    published = {m["name"]: m for m in manifest["models"]}
    # every model of models/marts and every seed (the reference tables analysts join), and nothing else (no
    # staging view, no intermediate model)
    assert set(published) == mart_names_in_project() | seed_names_in_project()
    assert sorted(p.name for p in out.glob("*.parquet")) == sorted(f for m in manifest["models"] for f in m["files"])
    assert not list(out.glob(".*tmp*")), "a temp file was left behind"
    for name, m in published.items():
        exported = read_mart(dash.home, name)
        assert exported.height == m["rows"] == db_frame(dash.home, f"select count(*) as n from {name}")["n"][0]
        assert exported.columns == m["columns"]
    # the same values as the warehouse (a mart with floats, lists and nulls)
    for name, key in [("mart_retrieval_leaderboard", ["run_id", "granularity", "metric", "k"]),
                      ("dim_questions", ["question_id"])]:
        exported = read_mart(dash.home, name).sort(key)
        direct = db_frame(dash.home, f"select * from {name}").sort(key)
        # DuckDB names the zone Etc/UTC, Parquet UTC: the same instants
        direct = direct.with_columns(cs.datetime(time_zone="*").dt.convert_time_zone("UTC"))
        assert exported.equals(direct)
    # counts summed in SQL are HUGEINT in DuckDB; they are published as integers, not doubles
    judge_board = read_mart(dash.home, "mart_judge_leaderboard")
    assert judge_board.schema["n_ok"] == pl.Int64 and judge_board["n_ok"].to_list() == [30, 30, 30]


def test_publish_without_a_warehouse_fails_cleanly(home: Path) -> None:
    proc = run_finrag(home, "publish", check=False)
    assert proc.returncode != 0
    assert "no warehouse at" in proc.stderr and "finrag build" in proc.stderr
    assert not (home / "exports").exists()


def test_retrieval_leaderboard_is_the_mart_pivoted(dash: DashHome) -> None:
    board = leaderboard.retrieval_leaderboard(dash.home, 5, "page")
    bm25 = dash.facts["bm25"]
    row = board.filter(pl.col("run_id") == bm25).row(0, named=True)
    mart = db_frame(dash.home, f"select metric, granularity, mean from mart_retrieval_leaderboard "
                               f"where run_id = '{bm25}' and k = 5")
    means = {(r["metric"], r["granularity"]): r["mean"] for r in mart.iter_rows(named=True)}
    assert row["doc_rec"] == means[("doc_rec", "doc")]
    assert row["page_rec"] == means[("page_rec", "page")]
    for metric in ("map", "mrr", "ndcg", "precision", "recall"):
        assert row[metric] == means[(metric, "page")]
    # dataset filter
    assert leaderboard.retrieval_leaderboard(dash.home, 5, "page", ["financebench"]).is_empty()


def test_retrieved_chunks_hits_match_the_gold_pages(dash: DashHome) -> None:
    """Hit marks against a reference computed here from the lake: a chunk hits when it covers a gold page of the
    gold document."""
    lake = Lake(dash.home)
    qid = dash.facts["flip_question"]
    evidence = lake.read("evidence").filter(pl.col("question_id") == qid)
    gold = {(r["doc_id"], r["page_number"]) for r in evidence.iter_rows(named=True)}
    results = lake.read("retrieval_results").filter(pl.col("question_id") == qid)
    expected = {
        (r["run_id"], r["rank"]): any(d == r["doc_id"] and r["page_start"] <= p <= (r["page_end"] or r["page_start"])
                                      for d, p in gold)
        for r in results.iter_rows(named=True)
    }
    chunks = drilldown.retrieved_chunks(dash.home, DATASET, qid)
    got = {(r["run_id"], r["rank"]): r["chunk_hit"] for r in chunks.iter_rows(named=True)}
    assert got == expected and any(got.values()) and chunks["text"].null_count() == 0
    # bm25, oracle_page and the sweep's three new runs
    sweep_runs = set(read_mart(dash.home, "mart_sweep_runs")["run_id"])
    assert set(chunks["run_id"]) == {dash.facts["bm25"], dash.facts["oracle"]} | sweep_runs
    assert len(sweep_runs - {dash.facts["bm25"]}) == 3
    # doc hits: the chunk's document is the gold document
    assert chunks.filter(pl.col("doc_hit"))["doc_id"].unique().to_list() == sorted({d for d, _ in gold})
    # page-level qrels: a chunk hits exactly when it covers a gold page; ours are ranked by rank
    assert chunks["page_hit"].to_list() == chunks["chunk_hit"].to_list()
    assert chunks["result_position"].to_list() == chunks["rank"].to_list()


def test_answers_of_a_question_across_runs(dash: DashHome) -> None:
    qid = dash.facts["flip_question"]
    answers = drilldown.answers(dash.home, DATASET, qid)
    assert set(answers["run_id"]) == {dash.facts["closed"], dash.facts["rag"]}
    gold = drilldown.questions(dash.home).filter(pl.col("question_id") == qid)["reference_answers"][0][0]
    rag = answers.filter(pl.col("run_id") == dash.facts["rag"]).row(0, named=True)
    assert rag["answer"] == gold and rag["exact_match"] == 1.0
    closed = answers.filter(pl.col("run_id") == dash.facts["closed"]).row(0, named=True)
    assert closed["answer"].startswith("fake answer") and closed["exact_match"] == 0.0


def test_run_vs_run_finds_the_flipped_question(dash: DashHome) -> None:
    if not model_exists("fct_question_metric_scores"):
        pytest.skip("fct_question_metric_scores is not in models/ yet")
    closed, rag, qid = dash.facts["closed"], dash.facts["rag"], dash.facts["flip_question"]
    diffs = run_vs_run.run_vs_run(dash.home, closed, rag, "exact_match", None, None)
    assert diffs.filter(pl.col("flipped"))["question_id"].to_list() == [qid]
    flip = diffs.row(0, named=True)  # flips sort first
    assert (flip["question_id"], flip["value_a"], flip["value_b"], flip["diff"], flip["passes_in"]) == \
        (qid, 0.0, 1.0, 1.0, "b only")
    assert flip["question"].startswith("What")
    # every question scored by both runs is there, the others did not move
    assert diffs.height == 12 and diffs.filter(~pl.col("flipped"))["diff"].abs().max() == 0.0
    # passing is the registry's rule: exact_match's pass threshold, higher is better; B wins the flipped question
    registry = common.metric_registry(dash.home).filter(pl.col("metric") == "exact_match").row(0, named=True)
    assert set(diffs["pass_threshold"]) == {registry["pass_threshold"]} and registry["higher_is_better"]
    assert diffs["passes_b"].to_list() == [v >= registry["pass_threshold"] for v in diffs["value_b"]]
    assert diffs["passes_a"].to_list() == [v >= registry["pass_threshold"] for v in diffs["value_a"]]
    assert flip["outcome"] == "win" and set(diffs.filter(~pl.col("flipped"))["outcome"]) == {"tie"}


def test_missing_marts_read_as_no_data(tmp_path: Path) -> None:
    assert leaderboard.retrieval_leaderboard(tmp_path, 5) is None
    assert judge_agreement.judge_agreement(tmp_path) is None
    assert drilldown.retrieved_chunks(tmp_path, "d", "q") is None
    assert leaderboard.datasets(tmp_path) == []


def test_exposures_in_dbt_docs_and_no_publish(dash: DashHome) -> None:
    """`dbt docs generate` works on a built home and its manifest lists one exposure per page with its models;
    `finrag build --no-publish` leaves the exports as they were."""
    home = dash.docs_home
    # +dim_documents: the staging views too, so they read this copy's lake
    # (views hold the lake path they were built with)
    run_finrag(home, "build", "--no-publish", "--select", "+dim_documents", "--quiet")
    manifest_before = (home / "exports" / "marts" / "_manifest.json").read_text()
    from python_jobs.warehouse.dbt_runner import run_dbt
    assert run_dbt(["docs", "generate"], home=home, quiet=True) == 0
    target = home / "dbt_target"
    assert (target / "catalog.json").exists() and (target / "index.html").exists()
    manifest = json.loads((target / "manifest.json").read_text())
    exposures = {e["name"]: e for e in manifest["exposures"].values()}
    assert set(exposures) == {f"dashboard_{p}" for p in PAGES}
    for page in PAGES:
        e = exposures[f"dashboard_{page}"]
        assert e["type"] == "dashboard" and e["url"] == f"http://localhost:8501/{page}"
    deps = {name: set(e["depends_on"]["nodes"]) for name, e in exposures.items()}
    # every page reads marts and nothing else: no lake source, no staging or intermediate model
    assert all(node.startswith("model.finrag.") and node.split(".")[-1] in mart_names_in_project()
               for nodes in deps.values() for node in nodes), deps
    assert deps["dashboard_leaderboard"] >= {"model.finrag.mart_retrieval_board",
                                              "model.finrag.mart_generation_leaderboard",
                                              "model.finrag.mart_judge_leaderboard", "model.finrag.dim_runs"}
    assert deps["dashboard_overview"] == {"model.finrag.mart_datasets", "model.finrag.dim_runs"}
    # empty states name their cause from mart_datasets (and the judge leaderboard's failures)
    assert deps["dashboard_judge_agreement"] == {"model.finrag.mart_judge_agreement",
                                                 "model.finrag.mart_judge_confusion",
                                                 "model.finrag.mart_judge_disagreements",
                                                 "model.finrag.mart_judge_trust",
                                                 "model.finrag.mart_datasets", "model.finrag.mart_judge_leaderboard",
                                                 "model.finrag.mart_human_label_leaderboard",
                                                 "model.finrag.mart_human_label_by_slice",
                                                 "model.finrag.dim_slice_dimensions", "model.finrag.dim_runs"}
    assert "model.finrag.fct_judge_scores" in deps["dashboard_drilldown"]
    assert deps["dashboard_costs"] == {"model.finrag.mart_llm_costs", "model.finrag.mart_datasets"}
    assert deps["dashboard_qa_generation"] == {"model.finrag.mart_qa_generation_acceptance",
                                               "model.finrag.mart_qa_generation_inspection_agreement",
                                               "model.finrag.mart_datasets"}
    assert "model.finrag.mart_judge_by_slice" in deps["dashboard_judged"]
    # every page that shows a judged mean shows how far it can be trusted
    assert all("model.finrag.mart_judge_trust" in deps[f"dashboard_{page}"]
               for page in ("leaderboard", "judged", "judge_agreement"))
    # every mart has a page: one reads it, or a mart a page reads is built from it (mart_retrieval_leaderboard
    # feeds mart_retrieval_board); but a deprecated old name (models/marts/deprecated/: a view of the renamed mart,
    # kept for one release), which no page reads
    shown = set().union(*deps.values())
    upstream: set[str] = set()
    todo = list(shown)
    while todo:
        for parent in manifest["parent_map"].get(todo.pop(), []):
            if parent not in upstream:
                upstream.add(parent)
                todo.append(parent)
    marts = {f"model.finrag.{m}" for m in mart_names_in_project()
             if m.startswith("mart_") and not manifest["nodes"][f"model.finrag.{m}"].get("deprecation_date")}
    assert marts <= shown | upstream, sorted(marts - shown - upstream)
    # the drill-down's hit marks are the metrics' own (fct_retrieval_results_judged, through mart_drilldown_results),
    # never re-derived from the lake
    assert "model.finrag.mart_drilldown_results" in deps["dashboard_drilldown"]
    assert "model.finrag.fct_retrieval_results_judged" in manifest["parent_map"]["model.finrag.mart_drilldown_results"]
    assert "model.finrag.mart_oracle_gap" in deps["dashboard_slices"]
    assert deps["dashboard_heatmap"] == {"model.finrag.mart_topic_task_matrix", "model.finrag.dim_runs",
                                         "model.finrag.mart_datasets"}
    # run vs run: the pairs' statistics and their questions, both over the one selection and pairing of runs
    assert deps["dashboard_run_vs_run"] == {"model.finrag.mart_run_comparison", "model.finrag.mart_run_pair_questions",
                                            "model.finrag.dim_runs", "model.finrag.mart_datasets"}
    # the statistics once per pair (fct_run_comparisons), the questions (fct_run_pair_scores): both over
    # fct_run_pairs' one selection of pairs
    assert "model.finrag.fct_run_comparisons" in manifest["parent_map"]["model.finrag.mart_run_comparison"]
    assert "model.finrag.fct_run_pair_scores" in manifest["parent_map"]["model.finrag.mart_run_pair_questions"]
    for model in ("fct_run_comparisons", "fct_run_pair_scores"):
        assert "model.finrag.fct_run_pairs" in manifest["parent_map"][f"model.finrag.{model}"]
    # the leaderboard's "vs the best" and the sweep page: mart_run_vs_best, the sweep's runs joined to it in a mart
    assert "model.finrag.mart_run_vs_best" in deps["dashboard_leaderboard"]
    assert "model.finrag.mart_run_comparison" not in deps["dashboard_leaderboard"]
    assert deps["dashboard_sweeps"] >= {"model.finrag.mart_sweep_runs", "model.finrag.mart_sweep_parameter_effects",
                                        "model.finrag.mart_sweep_run_results"}
    assert {"model.finrag.mart_sweep_runs", "model.finrag.mart_run_vs_best"} <= set(
        manifest["parent_map"]["model.finrag.mart_sweep_run_results"])
    assert (home / "exports" / "marts" / "_manifest.json").read_text() == manifest_before


def test_run_labels_say_what_each_run_is(dash: DashHome) -> None:
    labels = common.run_labels(dash.home)
    f = dash.facts
    assert labels[f["bm25"]] == "bm25 · full · k=5 · split test"
    assert labels[f["oracle"]] == "bm25 · oracle_page · k=5 · split test"
    assert labels[f["closed"]] == "closed_book · fake-model · split test"
    assert labels[f["rag"]] == "rag · fake-model · split test over [bm25 · full · k=5 · split test]"
    assert labels[f["judge"]] == "judge fake-model of [closedBook · gpt-4 · all splits]"
    assert common.run_label(labels, f["bm25"]) == f"bm25 · full · k=5 · split test  ({f['bm25']})"
    assert common.run_label(labels, "unknown") == "unknown"


def test_granularities_finest_first_with_data(dash: DashHome) -> None:
    # the synthetic corpus has chunk-level evidence, so every granularity; financebench has no retrieval run here
    assert leaderboard.retrieval_granularities(dash.home) == ["chunk", "page", "doc"]
    assert leaderboard.retrieval_granularities(dash.home, ["financebench"]) == []


def test_versus_best_is_the_mart_oriented_run_minus_best(dash: DashHome) -> None:
    """The leaderboard's "vs the best": mart_run_vs_best's rows of every run of the family, uncapped - the best
    run tied with itself and without a difference, the others run − best. The oracle-page run scores highest on nDCG
    but saw the gold pages: an upper bound, marked, never the best - the best is the highest full-condition run (ties
    to more questions, then the smaller id), in mart_run_families too (what the gate's `baseline: best` reads)."""
    f = dash.facts
    rows = leaderboard.versus_best(dash.home, "retrieval", "ndcg", "page", 5, [DATASET])
    mart = read_mart(dash.home, "mart_run_vs_best").filter(
        (pl.col("metric") == "ndcg") & (pl.col("granularity") == "page") & (pl.col("k") == 5)
        & (pl.col("dataset") == DATASET))
    assert sorted(rows["run_id"]) == sorted(mart["run_id"]) and rows.height == 5  # bm25, oracle, the sweep's 3
    assert rows["rank_in_family"].to_list() == sorted(rows["rank_in_family"])
    condition = dict(read_mart(dash.home, "dim_runs")
                     .select("run_id", "condition").rows())
    assert common.oracle_bounds(dash.home) & set(rows["run_id"]) == {f["oracle"]}
    full = [r for r in rows.iter_rows(named=True) if condition[r["run_id"]] == "full"]
    assert len(full) == 4
    expected = min(full, key=lambda r: (-r["mean"], -r["n_questions"], r["run_id"]))["run_id"]
    best = rows.filter(pl.col("is_best")).row(0, named=True)
    assert (best["run_id"], condition[best["run_id"]], best["is_oracle_bound"], best["tied_with_best"],
            best["delta_vs_best"]) == (expected, "full", False, True, None)
    oracle = rows.filter(pl.col("run_id") == f["oracle"]).row(0, named=True)
    assert oracle["is_oracle_bound"] and not oracle["is_best"] and oracle["best_run_id"] == expected
    assert oracle["mean"] > best["mean"] and oracle["delta_vs_best"] > 0  # the bound is above every contender
    pair = read_mart(dash.home, "mart_run_comparison").filter(
        (pl.col("metric") == "ndcg") & (pl.col("granularity") == "page") & (pl.col("k") == 5)
        & (pl.col("run_a") == expected) & (pl.col("run_b") == f["oracle"])).row(0, named=True)
    assert (oracle["delta_vs_best"], oracle["ci_low"], oracle["ci_high"], oracle["p_holm"]) == pytest.approx(
        (pair["delta"], pair["ci_low"], pair["ci_high"], pair["p_holm"]))
    assert oracle["tied_with_best"] == pair["tied_with_best"]
    family = read_mart(dash.home, "mart_run_families").filter(
        (pl.col("metric") == "ndcg") & (pl.col("granularity") == "page") & (pl.col("k") == 5)
        & (pl.col("dataset") == DATASET) & (pl.col("run_kind") == "retrieval")).row(0, named=True)
    assert (family["best_run_id"], family["n_runs"], family["n_oracle_bound_runs"]) == (expected, 5, 1)
    assert leaderboard.versus_best(dash.home, "retrieval", "ndcg", "page", 5, ["financebench"]).is_empty()


def test_the_gates_best_baseline_is_the_best_full_condition_run(dash: DashHome, tmp_path: Path) -> None:
    """`baseline: best` reads mart_run_families: on a family whose highest nDCG@5 run is the oracle-page bound, the
    gate compares the candidate with the best full-condition run, never with the bound."""
    family = read_mart(dash.home, "mart_run_families").filter(
        (pl.col("metric") == "ndcg") & (pl.col("granularity") == "page") & (pl.col("k") == 5)
        & (pl.col("dataset") == DATASET) & (pl.col("run_kind") == "retrieval")).row(0, named=True)
    condition = dict(read_mart(dash.home, "dim_runs").select("run_id", "condition").rows())
    assert condition[family["best_run_id"]] == "full" and family["n_oracle_bound_runs"] == 1
    gate_file = tmp_path / "gate.yaml"
    gate_file.write_text(f"dataset: {DATASET}\nkind: retrieval\nbaseline: best\nmin_questions: 2\n"
                         "metrics:\n  - {metric: ndcg, granularity: page, k: 5, margin: 0.05}\n")
    out = run_finrag(dash.home, "gate", str(gate_file), "--candidate", dash.facts["oracle"], "--format", "json",
                     check=False)
    assert out.returncode in (0, 1), out.stderr
    assert json.loads(out.stdout)["baselines"] == [family["best_run_id"]]


def test_sweep_run_results_are_the_sweep_runs_with_their_vs_best_rows(dash: DashHome) -> None:
    """mart_sweep_run_results (what the sweep page lists) holds each sweep run's mart_sweep_runs row with its
    mart_run_vs_best row, and its comparison with the sweep's baseline."""
    sweep, baseline = dash.facts["sweep"], dash.facts["bm25"]
    runs = sweeps.sweep_run_results(dash.home, sweep, "page_rec", "page", 5)
    sweep_runs = read_mart(dash.home, "mart_sweep_runs").filter(
        (pl.col("sweep_id") == sweep) & (pl.col("metric") == "page_rec") & (pl.col("k") == 5))
    versus = read_mart(dash.home, "mart_run_vs_best").filter((pl.col("metric") == "page_rec") & (pl.col("k") == 5))
    assert sorted(runs["run_id"]) == sorted(sweep_runs["run_id"]) and runs.height == 4
    for r in runs.iter_rows(named=True):
        own = sweep_runs.filter(pl.col("run_id") == r["run_id"]).row(0, named=True)
        vs = versus.filter(pl.col("run_id") == r["run_id"]).row(0, named=True)
        assert (r["setting"], r["mean"], r["is_best_in_sweep"]) == (own["setting"], own["mean"], own["is_best_run"])
        assert (r["best_run_id"], r["tied_with_best"], r["p_tukey"]) == (vs["best_run_id"], vs["tied_with_best"],
                                                                         vs["p_tukey"])
        assert r["baseline_run_id"] == baseline
        if r["run_id"] == baseline:
            assert r["is_baseline"] and r["delta_vs_baseline"] is None
        else:
            pair = read_mart(dash.home, "mart_run_comparison").filter(
                (pl.col("run_a") == baseline) & (pl.col("run_b") == r["run_id"]) & (pl.col("metric") == "page_rec")
                & (pl.col("k") == 5)).row(0, named=True)
            assert r["delta_vs_baseline"] == pytest.approx(pair["delta"])
    effects = sweeps.sweep_parameter_effects(dash.home, sweep, "page_rec", "page", 5)
    assert effects.filter(pl.col("parameter") == "chunk_size")["value"].to_list() == ["128", "256"]
    assert sweeps.sweeps(dash.home).rows() == [(sweep, DATASET, "retrieval")]


def test_metric_against_k(dash: DashHome) -> None:
    curves = leaderboard.retrieval_metric_by_k(dash.home, "page_rec", "chunk")  # page_rec: at its own granularity
    mart = read_mart(dash.home, "mart_retrieval_leaderboard").filter(
        (pl.col("metric") == "page_rec") & (pl.col("k") > 0))
    assert curves.height == mart.height and 0 not in curves["k"].to_list()
    one = curves.filter((pl.col("run_id") == dash.facts["bm25"]) & (pl.col("k") == 5))["mean"].item()
    assert one == mart.filter((pl.col("run_id") == dash.facts["bm25"]) & (pl.col("k") == 5))["mean"].item()


def test_empty_states_name_the_real_cause(dash: DashHome, tmp_path: Path) -> None:
    reason, command = diagnosis.diagnose(tmp_path, "retrieval")
    assert "nothing is published" in reason and command.startswith("finrag ingest") and "finrag build" in command
    # financebench has documents but no PDFs, so no chunk
    reason, command = diagnosis.diagnose(dash.home, "retrieval", ["financebench"])
    assert "no chunks" in reason and command.startswith("finrag chunk --dataset financebench")
    reason, command = diagnosis.diagnose(dash.home, "judged", ["demo_synthetic"])
    assert "no judge run" in reason and "finrag judge" in command
    counts = common.dataset_counts(dash.home)
    synthetic = counts.filter(pl.col("dataset") == DATASET).row(0, named=True)
    # bm25, oracle_page and the sweep's three new runs
    assert synthetic["n_retrieval_runs"] == 5 and synthetic["n_answer_runs"] == 2 and synthetic["n_pages"] > 0
    assert counts.filter(pl.col("dataset") == "financebench")["n_judge_runs"].item() == 2  # FakeLLM's and landed


def test_judge_trust_is_the_mart_with_its_three_states(dash: DashHome) -> None:
    """common.judge_trust: mart_judge_trust's rows, filtered by judge run, metric and dataset; the home holds each
    state once (tests/support/dashboard_home.py), and the calibrated one's n's are the lake's: the judge run's 30
    answers, 12 of them in the spot-check label set."""
    f = dash.facts
    trust = common.judge_trust(dash.home)
    mart = read_mart(dash.home, "mart_judge_trust")
    key = ["judge_run_id", "metric", "label_set"]
    assert trust.sort(key).equals(mart.select(trust.columns).sort(key))
    assert dict(zip(zip(trust["judge_run_id"], trust["metric"], strict=True), trust["trust_state"], strict=True)) == {
        (f["judge"], "correctness"): "no_better_than_chance", (f["landed_judge"], "correctness"): "calibrated",
        (f["landed_judge"], "faithfulness"): "uncalibrated"}
    lake = Lake(dash.home)
    judged = lake.read("judgments", where={"judge_run_id": f["landed_judge"]}).filter(
        pl.col("metric") == "correctness")["question_id"]
    labelled = lake.read("human_labels", where={"label_set": f["spot_check"]})["question_id"].to_list()
    calibrated = common.judge_trust(dash.home, [f["landed_judge"]], ["correctness"], ["financebench"]).row(
        0, named=True)
    assert (calibrated["n_labelled"], calibrated["n_unlabelled"]) == (
        judged.is_in(labelled).sum(), (~judged.is_in(labelled)).sum()) == (12, 18)
    assert calibrated["calibrated_lower"] < calibrated["calibrated_mean"] < calibrated["calibrated_upper"]
    assert common.judge_trust(dash.home, [f["landed_judge"]], ["faithfulness"])["trust_state"].to_list() == \
        ["uncalibrated"]
    assert common.judge_trust(dash.home, datasets_=[DATASET]).is_empty()


def test_llm_costs_are_the_ledger_summed(dash: DashHome) -> None:
    """mart_llm_costs against the lake's llm_calls summed here: one row per job run, purpose and model."""
    ledger = Lake(dash.home).read("llm_calls").with_columns(
        pl.col("batch_id").str.replace(r"-[0-9]{5}$", "").alias("job_run_id"))
    is_cache_row = (pl.col("cache_hits").fill_null(0) > 0) & (pl.col("attempts") == 0)
    calls, cache_rows = ledger.filter(~is_cache_row), ledger.filter(is_cache_row)
    board = costs.llm_costs(dash.home)
    assert board["n_calls"].sum() == calls.height > 0
    assert board["n_cached_calls"].sum() == cache_rows["cache_hits"].sum()
    assert board.height == ledger.select("job_run_id", "purpose", "model").unique().height
    expected = calls.group_by("job_run_id", "purpose", "model").agg(
        pl.len().alias("n_calls"), pl.col("error").is_not_null().sum().alias("n_failed"),
        pl.col("prompt_tokens").sum(), pl.col("completion_tokens").sum(),
        pl.col("latency_ms").median().alias("p50"))
    for e in expected.iter_rows(named=True):
        row = board.filter((pl.col("job_run_id") == e["job_run_id"]) & (pl.col("purpose") == e["purpose"])).row(
            0, named=True)
        assert (row["n_calls"], row["n_failed"], row["prompt_tokens"], row["completion_tokens"]) == \
            (e["n_calls"], e["n_failed"], e["prompt_tokens"], e["completion_tokens"])
        assert row["latency_p50_ms"] == pytest.approx(e["p50"], abs=1e-3)
        assert row["cost_usd"] is None  # the fake server's model has no price in the seed
    jobs = dict(board.group_by("job").agg(pl.col("n_calls").sum()).rows())
    assert set(jobs) == {"answer", "judge"} and jobs["judge"] == 30  # the judge run judged 30 answers once each
    judge = board.filter(pl.col("job") == "judge").row(0, named=True)
    assert (judge["job_subject"], judge["purpose"], judge["model"]) == (dash.facts["judged_run"], "judge", "fake-model")


def test_finrag_ls_prints_the_published_marts(dash: DashHome, tmp_path: Path) -> None:
    out = json.loads(run_finrag(dash.home, "ls", "--format", "json").stdout)
    datasets = {d["dataset"]: d for d in out["datasets"]}
    synthetic = datasets[DATASET]
    assert (synthetic["n_questions"], synthetic["n_with_reference"], synthetic["n_retrieval_runs"],
            synthetic["n_answer_runs"], synthetic["n_judge_runs"]) == (12, 12, 5, 2, 0)
    assert (datasets["financebench"]["n_pages"], datasets["financebench"]["n_judge_runs"]) == (0, 2)
    runs = {r["run_id"]: r for r in out["runs"]}
    f = dash.facts
    sweep_runs = set(read_mart(dash.home, "mart_sweep_runs")["run_id"])
    assert {f["bm25"], f["oracle"], f["closed"], f["rag"], f["judge"], f["landed_judge"], *f["fb_runs"]} \
        | sweep_runs == set(runs)
    assert (runs[f["bm25"]]["kind"], runs[f["bm25"]]["label"]) == ("retrieval", "bm25 · full · k=5 · split test")
    assert (runs[f["judge"]]["kind"], runs[f["judge"]]["dataset"]) == ("judge", "financebench")
    table = run_finrag(dash.home, "ls").stdout
    assert "Datasets" in table and "Runs" in table and "bm25 · full · k=5 · split test" in table
    # an empty home: a note, no lake created
    empty = tmp_path / "empty"
    proc = run_finrag(empty, "ls")
    assert proc.stdout == "" and "nothing is published" in proc.stderr and not (empty / "lake").exists()


def test_evidence_overlap_curves_are_the_mart_unpivoted(dash: DashHome) -> None:
    curves = leaderboard.evidence_overlap(dash.home)
    mart = read_mart(dash.home, "mart_retrieval_evidence_overlap").filter(
        pl.col("k") > 0)
    assert set(curves["metric"]) == {"max_bleu", "max_rouge_l"} and curves.height == 2 * mart.height
    for m in mart.iter_rows(named=True):
        got = curves.filter((pl.col("run_id") == m["run_id"]) & (pl.col("k") == m["k"]))
        assert dict(zip(got["metric"], got["mean"], strict=True)) == {"max_bleu": m["mean_max_bleu"],
                                                                       "max_rouge_l": m["mean_max_rouge_l"]}


def test_a_dataset_without_pages_is_named(dash: DashHome) -> None:
    reason, _ = diagnosis.diagnose(dash.home, "page", ["financebench"])
    assert reason.startswith("financebench has no pages") and "pick chunk or doc" in reason


@pytest.fixture(scope="module")
def empty_states(dash: DashHome, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A copy of the dashboard home with two causes of an empty state landed, built once for both tests below:
    - a judge run of the synthetic RAG answers whose every judgment failed (an endpoint that never answered);
    - a dataset whose questions carry no reference answer (a retrieval benchmark), answered by a run.
    The two touch disjoint datasets and runs."""
    from python_jobs.core.contracts import contract

    home = copy_home(dash.home, tmp_path_factory.mktemp("empty_states") / "warehouse")
    judge_run = f"{dash.facts['rag']}-judge-failed"
    run = contract("judge_runs").frame([{"judge_run_id": judge_run, "answer_run_id": dash.facts["rag"],
                                         "judge_model": "fake-model", "rubric_version": "judge_correctness_v1@x",
                                         "metrics": "correctness", "params": "{}"}])
    failed = contract("judgments").frame([
        {"judge_run_id": judge_run, "question_id": q, "metric": "correctness", "rubric": "judge_correctness_v1@x",
         "status": "failed", "error": "APIConnectionError: Connection refused"}
        for q in ("finrag_synth_0_00001", "finrag_synth_0_00002")])
    questions = contract("questions").frame([
        {"question_id": q, "dataset": "noref", "split": "test", "question": f"question {q}?", "source": "imported"}
        for q in ("q1", "q2")])
    answer_run = contract("generation_runs").frame([{"run_id": "noref-closed", "dataset": "noref", "model": "m",
                                                     "eval_mode": "closed_book", "params": "{}"}])
    answers = contract("answers").frame([{"run_id": "noref-closed", "question_id": q, "answer": "a"}
                                         for q in ("q1", "q2")])
    Lake(home).land([("judge_runs", judge_run, run), ("judgments", judge_run, failed),
                     ("questions", "noref", questions), ("generation_runs", "noref-closed", answer_run),
                     ("answers", "noref-closed", answers)])
    # the dashboard reads what the last build published
    run_finrag(home, "build", "--all", "--quiet", "--exclude", "resource_type:test", "resource_type:unit_test")
    return home, judge_run


def test_every_judgment_failed_is_named_with_its_error(dash: DashHome, empty_states: tuple[Path, str]) -> None:
    """A judge run whose every judgment failed: the empty state says so, with the first error and the command that
    retries; the leaderboard warns about it and the drill-down shows each judgment's error."""
    home, judge_run = empty_states
    reason, command = diagnosis.diagnose(home, "judged", [DATASET])
    assert reason == (f"every correctness judgment of {judge_run} failed (2; first error: APIConnectionError: "
                      "Connection refused)")
    assert command.startswith(f"finrag judge --answer-run {dash.facts['rag']} --metrics correctness")
    verdicts = drilldown.judge_verdicts(home, DATASET, "finrag_synth_0_00001")
    assert verdicts.select("judge_run_id", "status", "error").rows() == [
        (judge_run, "failed", "APIConnectionError: Connection refused")]
    board = leaderboard.judge_leaderboard(home, [DATASET]).row(0, named=True)
    assert (board["judge_run_id"], board["mean"], board["n_ok"], board["n_failed"]) == (judge_run, None, 0, 2)
    assert (board["all_failed"], board["first_error"]) == (True, "APIConnectionError: Connection refused")


def test_questions_without_reference_answers_are_named(empty_states: tuple[Path, str]) -> None:
    """A dataset whose questions carry no reference answer answered by a run: no lexical metric can score it, and
    the empty state says so instead of "run finrag build"."""
    home, _ = empty_states
    reason, command = diagnosis.diagnose(home, "generation", ["noref"])
    assert reason.startswith("the questions of noref have no reference answers") and "finrag judge" in command
    assert common.dataset_counts(home).filter(pl.col("dataset") == "noref")["n_with_reference"].item() == 0
