"""A bad MLflow store or trace is refused before anything lands (SPEC §7, §11): one error naming the store, the
trace, the span and the field, and an empty lake after it. The store is written once per module with the real
MLflow SDK (support/mlflow_traces.py: mlflow-skinny 3.17.2, a sqlite store): one experiment per bad case, each a good
trace followed by the bad one (a reader that landed what it read before the error would show). (That a refused
landing leaves a landed run untouched is the shared landing's, checked on OTLP files in
test_ingest_traces_bad_input.py.) Through the CLI: exit 2 and the error
line alone; in this process (ingest_mlflow, the verb's function: the SDK is imported once) for the other cases. No
dbt build here: the lake alone."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sources.mlflow_traces import ingest_mlflow
from python_jobs.sources.traces import TraceOptions
from support.cli import run_finrag
from support.mlflow_traces import EXPERIMENT, new_store, sdk_env
from support.otlp_traces import T0
from support.traces_home import lake_files

OPTS = TraceOptions(tool="mlflow", version_attribute="app_version")
USAGE = {"input_tokens": 120, "output_tokens": 8}


def write_trace(mlflow, experiment_id: str, i: int, usage: object = None, documents: object = None,
                feedback: object = 0.5) -> dict[str, str]:
    """One trace as the application records it (a root, a retriever, an LLM span) and an LLM judge's feedback; the
    arguments replace what a bad trace holds. Its trace and span ids."""
    from mlflow.entities import AssessmentSource, Document, Feedback, SpanType

    start = T0 + i * 10**9
    root = mlflow.start_span_no_context("rag", span_type=SpanType.CHAIN, experiment_id=experiment_id,
                                        inputs={"question": f"question {i}"}, start_time_ns=start,
                                        metadata={"app_version": "9.0"})
    ret = mlflow.start_span_no_context("retrieve", span_type=SpanType.RETRIEVER, parent_span=root,
                                       start_time_ns=start + 10**6)
    ret.end(outputs=documents if documents is not None else [
        Document(page_content="a passage", metadata={"doc_uri": f"doc-{i}"}).to_dict()], end_time_ns=start + 10**7)
    llm = mlflow.start_span_no_context("chat", span_type=SpanType.CHAT_MODEL, parent_span=root,
                                       start_time_ns=start + 2 * 10**7, inputs={"messages": []})
    llm.end(outputs="an answer", attributes={"mlflow.llm.model": "gpt-4o-mini",
                                             "mlflow.chat.tokenUsage": usage if usage is not None else USAGE},
            end_time_ns=start + 5 * 10**7)
    root.end(outputs="an answer", end_time_ns=start + 6 * 10**7)
    mlflow.log_assessment(root.trace_id, Feedback(name="Correctness", value=feedback, span_id=llm.span_id,
                                                  source=AssessmentSource(source_type="LLM_JUDGE", source_id="j")))
    return {"trace": root.trace_id, "retriever": ret.span_id, "llm": llm.span_id}


BAD = {  # experiment -> what its second trace holds
    "bad-tokens": {"usage": {"input_tokens": 1.5, "output_tokens": 8}},
    "bad-documents": {"documents": "a text, not a list of documents"},
    "bad-feedback": {"feedback": {"score": 1}},
    "off-scale": {"feedback": 7.0},
    # the SDK logs the trace but not its LLM span (a token count it cannot add up): the store lacks a span
    "incomplete": {"usage": {"input_tokens": "many", "output_tokens": 8}},
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The SDK's store: one experiment per bad case."""
    out = tmp_path_factory.mktemp("mlflow")
    ids = {}
    with sdk_env():
        import mlflow

        uri = new_store(out)
        client = mlflow.MlflowClient()
        for k, (name, bad) in enumerate(BAD.items()):
            experiment_id = client.create_experiment(name)
            write_trace(mlflow, experiment_id, 100 * k)
            ids[name] = write_trace(mlflow, experiment_id, 100 * k + 1, **bad)
    return {"uri": uri, "ids": ids}


