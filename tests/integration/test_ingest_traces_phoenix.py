"""Production traces pulled from a running Arize Phoenix, through the real CLI and a real `dbt build`.

The module starts one local Phoenix server (arize-phoenix 20.26.1, from its own venv) and feeds it with the real SDKs
(tests/support/phoenix_traces.py: arize-phoenix-otel 0.17.2 over opentelemetry-sdk 1.45.2 and the OTLP HTTP exporter
to Phoenix's /v1/traces, OpenInference attributes from openinference-semantic-conventions 0.1.42; span annotations
with annotator_kind LLM, CODE and HUMAN logged through arize-phoenix-client 3.5.0). Then `finrag ingest
traces-phoenix` with --dry-run, for real, and again; `finrag calibrate`; one `finrag build` (models only).

Checked: every question, result, answer, judgment (LLM: the judge, twice on some traces; CODE: a check) and human
label sent is in the lake with its trace and span ids; the dry run lands nothing and the re-ingest changes nothing;
the marts: PPI++ calibration (ppi_py to 1e-9), kappa and the confusion matrix (sklearn), the repeated judge's alpha
(krippendorff), cost and latency. And bad input, nothing landed: a Phoenix that is not running (one error naming the
endpoint), a project it does not have, a span attribute of the wrong type (its span and attribute named).
"""

from __future__ import annotations

from dataclasses import asdict

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.browser import free_port
from support.cli import MODELS_ONLY, run_finrag
from support.otlp_traces import MODEL
from support.phoenix_traces import APP_VERSION, PROJECT_NAME, phoenix_server, send_bad_trace, send_traces
from support.traces_home import (
    _land,
    check_agreement,
    check_calibration,
    check_costs,
    check_questions_results_answers,
    check_reliability,
    lake_files,
)

LABEL_SET = "production_phoenix_human"
BAD_PROJECT = "finrag-bad"
METRIC = "phoenix_correctness"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("phoenix")
    home = base / "warehouse"
    home.mkdir()
    with phoenix_server(base / "phoenix") as url:
        sent = send_traces(url)
        args = ["traces-phoenix", "--endpoint", url, "--project", PROJECT_NAME]
        facts = _land(home, args)
        missing = run_finrag(home, "ingest", "traces-phoenix", "--endpoint", url, "--project", "no-such-app",
                             check=False)
        facts |= {"missing_rc": missing.returncode, "missing_stderr": missing.stderr}
        bad_span = send_bad_trace(url, BAD_PROJECT)
        before = lake_files(home)
        bad = run_finrag(home, "ingest", "traces-phoenix", "--endpoint", url, "--project", BAD_PROJECT, check=False)
        facts |= {"bad_span": bad_span, "bad_rc": bad.returncode, "bad_stderr": bad.stderr,
                  "bad_landed_nothing": lake_files(home) == before}
    run_finrag(home, "calibrate", "--label-set", LABEL_SET, "--human-metric", METRIC, "--predictor", METRIC)
    run_finrag(home, "build", *MODELS_ONLY)
    return {"home": home, "url": url, **facts, "sent": [asdict(s) for s in sent]}


def test_dry_run_lands_nothing_and_a_reingest_changes_nothing(built: dict) -> None:
    assert built["dry_landed_nothing"] and built["landed_something"] and built["again_changed_nothing"]
    n = len(built["sent"])
    judged = sum(len(s["judge"]) + 1 for s in built["sent"])  # the LLM judge's and the code check's
    labelled = sum(s["human"] is not None for s in built["sent"])
    assert (f"service {PROJECT_NAME}, version {APP_VERSION}, window 2026-11-02T00:00Z .. 2026-11-03T00:00Z: {n} "
            f"questions, {3 * n} retrieval results, {n} answers, {judged} judgments, {labelled} human labels"
            ) in built["dry_stderr"]
    assert f"would land:   human_labels label_set={LABEL_SET}: {labelled} rows" in built["dry_stderr"]
    assert "nothing changes: the lake already holds these traces" in built["again_stderr"]
    assert built["again_stdout"] == built["runs"]


