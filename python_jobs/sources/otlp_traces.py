"""OTLP/JSON trace files in: `finrag ingest traces-otlp FILE...` (docs/traces_otlp.md).

What the OpenTelemetry Collector's file exporter writes (its `file` exporter, JSON encoding): one OTLP/JSON export
request per line, `{"resourceSpans": [...]}` for traces and `{"resourceLogs": [...]}` for logs (a Collector writes
each pipeline to its own file; give every file). OTLP/JSON, not protobuf's JSON mapping: trace and span ids are hex
(32 and 16 digits; base64 is refused, naming the field), enums are integers, 64-bit integers are strings.

Spans are read under two conventions, the GenAI semantic conventions first (SPEC §11: the mapping is keyed on
`gen_ai.*`, OpenInference's attributes are mapped onto it):
- retrieval: `gen_ai.operation.name` = retrieval (documents: `gen_ai.retrieval.documents`, a JSON array, or an
  array value, of {id, score, content}; the retriever: `gen_ai.data_source.id`; the query:
  `gen_ai.retrieval.query.text`), or `openinference.span.kind` RETRIEVER (`retrieval.documents.N.document.id` /
  `.score` / `.content`) or RERANKER (`reranker.output_documents.N.document.*`; `reranker.model_name`). The trace's
  last such span (by end time) is its ranking;
- the answer: `gen_ai.operation.name` chat / text_completion / generate_content (`gen_ai.response.model` or
  `gen_ai.request.model`, `gen_ai.usage.input_tokens` / `output_tokens`, `gen_ai.input.messages` /
  `gen_ai.output.messages`, `gen_ai.response.id`), or OpenInference LLM (`llm.model_name`,
  `llm.token_count.prompt` / `completion`, `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*`,
  `input.value` / `output.value`, `llm.cost.total`); the trace's last LLM span is its answer, its duration the
  latency, a span with status ERROR an answer with its error;
- the question: the root span's `input.value` (OpenInference) or its `gen_ai.input.messages`' last user message,
  else the retrieval query, else the LLM span's last user message;
- evaluations: the `gen_ai.evaluation.result` event as a log record (the SDK's `Logger.emit(event_name=...)`; the
  Collector writes it under resourceLogs) or a span event of that name: `gen_ai.evaluation.name`,
  `gen_ai.evaluation.score.value` / `.score.label`, `gen_ai.evaluation.explanation`. It is linked to its trace by the
  record's trace and span ids, or else by `gen_ai.response.id` (an LLM span's); a link to no span of the files is
  refused. OpenInference EVALUATOR spans (`evaluation.name` / `.score` / `.label` / `.explanation`) evaluate their
  parent span. The evaluator's kind is OpenInference's `evaluation.annotator_kind` (or `annotation.annotator_kind`)
  on either, HUMAN / LLM / CODE, default LLM (the GenAI event has no kind of its own): HUMAN lands as a human label.
The application version is the resource attribute `--version-attribute` names (default `service.version`), else the
root span's attribute of that name.

Errors name the file, the line, the span (its id) and the field as a JSON path (`resourceSpans[0].scopeSpans[0].
spans[3].attributes["gen_ai.usage.input_tokens"]`): a line that is not JSON, a file of another format (no
resourceSpans / resourceLogs), a span without a trace id, an id that is not hex, an attribute of the wrong type (a
token count that is text, a score that is not a number). Nothing lands unless every file reads.

Memory: a file is read a line (one export request) at a time, and each span is reduced to what the mapping needs
before the next line is read: peak memory follows the traces' content, not the file's size
(bench/traces/README.md: a 100,000-span file).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sources.lines import decode_line, file_lines
from python_jobs.sources.traces import (
    Evaluation,
    RetrievedDoc,
    Trace,
    TraceOptions,
    TraceSummary,
    land_traces,
    trace_id_hex,
)

EVALUATION_EVENT = "gen_ai.evaluation.result"
LLM_OPERATIONS = {"chat", "text_completion", "generate_content"}
KIND_NAMES = {"HUMAN": "human", "LLM": "llm", "CODE": "code"}
STATUS_ERROR = 2


def any_value(v: Any) -> Any:
    """An OTLP/JSON AnyValue as Python (ints from their strings, arrays and kvlists unwrapped)."""
    if not isinstance(v, dict) or not v:
        return None
    (kind, x), = list(v.items())[:1]
    if kind == "stringValue":
        return x
    if kind == "intValue":
        return int(x)
    if kind == "doubleValue":
        return float(x)
    if kind == "boolValue":
        return bool(x)
    if kind == "arrayValue":
        return [any_value(i) for i in (x or {}).get("values", [])]
    if kind == "kvlistValue":
        return {kv.get("key"): any_value(kv.get("value")) for kv in (x or {}).get("values", [])}
    return x


@dataclass
class Attrs:
    """A span's (or record's) attributes with their place, so a wrong type names the field."""

    values: dict[str, Any]
    file: str
    line: int
    path: str
    what: str  # "span 0123..." for errors

    def err(self, key: str, message: str) -> InputError:
        return InputError(f"{self.what}: {message}", file=self.file, line=self.line,
                          field=f'{self.path}.attributes["{key}"]')

    def text(self, key: str) -> str | None:
        v = self.values.get(key)
        if v is None or isinstance(v, str):
            return v
        raise self.err(key, f"expected a string, got {json.dumps(v)[:60]}")

    def integer(self, key: str) -> int | None:
        v = self.values.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or v < 0:
            raise self.err(key, f"expected a whole number of tokens (intValue), got {json.dumps(v)[:60]}")
        return int(v)

    def real(self, key: str) -> float | None:
        v = self.values.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.err(key, f"expected a number (doubleValue or intValue), got {json.dumps(v)[:60]}")
        return float(v)

    def indexed(self, prefix: str) -> list[dict[str, Any]]:
        """OpenInference's flattened lists: `<prefix>.N.<rest>` -> [{rest: value}] in N order."""
        items: dict[int, dict[str, Any]] = {}
        for k, v in self.values.items():
            if k.startswith(prefix + "."):
                index, _, rest = k[len(prefix) + 1:].partition(".")
                if index.isdigit():
                    items.setdefault(int(index), {})[rest] = (k, v)
        return [items[i] for i in sorted(items)]


