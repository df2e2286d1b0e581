"""Production traces from OTLP/JSON files, through the real CLI and a real `dbt build`: the traces are recorded with
the real OpenTelemetry SDK (tests/support/otlp_traces.py: opentelemetry-sdk 1.45.2 and its OTLP encoders,
openinference-semantic-conventions 0.1.42; version 1.0 of the application in GenAI conventions with
gen_ai.evaluation.result log records, 2.0 in OpenInference's with EVALUATOR spans) and written as the Collector's
file exporter writes them. One built home serves the module.

What is checked: every question, result, answer, judgment and human label sent is in the lake with its trace and span
ids; a dry run lands nothing and a re-ingest changes nothing; the marts that need no gold answers work on the
production runs: the judge leaderboard, PPI++ calibration against the annotations (equal to ppi_py to 1e-9), judge
vs human kappa (sklearn) and its confusion matrix, the repeated judge's alpha (krippendorff), cost and latency per
version (mart_llm_costs)."""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import polars as pl
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from sklearn.metrics import cohen_kappa_score

from python_jobs.core.lake import Lake
from support.cli import MODELS_ONLY, run_finrag
from support.otlp_traces import MODEL, Sent, make_traces

LABEL_SET = "production_otlp_human"
METRIC = "otlp_correctness"
ALPHA = 0.05
PRICE = (0.00015, 0.0006)  # seeds/llm_prices.csv's gpt-4o-mini, per 1k tokens


def sql(home: Path, query: str) -> list[dict]:
    return json.loads(run_finrag(home, "sql", query, "--format", "json").stdout)


def lake_files(home: Path) -> dict[str, float]:
    """Every part file of the lake but the empty tables' placeholders, with its modification time."""
    return {str(p): p.stat().st_mtime_ns for p in (home / "lake").rglob("*.parquet") if "=__empty__" not in str(p)}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    home = tmp_path_factory.mktemp("traces") / "warehouse"
    files, sent = make_traces(tmp_path_factory.mktemp("otlp"))
    args = ["ingest", "traces-otlp", *map(str, files)]
    dry = run_finrag(home, *args, "--dry-run")
    landed_by_dry_run = lake_files(home)
    runs = run_finrag(home, *args).stdout.split()
    before = lake_files(home)
    again = run_finrag(home, *args)
    after = lake_files(home)
    run_finrag(home, "calibrate", "--label-set", LABEL_SET, "--human-metric", METRIC, "--predictor", METRIC)
    run_finrag(home, "build", *MODELS_ONLY)
    return {"home": home, "sent": sent, "runs": runs, "dry": dry, "dry_files": landed_by_dry_run,
            "again": again, "before": before, "after": after}


def run_of(built: dict, version: str) -> str:
    (run,) = [r for r in built["runs"] if f"-{version}-" in r]
    return run


def by_version(built: dict, version: str) -> list[Sent]:
    return [s for s in built["sent"] if s.version == version]


def test_dry_run_says_what_would_land_and_lands_nothing(built: dict) -> None:
    assert not built["dry_files"]
    err = built["dry"].stderr
    for version in ("1.0", "2.0"):
        n = len(by_version(built, version))
        assert (f"version {version}, window 2026-11-02T00:00Z .. 2026-11-03T00:00Z: {n} questions, {3 * n} "
                f"retrieval results, {n} answers") in err
    assert f"would land:   human_labels label_set={LABEL_SET}: 24 rows" in err


def test_a_reingest_changes_nothing(built: dict) -> None:
    assert built["before"] == built["after"] and built["before"]
    assert "nothing changes: the lake already holds these traces" in built["again"].stderr
    assert built["again"].stdout.split() == built["runs"]