def refused(home: Path, uri: str, experiment: str, field: str) -> str:
    with pytest.raises(InputError) as exc:
        ingest_mlflow(Lake(home), uri, experiment, OPTS)
    assert (exc.value.file, exc.value.field) == (uri, field), str(exc.value)
    assert lake_files(home) == {}  # not even the experiment's good trace
    return exc.value.detail


def test_an_attribute_of_the_wrong_type_through_the_cli(home: Path, store: dict) -> None:
    ids = store["ids"]["bad-tokens"]
    proc = run_finrag(home, "ingest", "traces-mlflow", "--tracking-uri", store["uri"], "--experiment", "bad-tokens",
                      check=False)
    assert proc.returncode == 2, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert lines == [
        f"error: file {store['uri']}, field 'traces[{ids['trace']}].spans[{ids['llm']}].attributes"
        f"[\"mlflow.chat.tokenUsage\"].input_tokens': trace {ids['trace']}, span {ids['llm']} (chat): expected a "
        "whole number of tokens, got 1.5"], proc.stderr
    assert lake_files(home) == {}


def test_a_store_that_does_not_exist_through_the_cli(home: Path, tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'none' / 'mlflow.db'}"
    proc = run_finrag(home, "ingest", "traces-mlflow", "--tracking-uri", uri, "--experiment", EXPERIMENT,
                      check=False)
    assert proc.returncode == 2 and proc.stderr.strip() == (
        f"error: file {uri}, field '--tracking-uri': no MLflow tracking store: {tmp_path / 'none' / 'mlflow.db'} "
        "does not exist"), proc.stderr
    assert not (tmp_path / "none").exists()  # MLflow's client would have made a new store there


def test_retriever_outputs_that_are_not_documents(home: Path, store: dict) -> None:
    ids = store["ids"]["bad-documents"]
    detail = refused(home, store["uri"], "bad-documents",
                     f"traces[{ids['trace']}].spans[{ids['retriever']}].attributes[\"mlflow.spanOutputs\"]")
    assert detail.startswith(f"trace {ids['trace']}, span {ids['retriever']} (retrieve): a retriever's outputs are a "
                             "list of documents")


def test_a_feedback_value_that_is_an_object(home: Path, store: dict) -> None:
    ids = store["ids"]["bad-feedback"]
    detail = refused(home, store["uri"], "bad-feedback", f"traces[{ids['trace']}].assessments[0].feedback.value")
    assert "assessment 'Correctness': expected a number, a boolean or a label" in detail


def test_a_score_off_its_metric_scale(home: Path, store: dict) -> None:
    ids = store["ids"]["off-scale"]
    detail = refused(home, store["uri"], "off-scale", f"traces[{ids['trace']}].assessments[0].feedback.value")
    assert "score 7.0 of evaluation 'Correctness' is off the mlflow_correctness scale" in detail


def test_a_trace_without_all_its_spans(home: Path, store: dict) -> None:
    """MLflow's search leaves such a trace out: the ingest names it instead of landing the others without it."""
    ids = store["ids"]["incomplete"]
    detail = refused(home, store["uri"], "incomplete", f"traces[{ids['trace']}].spans")
    assert detail == (f"trace {ids['trace']}: the store holds the trace but not all of its spans (its size stats "
                      "count 3): a span that failed to log, or a trace still being written")


def test_an_experiment_that_does_not_exist(home: Path, store: dict) -> None:
    detail = refused(home, store["uri"], "finrag-ap", "--experiment")
    assert detail == "no experiment named (or with id) 'finrag-ap' in this tracking store"


def test_a_sqlite_file_that_is_not_an_mlflow_store(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("create table t (x int)")
    data = path.read_bytes()
    detail = refused(home, f"sqlite:///{path}", EXPERIMENT, "--tracking-uri")
    assert detail.startswith("a sqlite database, but not an MLflow tracking store")
    assert path.read_bytes() == data  # MLflow's client would have added its tables


def test_a_server_that_does_not_answer(home: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    detail = refused(home, f"http://127.0.0.1:{port}", EXPERIMENT, "--tracking-uri")
    assert detail.startswith("the tracking store cannot be read: ")