@dataclass
class SpanInfo:
    """What the mapping needs of one span."""

    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    line: int
    role: str | None = None  # retriever | llm | evaluator
    version: str | None = None
    question: str | None = None
    documents: list[RetrievedDoc] = field(default_factory=list)
    retriever: str | None = None
    answer: str | None = None
    prompt: str | None = None
    user_message: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    error: str | None = None
    response_id: str | None = None
    evaluation: Evaluation | None = None


@dataclass
class TraceState:
    trace_id: str
    file: str
    line: int
    service: str | None = None
    resource_version: str | None = None
    spans: dict[str, SpanInfo] = field(default_factory=dict)
    evaluations: list[Evaluation] = field(default_factory=list)


@dataclass
class PendingEvaluation:
    evaluation: Evaluation
    trace_id: str | None
    span_id: str | None
    response_id: str | None
    where: str


def kind_of(attrs: Attrs) -> str:
    raw = attrs.text("evaluation.annotator_kind") or attrs.text("annotation.annotator_kind")
    if raw is None:
        return "llm"
    if raw.upper() not in KIND_NAMES:
        key = next(k for k in ("evaluation.annotator_kind", "annotation.annotator_kind") if k in attrs.values)
        raise attrs.err(key, f"annotator kind {raw!r} is none of HUMAN, LLM, CODE")
    return KIND_NAMES[raw.upper()]


