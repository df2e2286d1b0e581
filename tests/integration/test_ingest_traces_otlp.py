"""Production traces from OTLP/JSON files, through the real CLI and a real `dbt build`: the traces are recorded with
the real OpenTelemetry SDK (tests/support/otlp_traces.py: opentelemetry-sdk 1.45.2 and its OTLP encoders,
openinference-semantic-conventions 0.1.42; version 1.0 of the application in GenAI conventions with
gen_ai.evaluation.result log records, 2.0 in OpenInference's with EVALUATOR spans) and written as the Collector's
file exporter writes them. The home is the session's shared traces home (support/traces_home.py).

What is checked: every question, result, answer, judgment and human label sent is in the lake with its trace and span
ids; a dry run lands nothing and a re-ingest changes nothing; the marts that need no gold answers work on the
production runs: the judge leaderboard, PPI++ calibration against the annotations (equal to ppi_py to 1e-9), judge
vs human kappa (sklearn) and its confusion matrix, the repeated judge's alpha (krippendorff), cost and latency per
version (mart_llm_costs)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.otlp_traces import MODEL
from support.traces_home import (
    PRICE,
    check_agreement,
    check_calibration,
    check_costs,
    check_reliability,
    run_of,
    sent_of,
    sql,
    traces_home,
)

LABEL_SET = "production_otlp_human"
METRIC = "otlp_correctness"
VERSIONS = ("1.0", "2.0")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    home, facts = traces_home(tmp_path_factory)
    return {"home": home, **facts["otlp"]}


def test_dry_run_says_what_would_land_and_lands_nothing(built: dict) -> None:
    assert built["dry_landed_nothing"] and built["landed_something"]
    for version in VERSIONS:
        n = len(sent_of(built, version))
        assert (f"version {version}, window 2026-11-02T00:00Z .. 2026-11-03T00:00Z: {n} questions, {3 * n} "
                f"retrieval results, {n} answers") in built["dry_stderr"]
    assert f"would land:   human_labels label_set={LABEL_SET}: 24 rows" in built["dry_stderr"]


def test_a_reingest_changes_nothing(built: dict) -> None:
    assert built["again_changed_nothing"]
    assert "nothing changes: the lake already holds these traces" in built["again_stderr"]
    assert built["again_stdout"] == built["runs"]


def test_traces_land_as_questions_results_answers_judgments_and_labels(built: dict) -> None:
    lake = Lake(built["home"])
    assert len(built["runs"]) == 2
    for version in VERSIONS:
        run, sent = run_of(built["runs"], version), {s["trace_id"]: s for s in sent_of(built, version)}
        questions = lake.read("questions", where={"load_id": f"production.{run}"})
        assert dict(zip(questions["trace_id"], questions["question"], strict=True)) == {
            t: s["question"] for t, s in sent.items()}
        assert (questions["question_id"] == questions["trace_id"]).all()
        results = lake.read("retrieval_results", where={"run_id": f"{run}-retrieval"}).sort("question_id", "rank")
        assert results.height == sum(len(s["docs"]) for s in sent.values())
        for t, s in sent.items():
            r = results.filter(pl.col("trace_id") == t)
            assert list(zip(r["doc_id"], r["score"], strict=True)) == [(d, sc) for d, sc, _ in s["docs"]]
            assert r["span_id"].n_unique() == 1 and len(r["span_id"][0]) == 16
        answers = lake.read("answers", where={"run_id": run})
        assert answers.height == len(sent)
        for a in answers.iter_rows(named=True):
            s = sent[a["trace_id"]]
            assert (a["answer"], a["prompt_tokens"], a["completion_tokens"]) == (
                s["answer"], s["prompt_tokens"], s["completion_tokens"])
            assert a["latency_ms"] == pytest.approx(s["latency_ms"])
            assert a["cost_usd"] == pytest.approx(s["prompt_tokens"] / 1000 * PRICE[0]
                                                  + s["completion_tokens"] / 1000 * PRICE[1])
            assert [p["text"] for p in json.loads(a["passages"])] == [c for _, _, c in s["docs"]]
        gen = lake.read("generation_runs", where={"run_id": run}).row(0, named=True)
        assert (gen["app_version"], gen["eval_mode"], gen["model"], gen["retrieval_run_id"]) == (
            version, "production", MODEL, f"{run}-retrieval")
        assert gen["window_start"].isoformat() == "2026-11-02T00:00:00+00:00"
        judgments = lake.read("judgments", where={"judge_run_id": f"{run}-llm"})
        assert judgments.height == sum(len(s["judge"]) for s in sent.values())
        for t, s in sent.items():
            j = judgments.filter(pl.col("trace_id") == t).sort("repeat")
            assert j["raw_score"].to_list() == s["judge"] and j["metric"].to_list() == [METRIC] * len(s["judge"])
        assert lake.read("judge_runs", where={"judge_run_id": f"{run}-llm"})["evaluator_kind"].to_list() == ["llm"]
        labels = lake.read("human_labels", where={"label_set": LABEL_SET}).filter(pl.col("answer_run_id") == run)
        assert dict(zip(labels["trace_id"], labels["raw_score"], strict=True)) == {
            t: s["human"] for t, s in sent.items() if s["human"] is not None}
        calls = lake.read("llm_calls", where={"batch_id": f"{run}-traces"})
        assert sorted(calls["span_id"]) == sorted(answers["span_id"])


@pytest.mark.parametrize("version", VERSIONS)
def test_calibrated_mean_equals_ppi_py(built: dict, version: str) -> None:
    check_calibration(built["home"], LABEL_SET, METRIC, run_of(built["runs"], version), sent_of(built, version))


@pytest.mark.parametrize("version", VERSIONS)
def test_judge_trust_kappa_and_confusion_against_the_annotations(built: dict, version: str) -> None:
    run = run_of(built["runs"], version)
    check_agreement(built["home"], LABEL_SET, METRIC, run, f"{run}-llm", sent_of(built, version))


@pytest.mark.parametrize("version", VERSIONS)
def test_repeated_evaluator_alpha_and_leaderboard(built: dict, version: str) -> None:
    check_reliability(built["home"], METRIC, f"{run_of(built['runs'], version)}-llm", sent_of(built, version))


@pytest.mark.parametrize("version", VERSIONS)
def test_cost_and_latency_per_version(built: dict, version: str) -> None:
    check_costs(built["home"], run_of(built["runs"], version), MODEL, sent_of(built, version))


def test_the_run_pickers_label_says_version_and_window(built: dict) -> None:
    """The dashboard's pickers show runs by dim_runs.label (dashboards/data/common.py run_labels): a production run
    beside the benchmark runs, with its version and window; its judge run likewise."""
    rows = {r["run_id"]: r for r in sql(built["home"], """
        select run_id, kind, label, app_version, window_start, window_end from dim_runs
        where eval_mode = 'production' or kind = 'judge'""")}
    for version in VERSIONS:
        run = run_of(built["runs"], version)
        answer, judge = rows[run], rows[f"{run}-llm"]
        assert answer["label"] == (f"production · {MODEL} · all splits · version {version} · window 2026-11-02 00h +24h"
                                   f" over [filings-index · full · k=3 · all splits]" if version == "1.0" else
                                   f"production · {MODEL} · all splits · version {version} · window 2026-11-02 00h "
                                   f"+24h over [retrieve · full · k=3 · all splits]")
        assert judge["label"] == f"judge Correctness of [{answer['label']}]"
        assert (answer["app_version"], judge["app_version"]) == (version, version)


def test_the_dashboard_shows_production_runs_with_version_and_window(built: dict,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The leaderboard (Streamlit's AppTest) offers the production runs' judged means in its run picker, beside the
    benchmark runs, by their labels: version and window in each."""
    from streamlit.testing.v1 import AppTest

    from support.paths import PROJECT

    monkeypatch.setenv("FINRAG_HOME", str(built["home"]))
    at = AppTest.from_file(str(PROJECT / "dashboards" / "views" / "leaderboard.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    offered = {option for picker in at.multiselect for option in picker.options}
    for version in VERSIONS:
        shown = [o for o in offered if f"version {version} · window 2026-11-02 00h +24h" in o]
        assert shown, (version, sorted(offered))
