"""Arize Phoenix in: `finrag ingest traces-phoenix --endpoint URL --project NAME` (docs/traces_phoenix.md).

Phoenix stores OpenInference spans (what its OTLP endpoint `/v1/traces` received) and annotations of them, by
project. This reader pulls a project's spans and their span annotations from a running Phoenix through its client
(arize-phoenix-client: `Client.spans.get_spans`, `Client.spans.get_span_annotations`, the REST API's
`/v1/projects/{project}/spans` and `/span_annotations`), then maps them as the OTLP reader maps OpenInference spans
(sources/otlp_traces.py `span_info`: `openinference.span.kind` RETRIEVER / RERANKER / LLM / EVALUATOR,
`retrieval.documents.N.document.*`, `llm.*`, the root's `input.value`). Phoenix gives a span's kind as its own field
(`span_kind`), its times as ISO text and its status as `status_code` / `status_message`; the attributes as a flat
map of the OpenInference names.

Annotations: each span annotation (`name`, `annotator_kind` HUMAN / LLM / CODE, `result.score` / `.label` /
`.explanation`, `identifier`, `created_at`) is an evaluation of its span's trace: HUMAN lands as a human label (the
annotator is the Phoenix user, else the annotation's `metadata.annotator`), LLM as a judgment of the run's LLM judge,
CODE as one of its code judge. Several annotations of one span and name (Phoenix keeps one per `identifier`) are the
evaluator's repeats, in the order Phoenix made them. Phoenix's `note` annotations (the UI's notes) are not evaluations
and are left out, as the client leaves them out.

The run: a Phoenix project is the service; the application version is the root span's attribute
`--version-attribute` names (default `service.version`; Phoenix keeps span attributes, not the resource's), else that
key of the root's OpenInference `metadata`. Everything is pulled before anything lands: a Phoenix that does not
answer, a project it does not have, a refused request is one error naming the endpoint (and nothing lands); a bad
attribute names the span and the attribute. The client is imported when the verb runs (a read verb never loads it).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sources.otlp_traces import KIND_NAMES, STATUS_ERROR, Attrs, SpanInfo, TraceState, span_info, trace_of
from python_jobs.sources.traces import Evaluation, Trace, TraceOptions, TraceSummary, land_traces, trace_id_hex

PAGE = 1000
TIMEOUT_S = 60


def iso_ns(text: object, where: str, field: str) -> int:
    """Phoenix's ISO times (`2026-11-02T00:00:01.5+00:00`) as Unix nanoseconds."""
    try:
        t = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{text!r} is not an ISO time", file=where, field=field) from None
    return int(t.timestamp()) * 10**9 + t.microsecond * 1000


def annotation_order(a: dict) -> tuple[int, int, str]:
    """Phoenix's creation order: `created_at` (seconds), then the row number in its global id
    (`SpanAnnotation:<n>`, base64)."""
    raw = str(a.get("id") or "")
    try:
        n = int(base64.b64decode(raw).decode().rpartition(":")[2])
    except (ValueError, UnicodeDecodeError):
        n = 0
    return iso_ns(a.get("created_at") or "1970-01-01T00:00:00+00:00", "", "created_at"), n, raw