def json_array(attrs: Attrs, key: str, raw: object, what: str) -> list:
    """An attribute that holds an array, as an array or as its JSON text (the GenAI conventions allow both); an
    error naming the attribute otherwise."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise attrs.err(key, f"expected {what}: {exc.msg}") from None
    if not isinstance(raw, list):
        raise attrs.err(key, f"expected {what}")
    return raw


def messages_text(raw: str | None, attrs: Attrs, key: str) -> list[tuple[str, str]]:
    """GenAI `gen_ai.input.messages` / `output.messages` (a JSON string of [{role, parts: [{type, content}]}]) ->
    [(role, text)]."""
    if raw is None:
        return []
    messages = json_array(attrs, key, raw, "a JSON array of messages")
    out = []
    for m in messages:
        if not isinstance(m, dict):
            raise attrs.err(key, "a message is not a JSON object")
        parts = m.get("parts")
        if isinstance(parts, list):
            text = "".join(str(p.get("content", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text")
        else:
            text = m.get("content") if isinstance(m.get("content"), str) else ""
        out.append((str(m.get("role", "")), text))
    return out


def oi_messages(attrs: Attrs, prefix: str) -> list[tuple[str, str]]:
    out = []
    for item in attrs.indexed(prefix):
        role = item.get("message.role", (None, ""))[1]
        content = item.get("message.content", (None, None))[1]
        for k in ("message.role", "message.content"):
            if k in item and item[k][1] is not None and not isinstance(item[k][1], str):
                raise attrs.err(item[k][0], "expected a string")
        out.append((role or "", content or ""))
    return out


def genai_documents(attrs: Attrs) -> list[RetrievedDoc]:
    key = "gen_ai.retrieval.documents"
    raw = attrs.values.get(key)
    if raw is None:
        return []
    raw = json_array(attrs, key, raw, "an array of documents ({id, score})")
    docs = []
    for i, d in enumerate(raw):
        if not isinstance(d, dict) or not isinstance(d.get("id"), str | int) or isinstance(d.get("id"), bool):
            raise attrs.err(key, f"document {i} has no id")
        score = d.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise attrs.err(key, f"document {i}'s score {score!r} is not a number")
        content = d.get("content")
        docs.append(RetrievedDoc(str(d["id"]), None if score is None else float(score),
                                 content if isinstance(content, str) else None))
    return docs


def oi_documents(attrs: Attrs, prefix: str) -> list[RetrievedDoc]:
    docs = []
    for item in attrs.indexed(prefix):
        key, doc_id = item.get("document.id", (f"{prefix}.?.document.id", None))
        if doc_id is None or isinstance(doc_id, bool) or not isinstance(doc_id, str | int):
            raise attrs.err(key, "a retrieved document has no id (document.id)")
        score = item.get("document.score")
        if score is not None and (isinstance(score[1], bool) or not isinstance(score[1], int | float)):
            raise attrs.err(score[0], f"expected a number, got {json.dumps(score[1])[:60]}")
        content = item.get("document.content")
        if content is not None and not isinstance(content[1], str):
            raise attrs.err(content[0], "expected a string")
        docs.append(RetrievedDoc(str(doc_id), None if score is None else float(score[1]),
                                 None if content is None else content[1]))
    return docs


def evaluation_of(attrs: Attrs, names: tuple[str, str, str, str], span_id: str | None, time_ns: int,
                  evaluator: str | None) -> Evaluation:
    name_key, score_key, label_key, explanation_key = names
    name = attrs.text(name_key)
    if not name:
        raise attrs.err(name_key, "an evaluation without a name")
    return Evaluation(name=name, kind=kind_of(attrs), score=attrs.real(score_key), label=attrs.text(label_key),
                      explanation=attrs.text(explanation_key), evaluator=evaluator, span_id=span_id,
                      time_ns=time_ns, file=attrs.file, line=attrs.line,
                      field=f'{attrs.path}.attributes["{score_key}"]')


GENAI_EVAL = ("gen_ai.evaluation.name", "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label",
              "gen_ai.evaluation.explanation")
OI_EVAL = ("evaluation.name", "evaluation.score", "evaluation.label", "evaluation.explanation")


def span_info(span: dict, attrs: Attrs, span_id: str, parent: str | None, line: int,
              version_attribute: str) -> SpanInfo:
    start, end = _nanos(span, "startTimeUnixNano", attrs), _nanos(span, "endTimeUnixNano", attrs)
    s = SpanInfo(span_id, parent, start, end, line, version=_text_any(attrs, version_attribute))
    op = attrs.text("gen_ai.operation.name")
    oi = (attrs.text("openinference.span.kind") or "").upper()
    s.question = attrs.text("input.value") if parent is None else None
    if parent is None and s.question is None:
        users = [t for r, t in messages_text(attrs.text("gen_ai.input.messages"), attrs, "gen_ai.input.messages")
                 if r == "user"]
        s.question = users[-1] if users else None
    if op == "retrieval" or oi in ("RETRIEVER", "RERANKER"):
        s.role = "retriever"
        if oi == "RERANKER":
            s.documents = oi_documents(attrs, "reranker.output_documents")
            s.retriever = attrs.text("reranker.model_name") or span.get("name")
        else:
            s.documents = genai_documents(attrs) or oi_documents(attrs, "retrieval.documents")
            s.retriever = attrs.text("gen_ai.data_source.id") or span.get("name")
        s.user_message = attrs.text("gen_ai.retrieval.query.text") or (
            attrs.text("input.value") if oi == "RETRIEVER" else None)
    elif op in LLM_OPERATIONS or oi == "LLM":
        s.role = "llm"
        s.model = (attrs.text("gen_ai.response.model") or attrs.text("gen_ai.request.model")
                   or attrs.text("llm.model_name"))
        s.prompt_tokens = attrs.integer("gen_ai.usage.input_tokens")
        if s.prompt_tokens is None:
            s.prompt_tokens = attrs.integer("llm.token_count.prompt")
        s.completion_tokens = attrs.integer("gen_ai.usage.output_tokens")
        if s.completion_tokens is None:
            s.completion_tokens = attrs.integer("llm.token_count.completion")
        s.cost_usd = attrs.real("llm.cost.total")
        s.response_id = attrs.text("gen_ai.response.id")
        inputs = (messages_text(attrs.text("gen_ai.input.messages"), attrs, "gen_ai.input.messages")
                  or oi_messages(attrs, "llm.input_messages"))
        outputs = (messages_text(attrs.text("gen_ai.output.messages"), attrs, "gen_ai.output.messages")
                   or oi_messages(attrs, "llm.output_messages"))
        s.prompt = "\n".join(f"[{r}] {t}" for r, t in inputs) if inputs else attrs.text("input.value")
        s.answer = outputs[-1][1] if outputs else attrs.text("output.value")
        users = [t for r, t in inputs if r == "user"]
        s.user_message = users[-1] if users else None
        status = span.get("status") or {}
        if status.get("code") == STATUS_ERROR:
            s.error = status.get("message") or "the LLM span ended with status ERROR"
    elif oi == "EVALUATOR":
        s.role = "evaluator"
        s.evaluation = evaluation_of(attrs, OI_EVAL, parent, end, attrs.text("llm.model_name"))
    return s


def _text_any(attrs: Attrs, key: str) -> str | None:
    v = attrs.values.get(key)
    return None if v is None else str(v)


def _nanos(obj: dict, key: str, attrs: Attrs) -> int:
    raw = obj.get(key)
    try:
        return int(raw)
    except (TypeError, ValueError):
        raise InputError(f"{attrs.what}: {key} {raw!r} is not a time in nanoseconds", file=attrs.file,
                         line=attrs.line, field=f"{attrs.path}.{key}") from None


def attributes(obj: dict, file: str, line: int, path: str, what: str) -> Attrs:
    raw = obj.get("attributes") or []
    if not isinstance(raw, list):
        raise InputError(f"{what}: attributes is not a list", file=file, line=line, field=f"{path}.attributes")
    values = {}
    for kv in raw:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise InputError(f"{what}: an attribute without a key", file=file, line=line, field=f"{path}.attributes")
        try:
            values[kv["key"]] = any_value(kv.get("value"))
        except (TypeError, ValueError):
            raise InputError(f"{what}: value {json.dumps(kv.get('value'))[:60]} is not an OTLP/JSON AnyValue",
                             file=file, line=line, field=f'{path}.attributes["{kv["key"]}"]') from None
    return Attrs(values, file, line, path, what)


class OtlpReader:
    def __init__(self, version_attribute: str) -> None:
        self.version_attribute = version_attribute
        self.traces: dict[str, TraceState] = {}
        self.pending: list[PendingEvaluation] = []

    def read(self, path: Path) -> None:
        file = str(path)
        content = False
        for n, raw in file_lines(path):
            if not raw.strip():
                continue
            text = decode_line(raw, file, n, lambda _: "<record>")
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as exc:
                kind = "not JSON" if not content else "malformed JSON (a truncated line?)"
                raise InputError(f"{kind} at column {exc.colno}: {exc.msg}; an OTLP/JSON file has one export "
                                 "request per line", file=file, line=n,
                                 field="resourceSpans" if not content else "<line>") from None
            if not isinstance(doc, dict) or not ({"resourceSpans", "resourceLogs"} & set(doc)):
                keys = ", ".join(list(doc)[:4]) if isinstance(doc, dict) else type(doc).__name__
                raise InputError(f"not an OTLP/JSON export request (it has {keys or 'nothing'}; expected "
                                 "resourceSpans or resourceLogs, as the Collector's file exporter writes)", file=file,
                                 line=n, field="resourceSpans")
            content = True
            for i, rs in enumerate(doc.get("resourceSpans") or []):
                self._resource_spans(rs, file, n, f"resourceSpans[{i}]")
            for i, rl in enumerate(doc.get("resourceLogs") or []):
                self._resource_logs(rl, file, n, f"resourceLogs[{i}]")
        if not content:
            raise InputError("file is empty: expected OTLP/JSON export requests, one per line", file=file, line=1,
                             field="resourceSpans")

    def _ids(self, obj: dict, file: str, line: int, path: str, what: str) -> tuple[str, str | None]:
        raw_trace = obj.get("traceId")
        if not raw_trace:
            raise InputError(f"{what} has no trace id", file=file, line=line, field=f"{path}.traceId")
        trace = trace_id_hex(str(raw_trace), file, line, f"{path}.traceId")
        raw_span = obj.get("spanId")
        span = trace_id_hex(str(raw_span), file, line, f"{path}.spanId", 16) if raw_span else None
        return trace, span

    def _resource_spans(self, rs: dict, file: str, line: int, path: str) -> None:
        res = attributes(rs.get("resource") or {}, file, line, f"{path}.resource", "resource")
        service = _text_any(res, "service.name")
        version = _text_any(res, self.version_attribute)
        for j, ss in enumerate(rs.get("scopeSpans") or []):
            for k, span in enumerate(ss.get("spans") or []):
                p = f"{path}.scopeSpans[{j}].spans[{k}]"
                name = span.get("name")
                raw_span_id = span.get("spanId")
                what = f"span {raw_span_id or '?'} ({name})"
                trace_id, span_id = self._ids(span, file, line, p, what)
                if span_id is None:
                    raise InputError(f"{what} has no span id", file=file, line=line, field=f"{p}.spanId")
                raw_parent = span.get("parentSpanId")
                parent = trace_id_hex(str(raw_parent), file, line, f"{p}.parentSpanId", 16) if raw_parent else None
                attrs = attributes(span, file, line, p, f"span {span_id} ({name})")
                info = span_info(span, attrs, span_id, parent, line, self.version_attribute)
                state = self.traces.get(trace_id)
                if state is None:
                    state = self.traces[trace_id] = TraceState(trace_id, file, line)
                state.service = state.service or service
                state.resource_version = state.resource_version or version
                if span_id in state.spans:
                    raise InputError(f"span {span_id} of trace {trace_id} is given twice (first on line "
                                     f"{state.spans[span_id].line})", file=file, line=line, field=f"{p}.spanId")
                if info.role is not None or parent is None:
                    state.spans[span_id] = info
                else:  # a span the mapping needs only as a link target (an evaluation's span)
                    state.spans[span_id] = SpanInfo(span_id, parent, info.start_ns, info.end_ns, line)
                for e_i, event in enumerate(span.get("events") or []):
                    if event.get("name") == EVALUATION_EVENT:
                        ep = f"{p}.events[{e_i}]"
                        ea = attributes(event, file, line, ep, f"span {span_id} event {EVALUATION_EVENT}")
                        ev = evaluation_of(ea, GENAI_EVAL, span_id, _nanos(event, "timeUnixNano", ea), None)
                        state.evaluations.append(ev)

    def _resource_logs(self, rl: dict, file: str, line: int, path: str) -> None:
        for j, sl in enumerate(rl.get("scopeLogs") or []):
            for k, rec in enumerate(sl.get("logRecords") or []):
                p = f"{path}.scopeLogs[{j}].logRecords[{k}]"
                what = f"log record {k} ({EVALUATION_EVENT})"
                attrs = attributes(rec, file, line, p, what)
                if (rec.get("eventName") or attrs.values.get("event.name")) != EVALUATION_EVENT:
                    continue  # other logs are not the warehouse's
                trace_id = span_id = None
                if rec.get("traceId") or rec.get("spanId"):
                    trace_id, span_id = self._ids(rec, file, line, p, what)
                time_ns = _nanos(rec, "timeUnixNano" if rec.get("timeUnixNano") else "observedTimeUnixNano", attrs)
                ev = evaluation_of(attrs, GENAI_EVAL, span_id, time_ns, None)
                self.pending.append(PendingEvaluation(ev, trace_id, span_id, attrs.text("gen_ai.response.id"), p))

    def resolve(self) -> Iterator[Trace]:
        by_response: dict[str, tuple[str, str]] = {}
        for t in self.traces.values():
            for s in t.spans.values():
                if s.response_id:
                    by_response[s.response_id] = (t.trace_id, s.span_id)
        for pe in self.pending:
            ev = pe.evaluation
            if pe.span_id is not None:
                state = self.traces.get(pe.trace_id or "")
                if state is None or pe.span_id not in state.spans:
                    raise InputError(f"evaluation {ev.name!r} is linked to span {pe.span_id} of trace {pe.trace_id},"
                                     " which is in none of the files given", file=ev.file, line=ev.line,
                                     field=f"{pe.where}.spanId")
                state.evaluations.append(ev)
            elif pe.response_id is not None:
                if pe.response_id not in by_response:
                    raise InputError(f"evaluation {ev.name!r} is linked to gen_ai.response.id {pe.response_id!r}, "
                                     "which no LLM span of the files has", file=ev.file, line=ev.line,
                                     field=f'{pe.where}.attributes["gen_ai.response.id"]')
                trace_id, span_id = by_response[pe.response_id]
                ev.span_id = span_id
                self.traces[trace_id].evaluations.append(ev)
            else:
                raise InputError(f"evaluation {ev.name!r} names no span (traceId / spanId) and no "
                                 "gen_ai.response.id", file=ev.file, line=ev.line, field=f"{pe.where}.spanId")
        for state in self.traces.values():
            yield trace_of(state)


def trace_of(state: TraceState) -> Trace:
    spans = list(state.spans.values())
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in state.spans]
    root = min(roots, key=lambda s: s.start_ns) if roots else None
    retrievers = sorted((s for s in spans if s.role == "retriever"), key=lambda s: s.end_ns)
    llms = sorted((s for s in spans if s.role == "llm"), key=lambda s: s.end_ns)
    ret, llm = (retrievers[-1] if retrievers else None), (llms[-1] if llms else None)
    question = next((q for q in ((root.question if root else None),
                                 *(s.user_message for s in retrievers), *(s.user_message for s in llms)) if q), None)
    evaluations = state.evaluations + [s.evaluation for s in spans if s.evaluation is not None]
    return Trace(
        trace_id=state.trace_id, file=state.file, line=state.line,
        start_ns=min(s.start_ns for s in spans) if spans else None, service=state.service,
        version=state.resource_version or (root.version if root else None), question=question,
        question_span_id=root.span_id if root else None,
        retrieval_span_id=ret.span_id if ret else None, retriever=ret.retriever if ret else None,
        documents=ret.documents if ret else [], answer_span_id=llm.span_id if llm else None,
        answer=llm.answer if llm else None, prompt=llm.prompt if llm else None, model=llm.model if llm else None,
        prompt_tokens=llm.prompt_tokens if llm else None, completion_tokens=llm.completion_tokens if llm else None,
        latency_ms=(llm.end_ns - llm.start_ns) / 1e6 if llm else None, cost_usd=llm.cost_usd if llm else None,
        error=llm.error if llm else None, evaluations=evaluations)


def read_otlp(paths: list[Path], version_attribute: str) -> list[Trace]:
    reader = OtlpReader(version_attribute)
    for p in paths:
        reader.read(p)
    return list(reader.resolve())


def ingest_otlp(lake: Lake, paths: list[Path], opts: TraceOptions, dry_run: bool = False) -> TraceSummary:
    """Read every file (nothing lands unless all read), then land their traces (sources/traces.py)."""
    return land_traces(lake, read_otlp(paths, opts.version_attribute), opts, dry_run=dry_run)
