"""Production traces from a Langfuse blob-storage export, through the real CLI and a real `dbt build`: enriched
observations (observations_v2/, Parquet) and scores (scores/, JSONL) in the columns of Langfuse's export field
reference (tests/support/langfuse_exports.py writes them with pyarrow: no Langfuse server runs here, and its SDK
writes to a server, not to blob storage). The home is the session's shared traces home (support/traces_home.py).

Checked: every question, result, answer, judgment (EVAL: the LLM judge, API: a code check) and human label
(ANNOTATION) sent is in the lake with its trace and observation ids; the dry run lands nothing and a re-ingest
changes nothing; the marts: PPI++ calibration (ppi_py to 1e-9), kappa and the confusion matrix, alpha of the
repeated judge, cost and latency per release."""

from __future__ import annotations

import json

import polars as pl
import pytest

from python_jobs.core.lake import Lake
from support.langfuse_exports import MODEL
from support.traces_home import (
    check_agreement,
    check_calibration,
    check_costs,
    check_reliability,
    run_of,
    sent_of,
    traces_home,
)

LABEL_SET = "production_langfuse_human"
METRIC = "langfuse_correctness"
VERSIONS = ("1.0", "2.0")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    home, facts = traces_home(tmp_path_factory)
    return {"home": home, **facts["langfuse"]}


def test_dry_run_lands_nothing_and_a_reingest_changes_nothing(built: dict) -> None:
    assert built["dry_landed_nothing"] and built["landed_something"] and built["again_changed_nothing"]
    for version in VERSIONS:
        n = len(sent_of(built, version))
        judged = sum(len(s["judge"]) + 1 for s in sent_of(built, version))  # the LLM judge's and the code check's
        assert (f"version {version}, window 2026-11-02T00:00Z .. 2026-11-03T00:00Z: {n} questions, {3 * n} "
                f"retrieval results, {n} answers, {judged} judgments, 12 human labels") in built["dry_stderr"]
    assert "nothing changes: the lake already holds these traces" in built["again_stderr"]


def test_the_export_lands_as_questions_results_answers_judgments_and_labels(built: dict) -> None:
    lake = Lake(built["home"])
    for version in VERSIONS:
        run, sent = run_of(built["runs"], version), {s["trace_id"]: s for s in sent_of(built, version)}
        assert run.startswith(f"langfuse-cm-finrag-prod-{version}-20261102T0000-prod-")
        questions = lake.read("questions", where={"load_id": f"production.{run}"})
        assert dict(zip(questions["trace_id"], questions["question"], strict=True)) == {
            t: s["question"] for t, s in sent.items()}
        results = lake.read("retrieval_results", where={"run_id": f"{run}-retrieval"})
        assert results.height == 3 * len(sent)
        for t, s in sent.items():
            r = results.filter(pl.col("trace_id") == t).sort("rank")
            assert list(zip(r["doc_id"], r["score"], strict=True)) == [(d, sc) for d, sc, _ in s["docs"]]
        answers = {a["trace_id"]: a for a in lake.read("answers", where={"run_id": run}).iter_rows(named=True)}
        assert answers.keys() == sent.keys()
        for t, s in sent.items():
            a = answers[t]
            assert (a["answer"], a["prompt_tokens"], a["completion_tokens"]) == (
                s["answer"], s["prompt_tokens"], s["completion_tokens"])
            assert a["cost_usd"] == pytest.approx(s["cost"], abs=1e-12)  # the export's own cost_details.total
            assert a["latency_ms"] == pytest.approx(s["latency_ms"])
            assert [p["text"] for p in json.loads(a["passages"])] == [c for _, _, c in s["docs"]]
        judgments = lake.read("judgments", where={"judge_run_id": f"{run}-llm"})
        assert sorted(judgments["raw_score"]) == sorted(x for s in sent.values() for x in s["judge"])
        checks = lake.read("judgments", where={"judge_run_id": f"{run}-code"})
        assert dict(zip(checks["trace_id"], checks["raw_score"], strict=True)) == {
            t: s["check"] for t, s in sent.items()}
        kinds = lake.read("judge_runs").filter(pl.col("answer_run_id") == run)
        assert sorted(zip(kinds["judge_run_id"], kinds["evaluator_kind"], strict=True)) == [
            (f"{run}-code", "code"), (f"{run}-llm", "llm")]
        labels = lake.read("human_labels", where={"label_set": LABEL_SET}).filter(pl.col("answer_run_id") == run)
        assert dict(zip(labels["trace_id"], labels["raw_score"], strict=True)) == {
            t: s["human"] for t, s in sent.items() if s["human"] is not None}
        assert labels["annotator"].drop_nulls().str.starts_with("annotator-").all()


@pytest.mark.parametrize("version", VERSIONS)
def test_calibrated_mean_equals_ppi_py(built: dict, version: str) -> None:
    check_calibration(built["home"], LABEL_SET, METRIC, run_of(built["runs"], version), sent_of(built, version))


@pytest.mark.parametrize("version", VERSIONS)
def test_kappa_confusion_alpha_and_costs(built: dict, version: str) -> None:
    run, sent = run_of(built["runs"], version), sent_of(built, version)
    check_agreement(built["home"], LABEL_SET, METRIC, run, f"{run}-llm", sent)
    check_reliability(built["home"], METRIC, f"{run}-llm", sent)
    check_costs(built["home"], run, MODEL, sent)