def test_traces_land_as_questions_results_answers_judgments_and_labels(built: dict) -> None:
    lake = Lake(built["home"])
    (run,) = built["runs"]
    assert run.startswith(f"phoenix-{PROJECT_NAME}-{APP_VERSION}-20261102T0000-prod-"), run
    sent = {s["trace_id"]: s for s in built["sent"]}
    answers = check_questions_results_answers(built["home"], run, built["sent"])
    gen = lake.read("generation_runs", where={"run_id": run}).row(0, named=True)
    assert (gen["app_version"], gen["eval_mode"], gen["model"]) == (APP_VERSION, "production", MODEL)
    judgments = lake.read("judgments", where={"judge_run_id": f"{run}-llm"})
    assert judgments.height == sum(len(s["judge"]) for s in sent.values())
    for t, s in sent.items():
        j = judgments.filter(pl.col("trace_id") == t).sort("repeat")
        assert j["raw_score"].to_list() == s["judge"] and j["metric"].to_list() == [METRIC] * len(s["judge"])
        assert j["span_id"].to_list() == [answers[t]["span_id"]] * len(s["judge"])
    checks = lake.read("judgments", where={"judge_run_id": f"{run}-code"})
    assert dict(zip(checks["trace_id"], checks["raw_score"], strict=True)) == {t: s["check"] for t, s in sent.items()}
    assert set(checks["metric"]) == {"phoenix_cites_sources"}
    kinds = lake.read("judge_runs").filter(pl.col("answer_run_id") == run)
    assert sorted(zip(kinds["judge_run_id"], kinds["evaluator_kind"], strict=True)) == [
        (f"{run}-code", "code"), (f"{run}-llm", "llm")]
    labels = lake.read("human_labels", where={"label_set": LABEL_SET})
    assert dict(zip(labels["trace_id"], labels["raw_score"], strict=True)) == {
        t: s["human"] for t, s in sent.items() if s["human"] is not None}
    assert set(labels["annotator"]) == {"ann-1"}
    calls = lake.read("llm_calls", where={"batch_id": f"{run}-traces"})
    assert sorted(calls["span_id"]) == sorted(a["span_id"] for a in answers.values())


def test_calibrated_mean_equals_ppi_py(built: dict) -> None:
    (run,) = built["runs"]
    check_calibration(built["home"], LABEL_SET, METRIC, run, built["sent"])


def test_kappa_confusion_alpha_and_costs(built: dict) -> None:
    (run,) = built["runs"]
    check_agreement(built["home"], LABEL_SET, METRIC, run, f"{run}-llm", built["sent"])
    check_reliability(built["home"], METRIC, f"{run}-llm", built["sent"])
    check_costs(built["home"], run, MODEL, built["sent"])


def test_a_phoenix_that_is_not_running_is_one_error_naming_the_endpoint(built: dict) -> None:
    """The module's server has stopped (its endpoint, with --dry-run), and a port nothing ever listened on: one error
    line naming the endpoint, nothing landed."""
    before = lake_files(built["home"])
    for url, dry in ((built["url"], ("--dry-run",)), (f"http://127.0.0.1:{free_port()}", ())):
        proc = run_finrag(built["home"], "ingest", "traces-phoenix", "--endpoint", url, "--project", PROJECT_NAME,
                          *dry, check=False)
        assert proc.returncode != 0 and proc.stdout == ""
        errors = [line for line in proc.stderr.splitlines() if url in line]
        assert len(errors) == 1, proc.stderr
        assert f"no Phoenix answers at {url} (ConnectError" in errors[0] and "'--endpoint'" in errors[0], errors
    assert lake_files(built["home"]) == before


def test_a_project_phoenix_does_not_have_is_refused(built: dict) -> None:
    assert built["missing_rc"] != 0
    assert f"{built['url']}: Phoenix has no project 'no-such-app'" in built["missing_stderr"]
    assert "'--project'" in built["missing_stderr"]


def test_an_attribute_of_the_wrong_type_names_the_span_and_the_attribute(built: dict) -> None:
    assert built["bad_rc"] != 0 and built["bad_landed_nothing"]
    (line,) = [x for x in built["bad_stderr"].splitlines() if "llm.token_count.prompt" in x]
    assert f"/v1/projects/{BAD_PROJECT}/spans" in line and f"span {built['bad_span']} (llm)" in line
    assert '.attributes["llm.token_count.prompt"]' in line and "expected a whole number of tokens" in line
