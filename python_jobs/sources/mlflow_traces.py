"""MLflow traces in: `finrag ingest traces-mlflow --tracking-uri URI --experiment NAME` (docs/traces_mlflow.md).

What an MLflow tracking store holds (MLflow 3: trace schema v3): an experiment's traces, each a trace info (the trace
id `tr-<32 hex>`, its metadata and tags, its assessments) and its spans. The store is read through MLflow's own
client (mlflow-skinny: a local `sqlite:///...` store, or a tracking server `http(s)://...`; MlflowClient.search_traces
page by page, spans and assessments included). mlflow is imported when the store is read, not before.

Spans (MLflow's span types and attributes, as `mlflow.start_span` / `@mlflow.trace` and the autologgers record them):
- the question: the root span's inputs (`mlflow.spanInputs`: text; a JSON object's `question` / `query` / `input` /
  `messages`; a message list's last user message), else the retriever's query, else the LLM's last user message;
  its start time places the trace in its run's window;
- the retrieval: the trace's last span (by end time) of type RETRIEVER or RERANKER: its outputs, a list of MLflow
  Documents (`id`, else `metadata.doc_uri` / `metadata.chunk_id` / `metadata.id`; `page_content` the content; the
  score `score`, `metadata.score` or `metadata.relevance_score`), ranked as listed;
- the answer: the trace's last span of type CHAT_MODEL or LLM: its outputs (text, a chat completion's first choice, a
  message), its inputs as the prompt, `mlflow.llm.model` (else the inputs' `model`) the model,
  `mlflow.chat.tokenUsage` (`input_tokens` / `output_tokens`) the tokens, `mlflow.llm.cost` (`total_cost`) the cost,
  its duration the latency; a span with status ERROR an answer with its error;
- assessments: each valid Feedback (an overridden one is left out; Expectations, the ground truth, too): `name`,
  `value` (a number, a boolean as 1 / 0; text lands as a failed judgment with its label), `rationale`, `source`
  (`source_type` HUMAN: a human label, the annotator `source_id`; LLM_JUDGE: the LLM judge run's judgment, the judge
  `source_id`; CODE: the code judge run's), `span_id`, `create_time_ms` (the repeats' order); a feedback that
  carries an error lands as a failed judgment.
The application version is the trace's metadata key or tag `--version-attribute` names (default `app_version`, the
key MLflow's docs use), else the root span's attribute of that name; a run's service is the experiment's name.

Errors name the store (its URI, without credentials), the trace, the span and the field: a store that does not exist
or is not reachable, a sqlite file that is not an MLflow store, an experiment that does not exist, a trace without
spans or without a root span, an attribute or value of the wrong type (token counts that are not whole numbers, a
cost that is not a number, retriever outputs that are not a list of documents, a feedback value that is a list or an
object). Nothing lands unless every trace reads.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sources.traces import (
    Evaluation,
    RetrievedDoc,
    Trace,
    TraceOptions,
    TraceSummary,
    answer_text,
    land_traces,
    question_text,
)

KINDS = {"HUMAN": "human", "LLM_JUDGE": "llm", "AI_JUDGE": "llm", "CODE": "code"}
RETRIEVERS = ("RETRIEVER", "RERANKER")
LLMS = ("CHAT_MODEL", "LLM")
PAGE = 200
# what MLflow's client reads when it starts: no usage reporting from an ingest, and a server that does not answer is
# an error now, not after minutes of retries (a user's own settings win)
CLIENT_ENV = {"MLFLOW_DISABLE_TELEMETRY": "true", "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
              "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}


def shown(uri: str) -> str:
    """The store's URI without a password (for errors and provenance)."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    host = parts.hostname or ""
    netloc = f"{parts.username}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def check_local_store(uri: str) -> None:
    """A `sqlite:///` store must exist and be MLflow's (MLflow's client would create a new one, or add its tables to
    any sqlite file)."""
    if not uri.startswith("sqlite:"):
        return
    path = uri[len("sqlite:///"):] if uri.startswith("sqlite:///") else ""
    if not path or path.startswith(":memory:"):
        raise InputError("a sqlite store is a file: sqlite:///relative/path.db or sqlite:////absolute/path.db",
                         file=shown(uri), field="--tracking-uri")
    if not Path(path).is_file():
        raise InputError(f"no MLflow tracking store: {path} does not exist", file=shown(uri), field="--tracking-uri")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            tables = {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise InputError(f"not a sqlite database ({exc})", file=shown(uri), field="--tracking-uri") from None
    if not {"experiments", "trace_info", "alembic_version"} <= tables:
        raise InputError("a sqlite database, but not an MLflow tracking store (no experiments / trace_info tables)",
                         file=shown(uri), field="--tracking-uri")


class Where:
    """A trace's (and a span's) place in the store, for errors."""

    def __init__(self, store: str, trace_id: str, span: Any = None) -> None:
        self.store, self.trace_id, self.span = store, trace_id, span

    def err(self, field: str, message: str) -> InputError:
        what = f"trace {self.trace_id}" + (f", span {self.span.span_id} ({self.span.name})" if self.span else "")
        prefix = f"traces[{self.trace_id}]." + (f"spans[{self.span.span_id}]." if self.span else "")
        return InputError(f"{what}: {message}", file=self.store, field=prefix + field)

    def at(self, span: Any) -> Where:
        return Where(self.store, self.trace_id, span)


def _json(v: Any) -> str:
    return json.dumps(v, default=str)[:60]


def whole(where: Where, field: str, v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or v < 0:
        raise where.err(field, f"expected a whole number of tokens, got {_json(v)}")
    return int(v)


def number(where: Where, field: str, v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise where.err(field, f"expected a number, got {_json(v)}")
    return float(v)


def mapping(where: Where, field: str, v: Any) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise where.err(field, f"expected an object, got {_json(v)}")
    return v


def documents(where: Where, outputs: Any) -> list[RetrievedDoc]:
    field = 'attributes["mlflow.spanOutputs"]'
    if outputs is None:
        return []
    if isinstance(outputs, dict) and isinstance(outputs.get("documents"), list):
        outputs = outputs["documents"]
    if not isinstance(outputs, list):
        raise where.err(field, f"a retriever's outputs are a list of documents, got {_json(outputs)}")
    docs = []
    for i, d in enumerate(outputs):
        if not isinstance(d, dict):
            raise where.err(f"{field}[{i}]", f"a document is an object (page_content, metadata, id), got {_json(d)}")
        meta = mapping(where, f"{field}[{i}].metadata", d.get("metadata"))
        doc_id = next((x for x in (d.get("id"), meta.get("doc_uri"), meta.get("chunk_id"), meta.get("id"),
                                   meta.get("doc_id")) if isinstance(x, str | int) and not isinstance(x, bool)), None)
        if doc_id is None:
            raise where.err(f"{field}[{i}].id", "a retrieved document has no id (id, metadata.doc_uri, "
                                                "metadata.chunk_id)")
        key, score = next(((k, v) for k, v in (("score", d.get("score")), ("metadata.score", meta.get("score")),
                                                ("metadata.relevance_score", meta.get("relevance_score")))
                           if v is not None), ("score", None))
        content = d.get("page_content", d.get("content"))
        if content is not None and not isinstance(content, str):
            raise where.err(f"{field}[{i}].page_content", f"expected text, got {_json(content)}")
        docs.append(RetrievedDoc(str(doc_id), number(where, f"{field}[{i}].{key}", score), content))
    return docs


def version_of(info: Any, root: Any, key: str) -> str | None:
    for source in (info.trace_metadata or {}, info.tags or {}, root.attributes or {}):
        v = source.get(key)
        if v is not None and v != "":
            return str(v)
    return None


def evaluation(where: Where, a: Any, k: int) -> Evaluation | None:
    """One assessment as an evaluation; None for an expectation or an overridden feedback."""
    if a.feedback is None or a.valid is False:
        return None
    field = f"assessments[{k}]"
    source_type = str(getattr(a.source, "source_type", "") or "")
    if source_type not in KINDS:
        raise where.err(f"{field}.source.source_type",
                        f"assessment {a.name!r}: source type {source_type!r} is none of HUMAN, LLM_JUDGE, CODE")
    value, label = a.feedback.value, None
    if isinstance(value, bool):
        value = 1.0 if value else 0.0
    elif isinstance(value, str):
        value, label = None, value
    elif value is not None and not isinstance(value, int | float):
        raise where.err(f"{field}.feedback.value",
                        f"assessment {a.name!r}: expected a number, a boolean or a label, got {_json(value)}")
    explanation = a.rationale
    if a.feedback.error is not None:
        error = a.feedback.error
        value, label = None, label or f"error {getattr(error, 'error_code', '')}".strip()
        explanation = explanation or getattr(error, "error_message", None)
    return Evaluation(name=a.name, kind=KINDS[source_type], score=None if value is None else float(value),
                      label=label, explanation=explanation, evaluator=getattr(a.source, "source_id", None),
                      span_id=a.span_id, time_ns=(a.create_time_ms or 0) * 10**6, file=where.store, line=None,
                      field=f"traces[{where.trace_id}].{field}.feedback.value")


def to_trace(t: Any, store: str, service: str, version_attribute: str) -> Trace:
    info = t.info
    where = Where(store, info.trace_id)
    spans = list(t.data.spans) if t.data is not None else []
    if not spans:
        raise where.err("spans", "the trace has no spans in the store (its spans were not logged, or were archived)")
    ids = {s.span_id for s in spans}
    roots = [s for s in spans if s.parent_id is None or s.parent_id not in ids]
    if not any(s.parent_id is None for s in spans):
        raise where.err("spans", f"the trace has no root span (its {len(spans)} spans all have a parent)")
    root = min(roots, key=lambda s: s.start_time_ns)
    by_end = sorted(spans, key=lambda s: s.end_time_ns or s.start_time_ns)
    rets = [s for s in by_end if s.span_type in RETRIEVERS]
    llms = [s for s in by_end if s.span_type in LLMS]
    ret, llm = (rets[-1] if rets else None), (llms[-1] if llms else None)
    out = Trace(trace_id=info.trace_id, file=store, line=None, start_ns=root.start_time_ns, service=service,
                version=version_of(info, root, version_attribute), question_span_id=root.span_id)
    out.question = question_text(root.inputs)
    if ret is not None:
        out.retrieval_span_id, out.retriever = ret.span_id, ret.name
        out.documents = documents(where.at(ret), ret.outputs)
        out.question = out.question or question_text(ret.inputs)
    if llm is not None:
        w = where.at(llm)
        out.answer_span_id = llm.span_id
        out.answer = answer_text(llm.outputs)
        out.prompt = llm.inputs if llm.inputs is None or isinstance(llm.inputs, str) else json.dumps(
            llm.inputs, ensure_ascii=False, default=str)
        inputs = llm.inputs if isinstance(llm.inputs, dict) else {}
        model = llm.get_attribute("mlflow.llm.model") or inputs.get("model")
        if model is not None and not isinstance(model, str):
            raise w.err('attributes["mlflow.llm.model"]', f"expected text, got {_json(model)}")
        out.model = model
        usage = mapping(w, 'attributes["mlflow.chat.tokenUsage"]', llm.get_attribute("mlflow.chat.tokenUsage"))
        out.prompt_tokens = whole(w, 'attributes["mlflow.chat.tokenUsage"].input_tokens', usage.get("input_tokens"))
        out.completion_tokens = whole(w, 'attributes["mlflow.chat.tokenUsage"].output_tokens',
                                      usage.get("output_tokens"))
        cost = mapping(w, 'attributes["mlflow.llm.cost"]', llm.get_attribute("mlflow.llm.cost"))
        out.cost_usd = number(w, 'attributes["mlflow.llm.cost"].total_cost', cost.get("total_cost"))
        if llm.end_time_ns is not None:
            out.latency_ms = (llm.end_time_ns - llm.start_time_ns) / 1e6
        status = llm.status
        if str(getattr(status.status_code, "value", status.status_code)) == "ERROR":
            out.error = status.description or "the LLM span ended with status ERROR"
        out.question = out.question or question_text(inputs.get("messages") if inputs else llm.inputs)
    for k, a in enumerate(info.assessments or []):
        e = evaluation(where, a, k)
        if e is None:
            continue
        if e.span_id is not None and e.span_id not in ids:
            raise where.err(f"assessments[{k}].span_id",
                            f"assessment {e.name!r} names span {e.span_id}, which the trace does not hold")
        out.evaluations.append(e)
    return out


def read_mlflow(tracking_uri: str, experiment: str, version_attribute: str,
                filter_string: str | None = None) -> Iterator[Trace]:
    """The experiment's traces, page by page, as Trace records (errors name the store, trace, span and field)."""
    store = shown(tracking_uri)
    check_local_store(tracking_uri)
    for k, v in CLIENT_ENV.items():
        os.environ.setdefault(k, v)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = MlflowClient(tracking_uri=tracking_uri)
            exp = client.get_experiment_by_name(experiment)
            if exp is None and experiment.isdigit():
                try:
                    exp = client.get_experiment(experiment)
                except MlflowException:
                    exp = None
    except MlflowException as exc:
        raise InputError(f"the tracking store cannot be read: {first_line(exc)}", file=store,
                         field="--tracking-uri") from None
    if exp is None or exp.lifecycle_stage == "deleted":
        raise InputError(f"no experiment named (or with id) {experiment!r} in this tracking store"
                         + (" (it is deleted)" if exp is not None else ""), file=store, field="--experiment")
    def pages(include_spans: bool) -> Iterator[Any]:
        token = None
        while True:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    page = client.search_traces(locations=[exp.experiment_id], filter_string=filter_string,
                                                max_results=PAGE, page_token=token, include_spans=include_spans,
                                                order_by=["timestamp_ms ASC"])
            except MlflowException as exc:
                field = "--filter" if filter_string and "filter" in str(exc).lower() else "--tracking-uri"
                raise InputError(f"the traces of experiment {exp.name!r} cannot be read: {first_line(exc)}",
                                 file=store, field=field) from None
            yield from page
            token = page.token
            if not token:
                return

    # MLflow's client returns complete traces only (a trace whose spans the store lacks is left out of a search
    # with spans): the trace infos first, so that such a trace is an error, not a silent gap
    infos = {t.info.trace_id: t.info for t in pages(include_spans=False)}
    for t in pages(include_spans=True):
        infos.pop(t.info.trace_id, None)
        yield to_trace(t, store, exp.name, version_attribute)
    for trace_id, info in infos.items():
        stats = (info.trace_metadata or {}).get("mlflow.trace.sizeStats")
        try:
            recorded = f" (its size stats count {json.loads(stats)['num_spans']})" if stats else ""
        except (ValueError, KeyError, TypeError):
            recorded = ""
        raise Where(store, trace_id).err("spans", f"the store holds the trace but not all of its spans{recorded}: "
                                                  "a span that failed to log, or a trace still being written")


def first_line(exc: Exception) -> str:
    text = str(getattr(exc, "message", None) or exc)
    return text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__


def ingest_mlflow(lake: Lake, tracking_uri: str, experiment: str, opts: TraceOptions, filter_string: str | None = None,
                  dry_run: bool = False) -> TraceSummary:
    """Read every trace of the experiment (nothing lands unless all read), then land them (sources/traces.py)."""
    traces = list(read_mlflow(tracking_uri, experiment, opts.version_attribute, filter_string))
    return land_traces(lake, traces, opts, dry_run=dry_run)