def test_traces_land_as_questions_results_answers_judgments_and_labels(built: dict) -> None:
    lake = Lake(built["home"])
    assert len(built["runs"]) == 2
    for version in ("1.0", "2.0"):
        run, sent = run_of(built, version), {s.trace_id: s for s in by_version(built, version)}
        questions = lake.read("questions", where={"load_id": f"production.{run}"})
        assert dict(zip(questions["trace_id"], questions["question"], strict=True)) == {
            t: s.question for t, s in sent.items()}
        assert (questions["question_id"] == questions["trace_id"]).all()
        results = lake.read("retrieval_results", where={"run_id": f"{run}-retrieval"}).sort("question_id", "rank")
        assert results.height == sum(len(s.docs) for s in sent.values())
        for t, s in sent.items():
            r = results.filter(pl.col("trace_id") == t)
            assert list(zip(r["doc_id"], r["score"], strict=True)) == [(d, sc) for d, sc, _ in s.docs]
            assert r["span_id"].n_unique() == 1 and len(r["span_id"][0]) == 16
        answers = lake.read("answers", where={"run_id": run})
        assert answers.height == len(sent)
        for a in answers.iter_rows(named=True):
            s = sent[a["trace_id"]]
            assert (a["answer"], a["prompt_tokens"], a["completion_tokens"]) == (
                s.answer, s.prompt_tokens, s.completion_tokens)
            assert a["latency_ms"] == pytest.approx(s.latency_ms)
            assert a["cost_usd"] == pytest.approx(s.prompt_tokens / 1000 * PRICE[0] + s.completion_tokens / 1000
                                                  * PRICE[1])
            assert [p["text"] for p in json.loads(a["passages"])] == [c for _, _, c in s.docs]
        gen = lake.read("generation_runs", where={"run_id": run}).row(0, named=True)
        assert (gen["app_version"], gen["eval_mode"], gen["model"], gen["retrieval_run_id"]) == (
            version, "production", MODEL, f"{run}-retrieval")
        assert gen["window_start"].isoformat() == "2026-11-02T00:00:00+00:00"
        judgments = lake.read("judgments", where={"judge_run_id": f"{run}-llm"})
        assert judgments.height == sum(len(s.judge) for s in sent.values())
        for t, s in sent.items():
            j = judgments.filter(pl.col("trace_id") == t).sort("repeat")
            assert j["raw_score"].to_list() == s.judge and j["metric"].to_list() == [METRIC] * len(s.judge)
        assert lake.read("judge_runs", where={"judge_run_id": f"{run}-llm"})["evaluator_kind"].to_list() == ["llm"]
        labels = lake.read("human_labels", where={"answer_run_id": run})
        assert dict(zip(labels["trace_id"], labels["raw_score"], strict=True)) == {
            t: s.human for t, s in sent.items() if s.human is not None}
        calls = lake.read("llm_calls", where={"batch_id": f"{run}-traces"})
        assert sorted(calls["span_id"]) == sorted(answers["span_id"])


def test_calibrated_mean_equals_ppi_py(built: dict) -> None:
    rows = {r["answer_run_id"]: r for r in sql(built["home"], f"""
        select answer_run_id, n_labelled, n_unlabelled, human_mean, human_lower, human_upper, ppi_mean, ppi_lower,
            ppi_upper, ppi_classic_mean from mart_judge_calibrated
        where label_set = '{LABEL_SET}' and predictor = '{METRIC}'""")}
    for version in ("1.0", "2.0"):
        sent = by_version(built, version)
        y = np.array([s.human for s in sent if s.human is not None])
        yhat = np.array([np.mean(s.judge) for s in sent if s.human is not None])
        yhat_u = np.array([np.mean(s.judge) for s in sent if s.human is None])
        r = rows[run_of(built, version)]
        assert (r["n_labelled"], r["n_unlabelled"]) == (len(y), len(yhat_u)) == (12, 18)
        assert r["ppi_mean"] == pytest.approx(float(ppi_mean_pointestimate(y, yhat, yhat_u)[0]), abs=1e-9)
        lo, hi = (float(np.ravel(e)[0]) for e in ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA))
        assert [r["ppi_lower"], r["ppi_upper"]] == pytest.approx([max(lo, 0.0), min(hi, 1.0)], abs=1e-9)
        assert r["ppi_classic_mean"] == pytest.approx(float(ppi_mean_pointestimate(y, yhat, yhat_u, lam=1)[0]),
                                                      abs=1e-9)
        lo, hi = (float(np.ravel(e)[0]) for e in classical_mean_ci(y, alpha=ALPHA))
        assert [r["human_lower"], r["human_upper"]] == pytest.approx([max(lo, 0.0), min(hi, 1.0)], abs=1e-9)


