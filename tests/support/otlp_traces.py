"""Production traces made with the real OpenTelemetry SDK (opentelemetry-sdk 1.45.2, its OTLP encoders
opentelemetry-exporter-otlp-proto-common 1.45.2, attribute names from openinference-semantic-conventions 0.1.42 and
opentelemetry-semantic-conventions 0.66b2), written as the Collector's file exporter writes OTLP/JSON: one export
request per line, ids hex, enums integers, 64-bit integers strings.

`make_traces` records a RAG application's traffic: a root span with the user's question, a retriever span and an
LLM span per trace, two application versions (service.version 1.0 in GenAI conventions, 2.0 in OpenInference's),
LLM-judge evaluations (gen_ai.evaluation.result log records for 1.0, a second run of the judge on some traces;
OpenInference EVALUATOR spans for 2.0) and human annotations on some traces. It returns what it sent, so a test
compares the lake with it.
"""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from openinference.semconv.trace import (
    DocumentAttributes,
    EvaluationAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as GA

SDK_VERSIONS = "opentelemetry-sdk 1.45.2, opentelemetry-exporter-otlp-proto-common 1.45.2, " \
               "openinference-semantic-conventions 0.1.42"
T0 = 1_793_577_600 * 10**9  # 2026-11-02T00:00:00Z: every trace starts within this day
MODEL = "gpt-4o-mini"
EVAL = "gen_ai.evaluation.result"
ID_KEYS = ("traceId", "spanId", "parentSpanId")


@dataclass
class Sent:
    """What one trace recorded (OTLP spans here, a Langfuse export in support/langfuse_exports.py)."""

    trace_id: str
    version: str
    question: str
    docs: list[tuple[str, float, str]]
    answer: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    judge: list[float] = field(default_factory=list)  # the LLM judge's correctness, per run of it
    human: float | None = None
    cost: float = 0.0  # what the tool recorded as the call's cost (Langfuse's total_cost; OTLP spans carry none)
    check: float = 0.0  # a code evaluator's score (Langfuse's API score)


def hex_ids(obj: object) -> object:
    """protobuf's JSON mapping (ids base64) -> OTLP/JSON (ids hex)."""
    if isinstance(obj, dict):
        return {k: (base64.b64decode(v).hex() if k in ID_KEYS and isinstance(v, str) else hex_ids(v))
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [hex_ids(x) for x in obj]
    return obj


def otlp_json(message) -> str:
    return json.dumps(hex_ids(MessageToDict(message, use_integers_for_enums=True)), separators=(",", ":"))


def write_lines(path: Path, messages: list) -> Path:
    path.write_text("".join(otlp_json(m) + "\n" for m in messages))
    return path


def openinference_rag(tracer, root, start: int, question: str, docs: list[tuple[str, float, str]], answer: str,
                      prompt_tokens: int, completion_tokens: int, latency_ns: int):
    """One RAG request in OpenInference's conventions under `root` (started at `start`, ns): the root's CHAIN kind
    and input, a RETRIEVER span with the documents, an LLM span with model, tokens, messages and output; returns the
    LLM span (ended)."""
    root.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND, OpenInferenceSpanKindValues.CHAIN.value)
    root.set_attribute(SpanAttributes.INPUT_VALUE, question)
    with tracer.start_as_current_span("retrieve", start_time=start + 10**6, end_on_exit=False) as ret:
        ret.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND, OpenInferenceSpanKindValues.RETRIEVER.value)
        ret.set_attribute(SpanAttributes.INPUT_VALUE, question)
        for k, (d, sc, c) in enumerate(docs):
            p = f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{k}."
            ret.set_attribute(p + DocumentAttributes.DOCUMENT_ID, d)
            ret.set_attribute(p + DocumentAttributes.DOCUMENT_SCORE, sc)
            ret.set_attribute(p + DocumentAttributes.DOCUMENT_CONTENT, c)
        ret.end(end_time=start + 50 * 10**6)
    with tracer.start_as_current_span("llm", start_time=start + 60 * 10**6, end_on_exit=False) as llm:
        llm.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND, OpenInferenceSpanKindValues.LLM.value)
        llm.set_attribute(SpanAttributes.LLM_MODEL_NAME, MODEL)
        llm.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_PROMPT, prompt_tokens)
        llm.set_attribute(SpanAttributes.LLM_TOKEN_COUNT_COMPLETION, completion_tokens)
        for k, (role, content) in enumerate([("system", "Answer from the passages."), ("user", question)]):
            p = f"{SpanAttributes.LLM_INPUT_MESSAGES}.{k}."
            llm.set_attribute(p + MessageAttributes.MESSAGE_ROLE, role)
            llm.set_attribute(p + MessageAttributes.MESSAGE_CONTENT, content)
        p = f"{SpanAttributes.LLM_OUTPUT_MESSAGES}.0."
        llm.set_attribute(p + MessageAttributes.MESSAGE_ROLE, "assistant")
        llm.set_attribute(p + MessageAttributes.MESSAGE_CONTENT, answer)
        llm.set_attribute(SpanAttributes.OUTPUT_VALUE, answer)
        llm.end(end_time=start + 60 * 10**6 + latency_ns)
    return llm