class PhoenixReader:
    def __init__(self, endpoint: str | None, project: str, version_attribute: str) -> None:
        self.endpoint, self.project, self.version_attribute = endpoint, project, version_attribute
        self.traces: dict[str, TraceState] = {}

    def pull(self) -> tuple[str, list[dict], list[dict]]:
        """(the endpoint, the project's spans, their annotations), or one error naming the endpoint."""
        import httpx
        from phoenix.client import Client

        client = Client(base_url=self.endpoint) if self.endpoint else Client()
        base = str(client._client.base_url).rstrip("/")  # what the client resolved (PHOENIX_BASE_URL, else :6006)
        try:
            spans = client.spans.get_spans(project_identifier=self.project, limit=10**12, timeout=TIMEOUT_S)
            annotations = client.spans.get_span_annotations(
                span_ids=[s["context"]["span_id"] for s in spans], project_identifier=self.project, limit=PAGE,
                timeout=TIMEOUT_S) if spans else []
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            if status == 404:
                detail = f"Phoenix has no project {self.project!r} (--project names one of its projects)"
            elif status in (401, 403):
                detail = f"Phoenix refused the request ({status}): set PHOENIX_API_KEY to a key of this Phoenix"
            else:
                detail = f"Phoenix answered {status} to {exc.request.url.path}: {exc.response.text[:200]}"
            raise InputError(f"{base}: {detail}", field="--endpoint" if status != 404 else "--project") from None
        except httpx.HTTPError as exc:
            raise InputError(f"no Phoenix answers at {base} ({type(exc).__name__}: {exc or 'no response'}): is it "
                             "running? (--endpoint, or PHOENIX_BASE_URL)", field="--endpoint") from None
        return base, spans, annotations

    def read(self) -> list[Trace]:
        base, spans, annotations = self.pull()
        where = f"{base}/v1/projects/{self.project}/spans"
        if not spans:
            raise InputError(f"project {self.project!r} holds no spans", file=where, field="--project")
        for i, span in enumerate(spans):
            self.span(span, where, f"data[{i}]")
        ann_where = f"{base}/v1/projects/{self.project}/span_annotations"
        by_span = {s_id: t for t in self.traces.values() for s_id in t.spans}
        for i, a in sorted(enumerate(annotations), key=lambda p: annotation_order(p[1])):
            self.annotation(a, by_span, ann_where, f"data[{i}]")
        return [trace_of(t) for t in self.traces.values()]

    def span(self, span: dict, where: str, path: str) -> None:
        context = span.get("context") or {}
        name = span.get("name")
        raw_span = context.get("span_id")
        what = f"span {raw_span or '?'} ({name})"
        if not context.get("trace_id") or not raw_span:
            raise InputError(f"{what} has no trace or span id", file=where, field=f"{path}.context")
        trace_id = trace_id_hex(str(context["trace_id"]), where, None, f"{path}.context.trace_id")
        span_id = trace_id_hex(str(raw_span), where, None, f"{path}.context.span_id", 16)
        parent = span.get("parent_id")
        parent = trace_id_hex(str(parent), where, None, f"{path}.parent_id", 16) if parent else None
        values = span.get("attributes") or {}
        if not isinstance(values, dict):
            raise InputError(f"{what}: attributes is not a map", file=where, field=f"{path}.attributes")
        kind = span.get("span_kind")
        values = {**values, "openinference.span.kind": values.get("openinference.span.kind", kind)}
        attrs = Attrs(values, where, None, path, f"span {span_id} ({name})")
        otlp_like = {"name": name,
                     "startTimeUnixNano": iso_ns(span.get("start_time"), where, f"{path}.start_time"),
                     "endTimeUnixNano": iso_ns(span.get("end_time"), where, f"{path}.end_time"),
                     "status": {"code": STATUS_ERROR if span.get("status_code") == "ERROR" else 0,
                                "message": span.get("status_message") or None}}
        info = span_info(otlp_like, attrs, span_id, parent, None, self.version_attribute)
        if parent is None:
            info.version = info.version or metadata_value(values.get("metadata"), self.version_attribute)
        state = self.traces.setdefault(trace_id, TraceState(trace_id, where, None, service=self.project))
        if span_id in state.spans:
            raise InputError(f"span {span_id} of trace {trace_id} is given twice", file=where,
                             field=f"{path}.context.span_id")
        state.spans[span_id] = info if info.role is not None or parent is None else SpanInfo(
            span_id, parent, info.start_ns, info.end_ns, None)

    def annotation(self, a: dict, by_span: dict[str, TraceState], where: str, path: str) -> None:
        span_id = str(a.get("span_id") or "")
        name = a.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"an annotation of span {span_id} without a name", file=where, field=f"{path}.name")
        kind = str(a.get("annotator_kind") or "").upper()
        if kind not in KIND_NAMES:
            raise InputError(f"annotation {name!r} of span {span_id}: annotator kind {kind!r} is none of HUMAN, "
                             "LLM, CODE", file=where, field=f"{path}.annotator_kind")
        state = by_span.get(span_id)
        if state is None:
            raise InputError(f"annotation {name!r} names span {span_id}, which the project's spans do not hold",
                             file=where, field=f"{path}.span_id")
        result = a.get("result") or {}
        score = result.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise InputError(f"annotation {name!r} of span {span_id}: expected a numeric score, got {score!r}",
                             file=where, field=f"{path}.result.score")
        meta = a.get("metadata") if isinstance(a.get("metadata"), dict) else {}
        evaluator = a.get("user_id") or meta.get("annotator") or meta.get("model")
        state.evaluations.append(Evaluation(
            name=name, kind=KIND_NAMES[kind], score=None if score is None else float(score),
            label=result.get("label"), explanation=result.get("explanation"),
            evaluator=None if evaluator is None else str(evaluator), span_id=span_id,
            time_ns=annotation_order(a)[0], file=where, line=None, field=f"{path}.result.score"))


def metadata_value(raw: Any, key: str) -> str | None:
    """A key of OpenInference's `metadata` attribute (a JSON object, or its text)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return None
    if isinstance(raw, dict) and raw.get(key) is not None:
        return str(raw[key])
    return None


def read_phoenix(endpoint: str | None, project: str, version_attribute: str) -> list[Trace]:
    return PhoenixReader(endpoint, project, version_attribute).read()


def ingest_phoenix(lake: Lake, endpoint: str | None, project: str, opts: TraceOptions,
                   dry_run: bool = False) -> TraceSummary:
    """Pull the project's spans and annotations (nothing lands unless all are read), then land their traces
    (sources/traces.py)."""
    return land_traces(lake, read_phoenix(endpoint, project, opts.version_attribute), opts, dry_run=dry_run)
