"""One home for the production-trace sources' integration tests, built once per session (support/shared_home.py):
the OTLP files the real OpenTelemetry SDK recorded (support/otlp_traces.py), a Langfuse export
(support/langfuse_exports.py) and an MLflow tracking store the real MLflow SDK wrote (support/mlflow_traces.py) each
landed with a dry run first and a re-ingest after, each source's human label set
calibrated against its LLM judge's metric, then one `finrag build` (models only). And the checks every source's
test makes of the marts against the reference implementations (ppi_py, sklearn, krippendorff), from what was sent.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import krippendorff
import numpy as np
import polars as pl
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from sklearn.metrics import cohen_kappa_score

from python_jobs.core.lake import Lake
from support.cli import MODELS_ONLY, run_finrag
from support.langfuse_exports import make_export
from support.mlflow_traces import EXPERIMENT, make_store
from support.otlp_traces import make_traces
from support.shared_home import shared_home

ALPHA = 0.05  # dbt_project.yml's run_comparison_alpha
PRICE = (0.00015, 0.0006)  # seeds/llm_prices.csv's gpt-4o-mini, per 1k tokens


def lake_files(home: Path) -> dict[str, int]:
    """Every part file of the lake but the empty tables' placeholders, with its modification time."""
    return {str(p): p.stat().st_mtime_ns for p in (home / "lake").rglob("*.parquet") if "=__empty__" not in str(p)}


def _land(home: Path, args: list[str]) -> dict:
    before = lake_files(home)
    dry = run_finrag(home, "ingest", *args, "--dry-run")
    after_dry = lake_files(home)
    runs = run_finrag(home, "ingest", *args).stdout.split()
    landed = lake_files(home)
    again = run_finrag(home, "ingest", *args)
    return {"runs": runs, "dry_stderr": dry.stderr, "dry_landed_nothing": before == after_dry,
            "landed_something": landed != before, "again_stderr": again.stderr, "again_stdout": again.stdout.split(),
            "again_changed_nothing": lake_files(home) == landed}


def _build(home: Path) -> dict:
    inputs = home.parent / "inputs"
    (inputs / "otlp").mkdir(parents=True)
    otlp_files, otlp_sent = make_traces(inputs / "otlp")
    langfuse_dir, langfuse_sent = make_export(inputs / "langfuse")
    (inputs / "mlflow").mkdir()
    mlflow_uri, mlflow_sent = make_store(inputs / "mlflow")
    store = inputs / "mlflow" / "mlflow.db"
    store_before = store.read_bytes()
    facts = {"otlp": _land(home, ["traces-otlp", *map(str, otlp_files)]) | {"sent": [asdict(s) for s in otlp_sent]},
             "langfuse": _land(home, ["traces-langfuse", str(langfuse_dir)])
             | {"sent": [asdict(s) for s in langfuse_sent]},
             "mlflow": _land(home, ["traces-mlflow", "--tracking-uri", mlflow_uri, "--experiment", EXPERIMENT])
             | {"sent": [asdict(s) for s in mlflow_sent], "tracking_uri": mlflow_uri,
                "store_unchanged": store.read_bytes() == store_before}}
    for tool in ("otlp", "langfuse", "mlflow"):
        metric = f"{tool}_correctness"
        run_finrag(home, "calibrate", "--label-set", f"production_{tool}_human", "--human-metric", metric,
                   "--predictor", metric)
    run_finrag(home, "build", *MODELS_ONLY)
    return facts


def traces_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    return shared_home(tmp_path_factory, "traces", _build)


def sql(home: Path, query: str) -> list[dict]:
    return json.loads(run_finrag(home, "sql", query, "--format", "json").stdout)


def sent_of(built: dict, version: str) -> list[dict]:
    """What a source's test sent of one application version (built["sent"]: one record per trace)."""
    return [s for s in built["sent"] if s["version"] == version]


def run_of(runs: list[str], version: str) -> str:
    (run,) = [r for r in runs if f"-{version}-" in r]
    return run


def check_questions_results_answers(home: Path, run: str, sent: list[dict]) -> dict[str, dict]:
    """The production run's questions, retrieval results (ranked as sent) and answers (text, tokens, latency,
    passages) equal what its traces sent; returns the answers by trace id."""
    lake = Lake(home)
    by_trace = {s["trace_id"]: s for s in sent}
    questions = lake.read("questions", where={"load_id": f"production.{run}"})
    assert dict(zip(questions["trace_id"], questions["question"], strict=True)) == {
        t: s["question"] for t, s in by_trace.items()}
    results = lake.read("retrieval_results", where={"run_id": f"{run}-retrieval"})
    assert results.height == sum(len(s["docs"]) for s in sent)
    for t, s in by_trace.items():
        r = results.filter(pl.col("trace_id") == t).sort("rank")
        assert list(zip(r["doc_id"], r["score"], strict=True)) == [(d, sc) for d, sc, _ in s["docs"]]
        assert r["span_id"].n_unique() == 1 and len(r["span_id"][0]) == 16
    answers = {a["trace_id"]: a for a in lake.read("answers", where={"run_id": run}).iter_rows(named=True)}
    assert answers.keys() == by_trace.keys()
    for t, s in by_trace.items():
        a = answers[t]
        assert (a["answer"], a["prompt_tokens"], a["completion_tokens"]) == (
            s["answer"], s["prompt_tokens"], s["completion_tokens"])
        assert a["latency_ms"] == pytest.approx(s["latency_ms"])
        assert [p["text"] for p in json.loads(a["passages"])] == [c for _, _, c in s["docs"]]
    return answers


