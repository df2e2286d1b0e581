"""Production traces recorded with the real MLflow SDK (mlflow-skinny 3.17.2, its sqlite tracking store through
SQLAlchemy 2.0.58 and Alembic 1.20.1) in a local store, `sqlite:///<out>/mlflow.db`, experiment `finrag-app`.

`make_store` records the same kind of traffic as support/otlp_traces.py: two application versions (1.0 as the trace
metadata `app_version`, MLflow's documented key; 2.0 as a trace tag of that name), per trace a root CHAIN span with
the user's question, a RETRIEVER span returning MLflow Documents and an LLM span (1.0: CHAT_MODEL with a chat
completion's messages and choices; 2.0: LLM with a text prompt and output), its model (`mlflow.llm.model`) and token
usage (`mlflow.chat.tokenUsage`). Assessments logged with `mlflow.log_assessment`: an LLM_JUDGE feedback
(correctness, twice on some traces), a CODE feedback (has_citation, a boolean), a HUMAN feedback (a person's
correctness) on some traces, and a HUMAN expectation (a reference answer: not a score, left out by the ingest) on
a few. It returns the store's URI and what it sent.
"""

from __future__ import annotations

import os
import random
from contextlib import contextmanager
from pathlib import Path

from support.otlp_traces import T0, Sent

SDK_VERSION = "mlflow-skinny 3.17.2 (sqlite store: SQLAlchemy 2.0.58, Alembic 1.20.1)"
MODEL = "gpt-4o-mini"
EXPERIMENT = "finrag-app"
ENV = {"MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false", "MLFLOW_DISABLE_TELEMETRY": "true"}


