"""Production traces from an MLflow tracking store, through the real CLI and a real `dbt build`: the traces and their
assessments are written with the real MLflow SDK (tests/support/mlflow_traces.py: mlflow-skinny 3.17.2 into a local
sqlite store; version 1.0 of the application named by the trace metadata `app_version`, 2.0 by a trace tag) and read
back by `finrag ingest traces-mlflow --tracking-uri sqlite:///... --experiment finrag-app`. The home is the session's
shared traces home (support/traces_home.py).

Checked: every question, retrieval result, answer, judgment (LLM_JUDGE feedback: the LLM judge; CODE: a check) and
human label (HUMAN feedback) sent is in the lake with its MLflow trace and span ids, and nothing else (the HUMAN
expectations are not scores); the dry run lands nothing and a re-ingest changes nothing, and the store is only read;
the marts: PPI++ calibration of the judge's mean against the people's labels (ppi_py to 1e-9), kappa and the
confusion matrix (sklearn), alpha of the repeated judge (krippendorff), cost and latency per version."""

from __future__ import annotations

import json
from importlib.metadata import version as installed_version

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.mlflow_traces import MODEL, SDK_VERSION
from support.traces_home import (
    check_agreement,
    check_calibration,
    check_costs,
    check_reliability,
    run_of,
    sent_of,
    traces_home,
)

pytestmark = pytest.mark.slow  # the session's traces home: three sources landed, one dbt build

LABEL_SET = "production_mlflow_human"
METRIC = "mlflow_correctness"
VERSIONS = ("1.0", "2.0")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    home, facts = traces_home(tmp_path_factory)
    return {"home": home, **facts["mlflow"]}


def test_the_store_is_the_sdks_and_the_ingest_only_reads_it(built: dict) -> None:
    assert SDK_VERSION.startswith(f"mlflow-skinny {installed_version('mlflow-skinny')} ")
    assert built["tracking_uri"].startswith("sqlite:///") and built["store_unchanged"]


def test_dry_run_lands_nothing_and_a_reingest_changes_nothing(built: dict) -> None:
    assert built["dry_landed_nothing"] and built["landed_something"] and built["again_changed_nothing"]
    for version in VERSIONS:
        sent = sent_of(built, version)
        n, judged = len(sent), sum(len(s["judge"]) + 1 for s in sent)  # the LLM judge's and the code check's
        labels = sum(s["human"] is not None for s in sent)
        assert (f"version {version}, window 2026-11-02T00:00Z .. 2026-11-03T00:00Z: {n} questions, {3 * n} "
                f"retrieval results, {n} answers, {judged} judgments, {labels} human labels") in built["dry_stderr"]
    assert "nothing changes: the lake already holds these traces" in built["again_stderr"]
    assert built["again_stdout"] == built["runs"]


def test_the_traces_land_as_questions_results_answers_judgments_and_labels(built: dict) -> None:
    lake = Lake(built["home"])
    assert len(built["runs"]) == 2
    for version in VERSIONS:
        run, sent = run_of(built["runs"], version), {s["trace_id"]: s for s in sent_of(built, version)}
        assert run.startswith(f"mlflow-finrag-app-{version}-20261102T0000-prod-")
        questions = lake.read("questions", where={"load_id": f"production.{run}"})
        assert dict(zip(questions["trace_id"], questions["question"], strict=True)) == {
            t: s["question"] for t, s in sent.items()}
        assert all(t.startswith("tr-") for t in questions["question_id"])  # MLflow's own trace ids
        results = lake.read("retrieval_results", where={"run_id": f"{run}-retrieval"})
        assert results.height == sum(len(s["docs"]) for s in sent.values())
        for t, s in sent.items():
            r = results.filter(pl.col("trace_id") == t).sort("rank")
            assert list(zip(r["doc_id"], r["score"], strict=True)) == [(d, sc) for d, sc, _ in s["docs"]]
            assert r["span_id"].n_unique() == 1 and len(r["span_id"][0]) == 16
        answers = {a["trace_id"]: a for a in lake.read("answers", where={"run_id": run}).iter_rows(named=True)}
        assert answers.keys() == sent.keys()
        for t, s in sent.items():
            a = answers[t]
            assert (a["answer"], a["prompt_tokens"], a["completion_tokens"]) == (
                s["answer"], s["prompt_tokens"], s["completion_tokens"])
            assert a["latency_ms"] == pytest.approx(s["latency_ms"])
            assert [p["text"] for p in json.loads(a["passages"])] == [c for _, _, c in s["docs"]]
            assert s["question"] in a["prompt"]
        gen = lake.read("generation_runs", where={"run_id": run}).row(0, named=True)
        assert (gen["app_version"], gen["eval_mode"], gen["model"], gen["retrieval_run_id"]) == (
            version, "production", MODEL, f"{run}-retrieval")
        judgments = lake.read("judgments", where={"judge_run_id": f"{run}-llm"})
        assert judgments.height == sum(len(s["judge"]) for s in sent.values())
        for t, s in sent.items():
            j = judgments.filter(pl.col("trace_id") == t).sort("repeat")
            assert j["raw_score"].to_list() == s["judge"] and j["metric"].to_list() == [METRIC] * len(s["judge"])
            assert j["span_id"].to_list() == [answers[t]["span_id"]] * len(s["judge"])  # the judged LLM span
        checks = lake.read("judgments", where={"judge_run_id": f"{run}-code"})
        assert dict(zip(checks["trace_id"], checks["raw_score"], strict=True)) == {
            t: s["check"] for t, s in sent.items()}
        assert set(checks["metric"]) == {"mlflow_has_citation"}
        kinds = lake.read("judge_runs").filter(pl.col("answer_run_id") == run)
        assert sorted(zip(kinds["judge_run_id"], kinds["evaluator_kind"], kinds["judge_model"], strict=True)) == [
            (f"{run}-code", "code", "citation_check"), (f"{run}-llm", "llm", "gpt-4o")]
        labels = lake.read("human_labels", where={"label_set": LABEL_SET}).filter(pl.col("answer_run_id") == run)
        assert dict(zip(labels["trace_id"], labels["raw_score"], strict=True)) == {
            t: s["human"] for t, s in sent.items() if s["human"] is not None}
        assert set(labels["annotator"]) == {"analyst@example.com"}
        calls = lake.read("llm_calls", where={"batch_id": f"{run}-traces"})
        assert sorted(calls["span_id"]) == sorted(a["span_id"] for a in answers.values())


@pytest.mark.parametrize("version", VERSIONS)
def test_calibrated_mean_equals_ppi_py(built: dict, version: str) -> None:
    check_calibration(built["home"], LABEL_SET, METRIC, run_of(built["runs"], version), sent_of(built, version))


@pytest.mark.parametrize("version", VERSIONS)
def test_kappa_confusion_alpha_and_costs(built: dict, version: str) -> None:
    run, sent = run_of(built["runs"], version), sent_of(built, version)
    check_agreement(built["home"], LABEL_SET, METRIC, run, f"{run}-llm", sent)
    check_reliability(built["home"], METRIC, f"{run}-llm", sent)
    check_costs(built["home"], run, MODEL, sent)