def test_judge_trust_kappa_and_confusion_against_the_annotations(built: dict) -> None:
    home = built["home"]
    trust = {r["answer_run_id"]: r for r in sql(home, f"""
        select answer_run_id, trust_state, calibration_method, calibrated_mean from mart_judge_trust
        where metric = '{METRIC}' and label_set = '{LABEL_SET}'""")}
    calibrated = {r["answer_run_id"]: r["ppi_mean"] for r in sql(home, f"""
        select answer_run_id, ppi_mean from mart_judge_calibrated where label_set = '{LABEL_SET}'""")}
    agreement = {r["judge_run_id"]: r for r in sql(home, f"""
        select judge_run_id, n, kappa from mart_judge_agreement
        where grain = 'judge_run' and label_set = '{LABEL_SET}'""")}
    confusion = sql(home, f"""select judge_run_id, judge_class, human_class, n from mart_judge_confusion
        where grain = 'judge_run' and label_set = '{LABEL_SET}'""")
    for version in ("1.0", "2.0"):
        run = run_of(built, version)
        labelled = [s for s in by_version(built, version) if s.human is not None]
        judge = [str(int(np.floor(np.mean(s.judge) + 0.5))) for s in labelled]  # nearest scale point, halves up
        human = [str(int(s.human)) for s in labelled]
        a = agreement[f"{run}-llm"]
        assert a["n"] == len(labelled)
        assert a["kappa"] == pytest.approx(cohen_kappa_score(judge, human), abs=1e-9)
        cells = {(c["judge_class"], c["human_class"]): c["n"] for c in confusion if c["judge_run_id"] == f"{run}-llm"}
        expected = {k: sum(1 for p in zip(judge, human, strict=True) if p == k) for k in set(zip(judge, human,
                                                                                                 strict=True))}
        assert {k: v for k, v in cells.items() if v} == expected
        t = trust[run]
        assert t["trust_state"] in ("calibrated", "no_better_than_chance")
        if t["trust_state"] == "calibrated":
            assert t["calibration_method"] == "ppi++" and t["calibrated_mean"] == pytest.approx(calibrated[run])


def test_repeated_evaluator_alpha_and_leaderboard(built: dict) -> None:
    home = built["home"]
    reliability = {r["judge_run_id"]: r for r in sql(home, f"""
        select judge_run_id, n_repeats, n_answers, alpha from mart_judge_reliability where metric = '{METRIC}'""")}
    board = {r["judge_run_id"]: r for r in sql(home, f"""
        select judge_run_id, n_ok, n_judged from mart_judge_leaderboard where metric = '{METRIC}'""")}
    for version in ("1.0", "2.0"):
        run, sent = run_of(built, version), by_version(built, version)
        data = np.array([[s.judge[r] if len(s.judge) > r else np.nan for s in sent] for r in range(2)])
        rel = reliability[f"{run}-llm"]
        assert rel["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=data,
                                                                level_of_measurement="interval"), abs=1e-9)
        assert board[f"{run}-llm"]["n_judged"] == len(sent)


def test_cost_and_latency_per_version(built: dict) -> None:
    costs = {r["job_run_id"]: r for r in sql(built["home"], """
        select job_run_id, purpose, model, n_calls, prompt_tokens, completion_tokens, cost_usd, latency_p50_ms
        from mart_llm_costs where purpose = 'production_answer'""")}
    for version in ("1.0", "2.0"):
        sent = by_version(built, version)
        c = costs[f"{run_of(built, version)}-traces"]
        assert (c["model"], c["n_calls"]) == (MODEL, len(sent))
        assert c["prompt_tokens"] == sum(s.prompt_tokens for s in sent)
        assert c["completion_tokens"] == sum(s.completion_tokens for s in sent)
        assert c["cost_usd"] == pytest.approx(sum(s.prompt_tokens / 1000 * PRICE[0] + s.completion_tokens / 1000
                                                  * PRICE[1] for s in sent), abs=1e-12)
        assert c["latency_p50_ms"] == pytest.approx(float(np.median([s.latency_ms for s in sent])), rel=1e-9)