def _no_fsync(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous = OFF")
    cursor.close()


@contextmanager
def sdk_env():
    """Spans written when they end (not by a background queue), no usage reporting; the test process's variables
    restored after. And the store's sqlite connections do not wait for the disk at each commit (PRAGMA synchronous
    OFF: what the SDK writes is the same, its durability against a power cut is not a test's concern; the ~120
    commits of make_store took 15 s instead of 4 on a busy disk)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    before = {k: os.environ.get(k) for k in ENV}
    os.environ.update(ENV)
    event.listen(Engine, "connect", _no_fsync)
    try:
        yield
    finally:
        event.remove(Engine, "connect", _no_fsync)
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def new_store(out: Path) -> str:
    """A new sqlite store `out`/mlflow.db, the SDK's tracking URI from now on (call it inside sdk_env)."""
    import mlflow

    uri = f"sqlite:///{out / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    return uri


def make_store(out: Path, n_per_version: int = 16, labelled: int = 6, repeated: int = 4,
               seed: int = 13) -> tuple[str, list[Sent]]:
    """A sqlite tracking store in `out` holding versions 1.0 and 2.0's traces (n_per_version each, 1000 s apart,
    within 2026-11-02 UTC) and their assessments; `labelled` traces of each version annotated by a person, the judge
    run twice on `repeated`."""
    with sdk_env():
        import mlflow
        from mlflow.entities import AssessmentSource, Document, Expectation, Feedback, SpanType

        uri = new_store(out)
        experiment_id = mlflow.MlflowClient().create_experiment(EXPERIMENT)
        rng = random.Random(seed)
        sent: list[Sent] = []
        for version in ("1.0", "2.0"):
            for i in range(n_per_version):
                start = T0 + (i * 1000 + (0 if version == "1.0" else 500)) * 10**9
                question = f"What did company {i} report as net revenue in fiscal {2019 + i % 5} (v{version})?"
                docs = [(f"10k-{rng.randrange(500)}-{k}", round(0.95 - 0.1 * k - rng.random() / 30, 6),
                         f"passage {k} of trace {i}") for k in range(3)]
                answer = f"Net revenue was ${rng.randrange(10, 900)} million."
                pt, ct = rng.randrange(250, 1000), rng.randrange(10, 70)
                latency_ns = rng.randrange(300, 2200) * 10**6
                correct = rng.random() < (0.7 if version == "1.0" else 0.5)
                judge = round(min(1.0, max(0.0, (0.8 if correct else 0.3) + rng.uniform(-0.2, 0.2))), 6)
                s = Sent("", version, question, docs, answer, pt, ct, latency_ns / 1e6, [judge])
                context = {"metadata": {"app_version": version}} if version == "1.0" else {
                    "tags": {"app_version": version}}
                root = mlflow.start_span_no_context(
                    "rag", span_type=SpanType.CHAIN, experiment_id=experiment_id, start_time_ns=start,
                    inputs={"question": question} if version == "1.0" else [{"role": "user", "content": question}],
                    **context)
                ret = mlflow.start_span_no_context("retrieve", span_type=SpanType.RETRIEVER, parent_span=root,
                                                   inputs={"query": question}, start_time_ns=start + 10**6)
                if version == "1.0":
                    outputs = [Document(page_content=c, metadata={"doc_uri": d, "score": sc}, id=d).to_dict()
                               for d, sc, c in docs]
                else:
                    outputs = [Document(page_content=c, metadata={"chunk_id": d, "relevance_score": sc}).to_dict()
                               for d, sc, c in docs]
                ret.end(outputs=outputs, end_time_ns=start + 40 * 10**6)
                attrs = {"mlflow.llm.model": MODEL,
                         "mlflow.chat.tokenUsage": {"input_tokens": pt, "output_tokens": ct, "total_tokens": pt + ct}}
                if version == "1.0":
                    llm = mlflow.start_span_no_context(
                        "chat", span_type=SpanType.CHAT_MODEL, parent_span=root, start_time_ns=start + 50 * 10**6,
                        inputs={"model": MODEL, "messages": [{"role": "system", "content": "Answer from the passages."},
                                                             {"role": "user", "content": question}]})
                    llm.end(outputs={"choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant", "content": answer}}]}, attributes=attrs,
                            end_time_ns=start + 50 * 10**6 + latency_ns)
                else:
                    llm = mlflow.start_span_no_context("complete", span_type=SpanType.LLM, parent_span=root,
                                                       start_time_ns=start + 50 * 10**6,
                                                       inputs=f"Answer from the passages.\n\n{question}")
                    llm.end(outputs=answer, attributes=attrs, end_time_ns=start + 50 * 10**6 + latency_ns)
                root.end(outputs=answer, end_time_ns=start + 60 * 10**6 + latency_ns)
                s.trace_id = root.trace_id
                at = start // 10**6  # assessment times, in ms
                judged = [(judge, at + 90)]
                if i < repeated:
                    s.judge.append(round(min(1.0, max(0.0, judge + rng.uniform(-0.15, 0.15))), 6))
                    judged.append((s.judge[1], at + 95))
                for score, when in judged:
                    mlflow.log_assessment(s.trace_id, Feedback(
                        name="Correctness", value=score, rationale="judge verdict", span_id=llm.span_id,
                        source=AssessmentSource(source_type="LLM_JUDGE", source_id="gpt-4o"), create_time_ms=when))
                s.check = float(i % 3 != 0)
                mlflow.log_assessment(s.trace_id, Feedback(
                    name="has_citation", value=i % 3 != 0, create_time_ms=at + 80,
                    source=AssessmentSource(source_type="CODE", source_id="citation_check")))
                if i % (n_per_version // labelled) == 0 and sum(
                        x.human is not None for x in sent if x.version == version) < labelled:
                    s.human = 1.0 if correct else 0.0
                    mlflow.log_assessment(s.trace_id, Feedback(
                        name="Correctness", value=s.human, rationale="annotated", create_time_ms=at + 3_600_000,
                        source=AssessmentSource(source_type="HUMAN", source_id="analyst@example.com")))
                    if i % 2 == 0:
                        mlflow.log_assessment(s.trace_id, Expectation(
                            name="expected_answer", value=answer, create_time_ms=at + 3_600_001,
                            source=AssessmentSource(source_type="HUMAN", source_id="analyst@example.com")))
                sent.append(s)
    return uri, sent