def make_traces(out: Path, n_per_version: int = 30, labelled: int = 12, repeated: int = 6, seed: int = 7,
                batch: int = 64, spacing_ms: int = 997_000) -> tuple[list[Path], list[Sent]]:
    """Traces of versions 1.0 and 2.0 (n_per_version each, `spacing_ms` apart, within 2026-11-02 UTC) in
    `out`/spans.jsonl and their evaluation log records in `out`/logs.jsonl; `labelled` traces of each version
    annotated by a person, the judge run twice on `repeated`."""
    assert n_per_version * spacing_ms < 86_000_000, "every trace starts on 2026-11-02"
    rng = random.Random(seed)
    sent: list[Sent] = []
    spans_out, logs_out = [], []
    for version in ("1.0", "2.0"):
        resource = Resource.create({"service.name": "finrag-app", "service.version": version})
        spans = InMemorySpanExporter()
        tp = TracerProvider(resource=resource)
        tp.add_span_processor(SimpleSpanProcessor(spans))
        logs = InMemoryLogRecordExporter()
        lp = LoggerProvider(resource=resource)
        lp.add_log_record_processor(SimpleLogRecordProcessor(logs))
        tracer, logger = tp.get_tracer("finrag-app"), lp.get_logger("finrag-app.evals")
        for i in range(n_per_version):
            start = T0 + (i * spacing_ms + (0 if version == "1.0" else spacing_ms // 2)) * 10**6
            question = f"What was the operating margin of company {i} in fiscal {2020 + i % 5} (v{version})?"
            docs = [(f"doc-{rng.randrange(200)}-{k}", round(1 - 0.1 * k - rng.random() / 20, 6), f"passage {k} of {i}")
                    for k in range(3)]
            answer = f"The operating margin was {rng.randrange(5, 40)}%."
            pt, ct = rng.randrange(200, 900), rng.randrange(10, 80)
            latency_ns = rng.randrange(300, 2000) * 10**6
            correct = rng.random() < (0.7 if version == "1.0" else 0.55)
            judge = min(1.0, max(0.0, (0.8 if correct else 0.25) + rng.uniform(-0.2, 0.2)))
            s = Sent("", version, question, docs, answer, pt, ct, latency_ns / 1e6, [round(judge, 6)])
            with tracer.start_as_current_span("rag", start_time=start, end_on_exit=False) as root:
                if version == "1.0":
                    root.set_attribute(GA.GEN_AI_OPERATION_NAME, "invoke_workflow")
                    root.set_attribute(GA.GEN_AI_INPUT_MESSAGES, json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": question}]}]))
                    with tracer.start_as_current_span("retrieval filings", start_time=start + 10**6,
                                                      end_on_exit=False) as ret:
                        ret.set_attribute(GA.GEN_AI_OPERATION_NAME, "retrieval")
                        ret.set_attribute(GA.GEN_AI_DATA_SOURCE_ID, "filings-index")
                        ret.set_attribute(GA.GEN_AI_RETRIEVAL_QUERY_TEXT, question)
                        ret.set_attribute(GA.GEN_AI_RETRIEVAL_DOCUMENTS, json.dumps(
                            [{"id": d, "score": sc, "content": c} for d, sc, c in docs]))
                        ret.end(end_time=start + 50 * 10**6)
                    with tracer.start_as_current_span(f"chat {MODEL}", start_time=start + 60 * 10**6,
                                                      end_on_exit=False) as llm:
                        llm.set_attribute(GA.GEN_AI_OPERATION_NAME, "chat")
                        llm.set_attribute(GA.GEN_AI_REQUEST_MODEL, MODEL)
                        llm.set_attribute(GA.GEN_AI_RESPONSE_ID, f"chatcmpl-{version}-{i}")
                        llm.set_attribute(GA.GEN_AI_USAGE_INPUT_TOKENS, pt)
                        llm.set_attribute(GA.GEN_AI_USAGE_OUTPUT_TOKENS, ct)
                        llm.set_attribute(GA.GEN_AI_INPUT_MESSAGES, json.dumps(
                            [{"role": "system", "parts": [{"type": "text", "content": "Answer from the passages."}]},
                             {"role": "user", "parts": [{"type": "text", "content": question}]}]))
                        llm.set_attribute(GA.GEN_AI_OUTPUT_MESSAGES, json.dumps(
                            [{"role": "assistant", "parts": [{"type": "text", "content": answer}],
                              "finish_reason": "stop"}]))
                        llm.end(end_time=start + 60 * 10**6 + latency_ns)
                else:
                    llm = openinference_rag(tracer, root, start, question, docs, answer, pt, ct, latency_ns)
                root.end(end_time=start + 80 * 10**6 + latency_ns)
            s.trace_id = format(root.get_span_context().trace_id, "032x")
            evals = [("LLM", s.judge[0], start + 90 * 10**6)]
            if i < repeated:
                s.judge.append(round(min(1.0, max(0.0, judge + rng.uniform(-0.15, 0.15))), 6))
                evals.append(("LLM", s.judge[1], start + 95 * 10**6))
            if i % (n_per_version // labelled) == 0 and sum(x.human is not None for x in sent
                                                               if x.version == version) < labelled:
                s.human = 1.0 if correct else 0.0
                evals.append(("HUMAN", s.human, start + 3600 * 10**9))
            for kind, score, at in evals:
                if version == "1.0":
                    attrs = {GA.GEN_AI_EVALUATION_NAME: "Correctness", GA.GEN_AI_EVALUATION_SCORE_VALUE: score,
                             GA.GEN_AI_EVALUATION_SCORE_LABEL: "correct" if score >= 0.5 else "incorrect",
                             GA.GEN_AI_EVALUATION_EXPLANATION: f"{kind.lower()} verdict"}
                    if kind == "HUMAN":
                        attrs[EvaluationAttributes.EVALUATION_ANNOTATOR_KIND] = kind
                    if i % 2 == 0 or kind == "HUMAN":  # linked by the span ...
                        logger.emit(timestamp=at, event_name=EVAL, attributes=attrs,
                                    context=trace.set_span_in_context(llm))
                    else:  # ... or by the response id alone
                        logger.emit(timestamp=at, event_name=EVAL,
                                    attributes=attrs | {GA.GEN_AI_RESPONSE_ID: f"chatcmpl-{version}-{i}"})
                else:
                    ctx = trace.set_span_in_context(llm)
                    ev = tracer.start_span("evaluate correctness", context=ctx, start_time=at)
                    ev.set_attribute(SpanAttributes.OPENINFERENCE_SPAN_KIND,
                                     OpenInferenceSpanKindValues.EVALUATOR.value)
                    ev.set_attribute(EvaluationAttributes.EVALUATION_NAME, "Correctness")
                    ev.set_attribute(EvaluationAttributes.EVALUATION_SCORE, score)
                    ev.set_attribute(EvaluationAttributes.EVALUATION_ANNOTATOR_KIND, kind)
                    ev.end(end_time=at + 10**6)
            sent.append(s)
        finished = list(spans.get_finished_spans())
        spans_out += [encode_spans(finished[k:k + batch]) for k in range(0, len(finished), batch)]
        records = list(logs.get_finished_logs())
        if records:
            logs_out.append(encode_logs(records))
        tp.shutdown()
        lp.shutdown()
    return [write_lines(out / "spans.jsonl", spans_out), write_lines(out / "logs.jsonl", logs_out)], sent
