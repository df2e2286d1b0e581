"""Ragas and DeepEval files in and out, through the real CLI and a real `dbt build`, on files the real libraries
wrote (tests/fixtures/external_tools/, made by bench/external_tools/make_fixtures.py in a venv of their own:
CI never builds it). One built home serves the module; bad input gets fresh homes."""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import krippendorff
import numpy as np
import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.answers_homes import questions_home
from support.cli import MODELS_ONLY, run_finrag
from support.paths import PROJECT
from support.shared_home import copy_home

FIXTURES = PROJECT / "tests" / "fixtures" / "external_tools"
RAGAS_RESULTS = FIXTURES / "ragas" / "results.csv"
RAGAS_DATASET = FIXTURES / "ragas" / "evaluation_dataset.jsonl"
EXPERIMENT = FIXTURES / "ragas" / "experiments" / "gpt4_oracle_numbers.csv"
DEEPEVAL_RUN = FIXTURES / "deepeval" / "latest_run_full.json"
RAGAS_METRICS = ["non_llm_context_precision_with_reference", "non_llm_context_recall", "id_based_context_precision",
                 "id_based_context_recall", "rouge_score(mode=fmeasure)"]
SAMPLE_KEYS = ("user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids",
               "reference_context_ids", "response", "reference")


def ragas_rows(path: Path) -> list[dict]:
    """A ragas CSV as ragas' users read it back (lists from their Python reprs)."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for k in ("retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids"):
            if r.get(k):
                r[k] = ast.literal_eval(r[k])
    return rows


def sql(home: Path, query: str) -> list[dict]:
    return json.loads(run_finrag(home, "sql", query, "--format", "json").stdout)


def repeated_results(path: Path) -> Path:
    """RAGAS_RESULTS as two evaluations of its samples: repeat 1 its scores, repeat 2 the same but ROUGE, off by
    0.02 / 0.01 (a noisy metric), in one JSONL file with a `repeat` column (repeat 2's rows first)."""
    rows = ragas_rows(RAGAS_RESULTS)
    out = []
    for repeat in (2, 1):
        for i, r in enumerate(rows):
            row = {k: r[k] for k in SAMPLE_KEYS if r.get(k)} | {m: float(r[m]) for m in RAGAS_METRICS}
            if repeat == 2:
                row["rouge_score(mode=fmeasure)"] += 0.02 if i % 2 == 0 else 0.01
            out.append(row | {"repeat": repeat})
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    # the FinanceBench questions: a copy of the session's shared ingest (support/answers_homes.py)
    home = copy_home(questions_home(tmp_path_factory), tmp_path_factory.mktemp("external") / "warehouse")
    ids = {
        "ragas": run_finrag(home, "ingest", "ragas", str(RAGAS_RESULTS), "--dataset", "financebench").stdout.strip(),
        "experiment": run_finrag(home, "ingest", "ragas", str(FIXTURES / "ragas"), "--dataset", "financebench",
                                 "--metric", "rouge_score=0..1", "--metric", "numbers_match=0..1").stdout.strip(),
        "deepeval": run_finrag(home, "ingest", "deepeval", str(DEEPEVAL_RUN), "--dataset",
                               "financebench").stdout.strip(),
    }
    # the round trip: each run exported in its tool's format and ingested again under another run id
    exports = tmp_path_factory.mktemp("exports")
    run_finrag(home, "export-run", "--run-id", ids["ragas"], "--format", "ragas", "--out", str(exports / "r.jsonl"))
    run_finrag(home, "export-run", "--run-id", ids["ragas"], "--format", "ragas", "--out", str(exports / "r.csv"))
    run_finrag(home, "export-run", "--run-id", ids["deepeval"], "--format", "deepeval", "--out",
               str(exports / "d.json"))
    ids["ragas_again"] = run_finrag(home, "ingest", "ragas", str(exports / "r.jsonl"), "--dataset", "financebench",
                                    "--run-id", "results_again").stdout.strip()
    ids["ragas_csv_again"] = run_finrag(home, "ingest", "ragas", str(exports / "r.csv"), "--dataset",
                                        "financebench", "--run-id", "results_csv_again").stdout.strip()
    # run B of the DeepEval comparison: the export with one Unsupported Numbers score lowered (lower is better)
    run = json.loads((exports / "d.json").read_text())
    changed = next(m for c in run["testCases"] for m in c["metricsData"]
                   if m["name"] == "Unsupported Numbers" and m.get("score", 0) > 0.5)
    changed.update(score=0.25, success=True)
    (exports / "d_better.json").write_text(json.dumps(run))
    ids["deepeval_again"] = run_finrag(home, "ingest", "deepeval", str(exports / "d.json"), "--dataset",
                                       "financebench", "--run-id", "deepeval_again").stdout.strip()
    ids["deepeval_better"] = run_finrag(home, "ingest", "deepeval", str(exports / "d_better.json"), "--dataset",
                                        "financebench", "--run-id", "deepeval_better").stdout.strip()
    # the results evaluated twice (repeat 2's ROUGE a little off), numbered by a `repeat` column; exported, and in
    ids["repeated"] = run_finrag(home, "ingest", "ragas", str(repeated_results(exports / "repeated.jsonl")),
                                 "--dataset", "financebench").stdout.strip()
    run_finrag(home, "export-run", "--run-id", "repeated-ragas", "--format", "ragas", "--out",
               str(exports / "rep.jsonl"))
    ids["repeated_again"] = run_finrag(home, "ingest", "ragas", str(exports / "rep.jsonl"), "--dataset",
                                       "financebench", "--run-id", "repeated_again").stdout.strip()
    run_finrag(home, "build", *MODELS_ONLY)
    return {"home": home, "ids": ids, "exports": exports}


def test_runs_land_with_the_files_scores(built: dict) -> None:
    home, ids = built["home"], built["ids"]
    assert ids["ragas"] == "results-ragas" and ids["deepeval"] == "latest_run_full-deepeval"
    lake = Lake(home)
    rows = ragas_rows(RAGAS_RESULTS)
    questions = lake.read("questions", where={"dataset": "financebench"})
    qid = dict(zip(questions["question"], questions["question_id"], strict=True))
    assert questions.height == 150  # every sample matched a FinanceBench question by its text: none created
    answers = lake.read("answers", where={"run_id": "results"})
    assert sorted(answers["question_id"]) == sorted(qid[r["user_input"]] for r in rows)
    for r in rows:  # the retrieved contexts are the answer's passages, with the tool's ids
        a = answers.filter(pl.col("question_id") == qid[r["user_input"]]).row(0, named=True)
        assert a["answer"] == r["response"]
        passages = json.loads(a["passages"])
        assert [p["text"] for p in passages] == r["retrieved_contexts"]
        assert [p["context_id"] for p in passages] == r["retrieved_context_ids"]
    j = lake.read("judgments", where={"judge_run_id": "results-ragas"})
    assert j.height == 6 * 5 and set(j["status"]) == {"ok"}
    for r in rows:
        for m in RAGAS_METRICS:
            got = j.filter((pl.col("question_id") == qid[r["user_input"]])
                           & (pl.col("metric") == "ragas_" + m.replace("(", "_").replace("=", "_").rstrip(")")))
            assert got["raw_score"].to_list() == [pytest.approx(float(r[m]), abs=1e-12)]
    # DeepEval: every metricsData entry a judgment; the metric that raised is failed with DeepEval's error
    run = json.loads(DEEPEVAL_RUN.read_text())
    d = lake.read("judgments", where={"judge_run_id": "latest_run_full-deepeval"})
    assert d.height == sum(len(c["metricsData"]) for c in run["testCases"]) == 18
    failed = d.filter(pl.col("status") == "failed")
    assert failed["metric"].to_list() == ["deepeval_unsupported_numbers"]
    assert failed["error"].to_list() == ["ValueError: Unsupported Numbers needs the retrieval_context of the test case"]
    geval = {c["input"]: m for c in run["testCases"] for m in c["metricsData"] if m["name"] == "Correctness [GEval]"}
    for r in d.filter(pl.col("metric") == "deepeval_correctness_geval").iter_rows(named=True):
        text = questions.filter(pl.col("question_id") == r["question_id"])["question"][0]
        assert (r["raw_score"], r["rationale"]) == (geval[text]["score"], geval[text]["reason"])
    # the GEval and the custom metric were declared with the run, in the directions their verdicts show
    decl = {r["metric"]: r for r in lake.read("metric_declarations").iter_rows(named=True)
            if r["judge_run_id"] == "latest_run_full-deepeval"}
    assert set(decl) == {"deepeval_correctness_geval", "deepeval_unsupported_numbers"}  # Exact Match is the seed's
    assert decl["deepeval_correctness_geval"]["higher_is_better"] is True
    assert decl["deepeval_unsupported_numbers"]["higher_is_better"] is False
    assert decl["deepeval_correctness_geval"]["source_name"] == "Correctness [GEval]"


def test_registry_leaderboard_and_slices_show_external_metrics(built: dict) -> None:
    home = built["home"]
    registry = {r["metric"]: r for r in sql(home, "select * from dim_metrics where judge_family in "
                                                  "('ragas', 'deepeval')")}
    assert registry["deepeval_unsupported_numbers"]["higher_is_better"] is False
    assert registry["deepeval_correctness_geval"]["source_name"] == "Correctness [GEval]"
    assert registry["ragas_numbers_match"]["scale_max"] == 1.0
    assert registry["ragas_non_llm_context_recall"]["family"] == "judged"
    seed_max = max(r["display_order"] for r in sql(home, "select display_order from dim_metrics "
                                                         "where metric = 'deepeval_summarization'"))
    assert registry["deepeval_correctness_geval"]["display_order"] > seed_max
    board = {r["metric"]: r for r in sql(home, "select * from mart_judge_leaderboard "
                                               "where judge_run_id = 'results-ragas'")}
    rows = ragas_rows(RAGAS_RESULTS)
    for m in RAGAS_METRICS:
        name = "ragas_" + m.replace("(", "_").replace("=", "_").rstrip(")")
        assert board[name]["mean"] == pytest.approx(sum(float(r[m]) for r in rows) / len(rows), abs=1e-12)
        assert board[name]["n_ok"] == 6
    deep = {r["metric"]: r for r in sql(home, "select * from mart_judge_leaderboard "
                                              "where judge_run_id = 'latest_run_full-deepeval'")}
    run = json.loads(DEEPEVAL_RUN.read_text())
    scores = [m["score"] for c in run["testCases"] for m in c["metricsData"] if m["name"] == "Unsupported Numbers"
              and "score" in m]
    assert deep["deepeval_unsupported_numbers"]["mean"] == pytest.approx(sum(scores) / len(scores))
    assert (deep["deepeval_unsupported_numbers"]["n_ok"], deep["deepeval_unsupported_numbers"]["n_failed"]) == (5, 1)
    slices = sql(home, "select * from mart_judge_by_slice where judge_run_id = 'latest_run_full-deepeval' "
                       "and metric = 'deepeval_correctness_geval'")
    assert {r["dimension"] for r in slices} >= {"dataset", "question_type"}
    geval = [m["score"] for c in run["testCases"] for m in c["metricsData"] if m["name"] == "Correctness [GEval]"]
    whole = next(r for r in slices if r["dimension"] == "dataset")
    assert (whole["n"], whole["mean"]) == (6, pytest.approx(sum(geval) / 6))


def test_compare_follows_the_metrics_direction(built: dict) -> None:
    home, ids = built["home"], built["ids"]
    proc = run_finrag(home, "compare", "--run-a", ids["deepeval_again"], "--run-b", ids["deepeval_better"],
                      "--format", "json")
    rows = {r["metric"]: r for r in json.loads(proc.stdout)}
    lower = rows["deepeval_unsupported_numbers"]
    assert lower["higher_is_better"] is False and lower["delta"] < 0
    assert (lower["wins"], lower["losses"], lower["ties"]) == (1, 0, 4)  # B's lower score is a win
    assert rows["deepeval_correctness_geval"]["ties"] == 6 and rows["deepeval_correctness_geval"]["delta"] == 0
    same = json.loads(run_finrag(home, "compare", "--run-a", ids["ragas"], "--run-b", ids["ragas_again"],
                                 "--format", "json").stdout)
    assert {r["metric"] for r in same} == {"ragas_" + m.replace("(", "_").replace("=", "_").rstrip(")")
                                           for m in RAGAS_METRICS}
    assert all(r["delta"] == 0 and r["ties"] == 6 for r in same)


def test_repeated_samples_are_repeats_and_the_marts_use_each_answers_mean(built: dict) -> None:
    home, lake = built["home"], Lake(built["home"])
    assert built["ids"]["repeated"] == "repeated-ragas"
    assert lake.read("answers", where={"run_id": "repeated"}).height == 6  # one answer per sample, judged twice
    j = lake.read("judgments", where={"judge_run_id": "repeated-ragas"})
    assert j.height == 6 * 5 * 2 and sorted(set(j["repeat"])) == [1, 2]
    rouge = "ragas_rouge_score_mode_fmeasure"
    scores = j.filter(pl.col("metric") == rouge).sort("question_id", "repeat")
    data = np.array([scores.filter(pl.col("repeat") == r)["raw_score"].to_list() for r in (1, 2)])
    board = {r["metric"]: r for r in sql(home, "select * from mart_judge_leaderboard "
                                               "where judge_run_id = 'repeated-ragas'")}
    assert board[rouge]["n_ok"] == 6 and board[rouge]["n_repeats"] == 2
    assert board[rouge]["mean"] == pytest.approx(data.mean(axis=0).mean(), abs=1e-12)  # the answers' means' mean
    reliability = {r["metric"]: r for r in sql(home, "select * from mart_judge_reliability "
                                                     "where judge_run_id = 'repeated-ragas'")}
    assert reliability[rouge]["level_of_measurement"] == "interval" and reliability[rouge]["n_answers"] == 6
    assert reliability[rouge]["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), abs=1e-12)
    assert 0 < reliability[rouge]["alpha"] < 1
    assert reliability["ragas_id_based_context_precision"]["alpha"] == 1.0  # repeats agree, answers differ
    assert reliability["ragas_id_based_context_recall"]["alpha"] is None  # 1.0 everywhere: no variation
    # compared with the run evaluated once, per answer: the repeats' means against the single scores
    rows = json.loads(run_finrag(home, "compare", "--run-a", "results-ragas", "--run-b", "repeated-ragas",
                                 "--format", "json").stdout)
    compared = next(r for r in rows if r["metric"] == rouge)
    assert compared["n_questions"] == 6 and compared["delta"] == pytest.approx(0.0075)  # (3 * 0.01 + 3 * 0.005) / 6


def test_export_then_ingest_gives_the_same_rows(built: dict) -> None:
    lake = Lake(built["home"])
    keep = ["question_id", "answer", "passages", "context_chunk_ids"]
    first = lake.read("answers", where={"run_id": "results"}).select(keep).sort("question_id")
    for again in ("results_again", "results_csv_again"):
        assert lake.read("answers", where={"run_id": again}).select(keep).sort("question_id").equals(first)
    cols = ["question_id", "metric", "repeat", "raw_score", "status", "rationale", "error"]
    for a, b in (("results-ragas", "results_again-ragas"), ("results-ragas", "results_csv_again-ragas"),
                 ("latest_run_full-deepeval", "deepeval_again-deepeval"),
                 ("repeated-ragas", "repeated_again-ragas")):
        ja = lake.read("judgments", where={"judge_run_id": a}).select(cols).sort(["question_id", "metric", "repeat"])
        jb = lake.read("judgments", where={"judge_run_id": b}).select(cols).sort(["question_id", "metric", "repeat"])
        assert ja.equals(jb), (a, b)


def test_exports_have_the_schema_the_tools_write(built: dict) -> None:
    """The committed fixtures show what the tools write; our exports write those keys, with the same types."""
    exports = built["exports"]
    fixture_keys = set(json.loads(RAGAS_DATASET.read_text().splitlines()[0]))
    for line in (exports / "r.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert set(row) - set(RAGAS_METRICS) <= fixture_keys and "user_input" in row
        assert all(isinstance(row[k], list) and all(isinstance(x, str) for x in row[k])
                   for k in ("retrieved_contexts", "reference_contexts", "retrieved_context_ids"))
    with open(exports / "r.csv", newline="") as fh:
        header = next(csv.reader(fh))
    with open(RAGAS_RESULTS, newline="") as fh:
        assert set(header) <= set(next(csv.reader(fh)))  # same columns as ragas' own results frame
    ours, theirs = json.loads((exports / "d.json").read_text()), json.loads(DEEPEVAL_RUN.read_text())
    assert set(ours) <= set(theirs)
    case_keys = set().union(*(c.keys() for c in theirs["testCases"])) | {"retrievalContext"}
    metric_keys = set().union(*(m.keys() for c in theirs["testCases"] for m in c["metricsData"]))
    for c in ours["testCases"]:
        assert set(c) <= case_keys
        for m in c["metricsData"]:
            assert set(m) <= metric_keys
            assert isinstance(m["threshold"], float) and isinstance(m["success"], bool)
    by_name = {(c["input"], m["name"]): m for c in theirs["testCases"] for m in c["metricsData"]}
    for c in ours["testCases"]:
        for m in c["metricsData"]:
            t = by_name[(c["input"], m["name"])]
            assert {k: m.get(k) for k in ("score", "success", "threshold", "error", "reason")} == {
                k: t.get(k) for k in ("score", "success", "threshold", "error", "reason")}


# ------------------------------------------------------------------------------------------------------ bad input
def _nothing_landed(home: Path) -> None:
    lake = Lake(home)
    for table in ("generation_runs", "answers", "judge_runs", "judgments", "metric_declarations", "questions"):
        assert lake.partitions(table) == [], table


def _refused(finrag, home: Path, *args: str) -> str:
    proc = finrag(*args, check=False)
    assert proc.returncode == 2, proc.stderr
    _nothing_landed(home)
    return proc.stderr


def _lines_with(path: Path, tmp: Path, name: str, change) -> Path:
    lines = path.read_text().splitlines()
    change(lines)
    out = tmp / name
    out.write_text("\n".join(lines) + "\n")
    return out


def test_bad_ragas_input_names_file_line_field_and_lands_nothing(home: Path, finrag, tmp_path: Path) -> None:
    def malformed(lines: list[str]) -> None:
        lines[2] = lines[2][:-20]

    f = _lines_with(RAGAS_DATASET, tmp_path, "malformed.jsonl", malformed)
    assert f"file {f}, line 3, field " in _refused(finrag, home, "ingest", "ragas", str(f), "--dataset", "x")
    assert "malformed JSON" in finrag("ingest", "ragas", str(f), "--dataset", "x", check=False).stderr

    def list_for_string(lines: list[str]) -> None:
        row = json.loads(lines[1])
        row["user_input"] = [{"content": row["user_input"], "type": "human"}]  # a multi-turn sample
        lines[1] = json.dumps(row)

    f = _lines_with(RAGAS_DATASET, tmp_path, "list.jsonl", list_for_string)
    err = _refused(finrag, home, "ingest", "ragas", str(f), "--dataset", "x")
    assert f"file {f}, line 2, field 'user_input': " in err and "string" in err

    def no_user_input(lines: list[str]) -> None:
        row = json.loads(lines[3])
        del row["user_input"]
        lines[3] = json.dumps(row)

    f = _lines_with(RAGAS_DATASET, tmp_path, "missing.jsonl", no_user_input)
    err = _refused(finrag, home, "ingest", "ragas", str(f), "--dataset", "x")
    assert f"file {f}, line 4, field 'user_input': required field is missing" in err

    # a score off its metric's scale, in ragas' own CSV (the record starting on the file's Nth physical line)
    rows = ragas_rows(RAGAS_RESULTS)
    with open(RAGAS_RESULTS, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        starts, line = [], reader.line_num + 1
        for _ in reader:
            starts.append(line)
            line = reader.line_num + 1
    text = RAGAS_RESULTS.read_text()
    bad = tmp_path / "results.csv"
    third = rows[2]["non_llm_context_recall"]
    with open(RAGAS_RESULTS, newline="") as fh:
        records = list(csv.reader(fh))
    records[3][header.index("non_llm_context_recall")] = "1.5"
    with open(bad, "w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(records)
    assert third != "1.5" and text
    err = _refused(finrag, home, "ingest", "ragas", str(bad), "--dataset", "x")
    assert f"file {bad}, line {starts[2]}, field 'non_llm_context_recall': score 1.5 is off the " in err


def test_bad_deepeval_input_names_file_line_field_and_lands_nothing(home: Path, finrag, tmp_path: Path) -> None:
    text = DEEPEVAL_RUN.read_text()
    f = tmp_path / "truncated.json"
    f.write_text(text[: len(text) // 2])
    err = _refused(finrag, home, "ingest", "deepeval", str(f), "--dataset", "x")
    assert f"file {f}, line 1, field " in err and "malformed JSON" in err

    def edited(name: str, change) -> Path:
        run = json.loads(text)
        change(run)
        out = tmp_path / name
        out.write_text(json.dumps(run))
        return out

    f = edited("list.json", lambda r: r["testCases"][1].update(actualOutput=["an", "answer"]))
    err = _refused(finrag, home, "ingest", "deepeval", str(f), "--dataset", "x")
    assert f"file {f}, line 1, field 'testCases[1].actualOutput': " in err and "string" in err

    f = edited("off_scale.json", lambda r: r["testCases"][2]["metricsData"][0].update(score=1.7))
    err = _refused(finrag, home, "ingest", "deepeval", str(f), "--dataset", "x")
    assert f"file {f}, line 1, field 'testCases[2].metricsData[0].score': score 1.7 is off the " in err

    f = edited("no_input.json", lambda r: r["testCases"][3].pop("input"))
    err = _refused(finrag, home, "ingest", "deepeval", str(f), "--dataset", "x")
    assert f"file {f}, line 1, field 'testCases[3].input': required field is missing" in err