def check_calibration(home: Path, label_set: str, metric: str, run: str, sent: list[dict]) -> None:
    """mart_judge_calibrated of `run` equals ppi_py on the sent scores (the judge's per-answer mean over repeats)."""
    (r,) = sql(home, f"""
        select n_labelled, n_unlabelled, human_lower, human_upper, ppi_mean, ppi_lower, ppi_upper, ppi_classic_mean
        from mart_judge_calibrated
        where label_set = '{label_set}' and predictor = '{metric}' and answer_run_id = '{run}'""")
    y = np.array([s["human"] for s in sent if s["human"] is not None])
    yhat = np.array([np.mean(s["judge"]) for s in sent if s["human"] is not None])
    yhat_u = np.array([np.mean(s["judge"]) for s in sent if s["human"] is None])
    assert (r["n_labelled"], r["n_unlabelled"]) == (len(y), len(yhat_u)) and len(y) >= 2 and len(yhat_u) >= 1
    assert r["ppi_mean"] == pytest.approx(float(ppi_mean_pointestimate(y, yhat, yhat_u)[0]), abs=1e-9)
    lo, hi = (float(np.ravel(e)[0]) for e in ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA))
    assert [r["ppi_lower"], r["ppi_upper"]] == pytest.approx([max(lo, 0.0), min(hi, 1.0)], abs=1e-9)
    assert r["ppi_classic_mean"] == pytest.approx(float(ppi_mean_pointestimate(y, yhat, yhat_u, lam=1)[0]), abs=1e-9)
    lo, hi = (float(np.ravel(e)[0]) for e in classical_mean_ci(y, alpha=ALPHA))
    assert [r["human_lower"], r["human_upper"]] == pytest.approx([max(lo, 0.0), min(hi, 1.0)], abs=1e-9)


def check_agreement(home: Path, label_set: str, metric: str, run: str, judge_run: str, sent: list[dict]) -> None:
    """Judge vs human kappa (sklearn) and the confusion matrix of `judge_run` over the labelled traces; the trust
    state and its calibrated mean."""
    labelled = [s for s in sent if s["human"] is not None]
    judge = [str(int(np.floor(np.mean(s["judge"]) + 0.5))) for s in labelled]  # nearest scale point, halves up
    human = [str(int(s["human"])) for s in labelled]
    (a,) = sql(home, f"""select n, kappa from mart_judge_agreement
        where grain = 'judge_run' and label_set = '{label_set}' and judge_run_id = '{judge_run}'""")
    assert a["n"] == len(labelled)
    assert a["kappa"] == pytest.approx(cohen_kappa_score(judge, human), abs=1e-9)
    cells = {(c["judge_class"], c["human_class"]): c["n"] for c in sql(home, f"""
        select judge_class, human_class, n from mart_judge_confusion
        where grain = 'judge_run' and label_set = '{label_set}' and judge_run_id = '{judge_run}'""") if c["n"]}
    pairs = list(zip(judge, human, strict=True))
    assert cells == {k: pairs.count(k) for k in set(pairs)}
    (t,) = sql(home, f"""select trust_state, calibration_method, calibrated_mean from mart_judge_trust
        where judge_run_id = '{judge_run}' and metric = '{metric}' and label_set = '{label_set}'""")
    (c,) = sql(home, f"""select ppi_mean from mart_judge_calibrated
        where label_set = '{label_set}' and predictor = '{metric}' and answer_run_id = '{run}'""")
    assert t["trust_state"] in ("calibrated", "no_better_than_chance")
    if t["trust_state"] == "calibrated":
        assert t["calibration_method"] == "ppi++" and t["calibrated_mean"] == pytest.approx(c["ppi_mean"])


def check_reliability(home: Path, metric: str, judge_run: str, sent: list[dict]) -> None:
    """The repeated judge's alpha (krippendorff, interval) and its leaderboard row."""
    repeats = max(len(s["judge"]) for s in sent)
    assert repeats == 2
    data = np.array([[s["judge"][r] if len(s["judge"]) > r else np.nan for s in sent] for r in range(repeats)])
    (rel,) = sql(home, f"""select alpha from mart_judge_reliability
        where judge_run_id = '{judge_run}' and metric = '{metric}'""")
    assert rel["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"),
                                         abs=1e-9)
    (board,) = sql(home, f"""select n_ok, n_judged, n_repeats, mean_raw from mart_judge_leaderboard
        where judge_run_id = '{judge_run}' and metric = '{metric}'""")
    # the leaderboard counts answers, each the mean of its repeats
    assert (board["n_ok"], board["n_judged"], board["n_repeats"]) == (len(sent), len(sent), 2)
    assert board["mean_raw"] == pytest.approx(float(np.mean([np.mean(s["judge"]) for s in sent])), abs=1e-9)


def check_costs(home: Path, run: str, model: str, sent: list[dict]) -> None:
    """mart_llm_costs of the production run's ledger batch: calls, tokens, cost and median latency as sent."""
    (c,) = sql(home, f"""select model, n_calls, prompt_tokens, completion_tokens, cost_usd, latency_p50_ms
        from mart_llm_costs where job_run_id = '{run}-traces' and purpose = 'production_answer'""")
    assert (c["model"], c["n_calls"]) == (model, len(sent))
    assert c["prompt_tokens"] == sum(s["prompt_tokens"] for s in sent)
    assert c["completion_tokens"] == sum(s["completion_tokens"] for s in sent)
    assert c["cost_usd"] == pytest.approx(sum(s["prompt_tokens"] / 1000 * PRICE[0] + s["completion_tokens"] / 1000
                                              * PRICE[1] for s in sent), abs=1e-12)
    assert c["latency_p50_ms"] == pytest.approx(float(np.median([s["latency_ms"] for s in sent])), rel=1e-9)
