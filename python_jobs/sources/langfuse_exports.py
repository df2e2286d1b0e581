"""Langfuse blob-storage exports in: `finrag ingest traces-langfuse PATH...` (docs/traces_langfuse.md).

What Langfuse's blob storage integration writes (its export field reference): per export window, files under
`observations_v2/` (enriched observations: each observation with its trace's context) or, in the legacy mode,
`traces/` and `observations/`, and always `scores/`; in Parquet (the default since 2026-07), JSONL, JSON or CSV. A
PATH is such a file or a folder holding them (searched recursively); a file's table is the folder it is in, else its
columns say (a scores file has `source` and `value`, an observations file `type` and `trace_id`, a traces file
`timestamp` and no `type`). Parquet and JSONL are read (the others are refused, naming the file).

Fields read (snake_case, as the export writes them):
- observations: `id`, `trace_id`, `parent_observation_id` (null: the trace's root), `type` (SPAN, GENERATION, EVENT,
  RETRIEVER, EVALUATOR, ...), `name`, `start_time`, `end_time` (`YYYY-MM-DD HH:MM:SS.ffffff`, UTC; a Parquet
  timestamp as it is), `input`, `output` (JSON as text, or text), `provided_model_name`, `usage_details` (`input` /
  `output` tokens, or `prompt_tokens` / `completion_tokens`), `cost_details` (`total`) or `total_cost`, `level`
  (ERROR: a failed answer, `status_message` its error), `version`, `release`, `metadata`;
- traces (legacy): `id`, `timestamp`, `input`, `release`, `version`, `metadata`;
- scores: `trace_id`, `observation_id`, `name`, `value` (numeric; BOOLEAN scores are 1 / 0), `string_value`,
  `data_type`, `source` (ANNOTATION: a person's, a human label; EVAL: an LLM-as-judge evaluator's; API: a score
  the application sent, a code evaluator's), `comment` (the rationale), `author_user_id` (the annotator), `timestamp`.
The question is the root observation's input (text; a JSON object's `question` / `query` / `input`; a message list's
last user message), else the trace's; the answer is the last GENERATION's output (text, `content`, or the last
message's content), the retrieval the last RETRIEVER observation's output (a list of documents: `id` / `doc_id` /
`metadata.id`, `score`, `content` / `page_content` / `text`), ranked as listed. The application version is the field
`--version-attribute` names (default `release`) on the trace or its root observation, else that key of its metadata.
A trace id is Langfuse's own (32 hex digits for the SDK's, any text otherwise); a run's service is the Langfuse
project (`project_id`).

Errors name the file, the row (1-based: a JSONL line, a Parquet row) and the field: a file of another format, a
truncated or unreadable Parquet file, a row without a trace id, a field of the wrong type, a score linked to a trace
or observation none of the files holds. A Parquet file is read in record batches.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.sources.lines import jsonl_lines
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

TABLES = ("observations_v2", "observations", "traces", "scores")
SOURCES = {"ANNOTATION": "human", "EVAL": "llm", "API": "code"}
BATCH_ROWS = 10_000


def table_of(path: Path, columns: set[str]) -> str:
    for part in reversed(path.parent.parts):
        if part in TABLES:
            return "observations" if part == "observations_v2" else part
    if {"source", "value", "name"} <= columns:
        return "scores"
    if {"type", "trace_id"} <= columns:
        return "observations"
    if {"id", "timestamp"} <= columns:
        return "traces"
    raise InputError(f"not a Langfuse export table (columns {', '.join(sorted(columns)[:6])}; expected "
                     "observations_v2/, traces/, observations/ or scores/ files)", file=str(path), line=1,
                     field="trace_id")


def export_files(paths: list[Path]) -> list[Path]:
    out = []
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in (".parquet", ".jsonl"))
            if not found:
                raise InputError("no *.parquet or *.jsonl file under this folder", file=str(p))
            out += found
        else:
            out.append(p)
    return out


def rows_of(path: Path) -> tuple[set[str], Iterator[tuple[int, dict]]]:
    """(columns, (row number, row) ...) of a Parquet or JSONL file."""
    file = str(path)
    if path.suffix == ".parquet":
        try:
            pf = pq.ParquetFile(path)
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"not a readable Parquet file ({str(exc).splitlines()[0]}): truncated, or another "
                             "format", file=file, field="<parquet footer>") from None

        def parquet_rows() -> Iterator[tuple[int, dict]]:
            n = 0
            try:
                for batch in pf.iter_batches(batch_size=BATCH_ROWS):
                    for row in batch.to_pylist():
                        n += 1
                        yield n, row
            except (pa.ArrowInvalid, OSError) as exc:
                raise InputError(f"the Parquet file cannot be read past row {n} ({str(exc).splitlines()[0]})",
                                 file=file, line=n + 1, field="<row group>") from None

        return set(pf.schema_arrow.names), parquet_rows()
    if path.suffix == ".jsonl":
        def jsonl_rows() -> Iterator[tuple[int, dict]]:
            for n, row in jsonl_lines(path):
                if not isinstance(row, dict):
                    raise InputError("expected a JSON object per line", file=file, line=n, field="<line>")
                yield n, row

        rows = jsonl_rows()
        first = next(rows, None)
        if first is None:
            raise InputError("file is empty", file=file, line=1, field="trace_id")

        def chained() -> Iterator[tuple[int, dict]]:
            yield first
            yield from rows

        return set(first[1]), chained()
    raise InputError(f"a {path.suffix or 'file without a suffix'} file: a Langfuse export is read as Parquet or "
                     "JSONL", file=file, field="<format>")


class Row:
    """One export row with its place, for errors."""

    def __init__(self, row: dict, file: str, line: int) -> None:
        self.row, self.file, self.line = row, file, line

    def err(self, field: str, message: str) -> InputError:
        return InputError(message, file=self.file, line=self.line, field=field)

    def text(self, field: str, required: bool = False) -> str | None:
        v = self.row.get(field)
        if v is None or v == "":
            if required:
                raise self.err(field, f"the row has no {field}")
            return None
        if not isinstance(v, str):
            raise self.err(field, f"expected text, got {type(v).__name__} {json.dumps(v, default=str)[:60]}")
        return v

    def number(self, field: str) -> float | None:
        v = self.row.get(field)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.err(field, f"expected a number, got {json.dumps(v, default=str)[:60]}")
        return float(v)

    def mapping(self, field: str) -> dict[str, Any]:
        v = self.row.get(field)
        if v is None:
            return {}
        if isinstance(v, list):  # Parquet maps read as [(key, value)]
            v = dict(v)
        if isinstance(v, str):
            try:
                v = json.loads(v)
            except json.JSONDecodeError:
                raise self.err(field, "expected a map (or its JSON)") from None
        if not isinstance(v, dict):
            raise self.err(field, f"expected a map, got {json.dumps(v, default=str)[:60]}")
        return v

    def tokens(self, field: str, *keys: str) -> int | None:
        details = self.mapping(field)
        for k in keys:
            v = details.get(k)
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or v < 0:
                    raise self.err(f"{field}.{k}", f"expected a whole number of tokens, got {v!r}")
                return int(v)
        return None

    def time_ns(self, field: str, required: bool = True) -> int | None:
        v = self.row.get(field)
        if v is None:
            if required:
                raise self.err(field, "the row has no time")
            return None
        if isinstance(v, datetime):
            t = v if v.tzinfo else v.replace(tzinfo=UTC)
        elif isinstance(v, str):
            try:
                t = datetime.fromisoformat(v.replace(" ", "T").replace("Z", "+00:00"))
            except ValueError:
                raise self.err(field, f"{v!r} is not a time (YYYY-MM-DD HH:MM:SS.ffffff, UTC)") from None
            t = t if t.tzinfo else t.replace(tzinfo=UTC)
        else:
            raise self.err(field, f"expected a time, got {json.dumps(v, default=str)[:60]}")
        return int(t.timestamp()) * 10**9 + t.microsecond * 1000

    def json_value(self, field: str) -> Any:
        v = self.row.get(field)
        if isinstance(v, str):
            try:
                return json.loads(v)
            except json.JSONDecodeError:
                return v
        return v


def documents(r: Row, field: str) -> list[RetrievedDoc]:
    v = r.json_value(field)
    if v is None:
        return []
    if isinstance(v, dict) and isinstance(v.get("documents"), list):
        v = v["documents"]
    if not isinstance(v, list):
        raise r.err(field, "a RETRIEVER observation's output is a list of documents")
    docs = []
    for i, d in enumerate(v):
        if not isinstance(d, dict):
            raise r.err(f"{field}[{i}]", "a document is a JSON object")
        meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
        doc_id = next((x for x in (d.get("id"), d.get("doc_id"), meta.get("id"), meta.get("doc_id"))
                       if isinstance(x, str | int) and not isinstance(x, bool)), None)
        if doc_id is None:
            raise r.err(f"{field}[{i}].id", "a retrieved document has no id")
        score = d.get("score", meta.get("score"))
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise r.err(f"{field}[{i}].score", f"expected a number, got {score!r}")
        content = next((x for x in (d.get("content"), d.get("page_content"), d.get("text")) if isinstance(x, str)),
                       None)
        docs.append(RetrievedDoc(str(doc_id), None if score is None else float(score), content))
    return docs


class LangfuseReader:
    def __init__(self, version_attribute: str) -> None:
        self.version_attribute = version_attribute
        self.traces: dict[str, dict] = {}
        self.observations: dict[str, str] = {}  # observation id -> trace id
        self.scores: list[tuple[Row, Evaluation, str, str | None]] = []

    def trace(self, trace_id: str, file: str, line: int) -> dict:
        return self.traces.setdefault(trace_id, {"file": file, "line": line, "obs": {}, "root_input": None,
                                                 "trace_input": None, "version": None, "root_start": None,
                                                 "first_start": None, "project": None})

    def version_of(self, r: Row) -> str | None:
        v = r.row.get(self.version_attribute)
        if v is None:
            v = r.mapping("metadata").get(self.version_attribute)
        return None if v is None else str(v)

    def read(self, path: Path) -> None:
        columns, rows = rows_of(path)
        table = table_of(path, columns)
        file = str(path)
        for n, raw in rows:
            r = Row(raw, file, n)
            trace_id = r.text("trace_id" if table != "traces" else "id", required=True)
            if table == "traces":
                t = self.trace(trace_id, file, n)
                t["trace_input"] = question_text(r.json_value("input"))
                t["version"] = t["version"] or self.version_of(r)
                t["root_start"] = t["root_start"] or r.time_ns("timestamp")
                t["project"] = t["project"] or r.text("project_id")
            elif table == "observations":
                self.observation(r, trace_id)
            else:
                self.score(r, trace_id)

    def observation(self, r: Row, trace_id: str) -> None:
        t = self.trace(trace_id, r.file, r.line)
        obs_id = r.text("id", required=True)
        kind = (r.text("type", required=True) or "").upper()
        start, end = r.time_ns("start_time"), r.time_ns("end_time", required=False)
        o = {"type": kind, "start": start, "end": end if end is not None else start, "span": obs_id}
        parent = r.text("parent_observation_id")
        if parent is None:
            t["root_input"] = question_text(r.json_value("input"))
            t["version"] = self.version_of(r) or t["version"]
            t["root_start"] = start
        t["first_start"] = start if t["first_start"] is None else min(t["first_start"], start)
        t["project"] = t["project"] or r.text("project_id")
        if kind == "GENERATION":
            o |= {"model": r.text("provided_model_name") or r.text("model"),
                  "prompt_tokens": r.tokens("usage_details", "input", "prompt_tokens"),
                  "completion_tokens": r.tokens("usage_details", "output", "completion_tokens"),
                  "cost": r.mapping("cost_details").get("total", r.number("total_cost")),
                  "answer": answer_text(r.json_value("output")), "prompt": _as_text(r.row.get("input")),
                  "user": question_text(r.json_value("input")),
                  "error": (r.text("status_message") or "the generation ended with level ERROR")
                  if r.text("level") == "ERROR" else None}
            if o["cost"] is not None and (isinstance(o["cost"], bool) or not isinstance(o["cost"], int | float)):
                raise r.err("cost_details.total", f"expected a number, got {o['cost']!r}")
        elif kind == "RETRIEVER":
            o |= {"docs": documents(r, "output"), "retriever": r.text("name"),
                  "user": question_text(r.json_value("input"))}
        if kind in ("GENERATION", "RETRIEVER") or parent is None:
            t["obs"][obs_id] = o
        self.observations[obs_id] = trace_id

    def score(self, r: Row, trace_id: str) -> None:
        name = r.text("name", required=True)
        source = (r.text("source", required=True) or "").upper()
        if source not in SOURCES:
            raise r.err("source", f"score source {source!r} is none of ANNOTATION, EVAL, API")
        ev = Evaluation(name=name, kind=SOURCES[source], score=r.number("value"), label=r.text("string_value"),
                        explanation=r.text("comment"), evaluator=r.text("author_user_id"),
                        span_id=r.text("observation_id"), time_ns=r.time_ns("timestamp", required=False) or 0,
                        file=r.file, line=r.line, field="value")
        self.scores.append((r, ev, trace_id, ev.span_id))

    def resolve(self) -> Iterator[Trace]:
        for r, ev, trace_id, obs_id in self.scores:
            if trace_id not in self.traces:
                raise r.err("trace_id", f"score {ev.name!r} names trace {trace_id}, which none of the files holds")
            if obs_id is not None and self.observations.get(obs_id) != trace_id:
                raise r.err("observation_id", f"score {ev.name!r} names observation {obs_id} of trace {trace_id}, "
                                              "which none of the files holds")
            self.traces[trace_id].setdefault("evals", []).append(ev)
        for trace_id, t in self.traces.items():
            obs = sorted(t["obs"].values(), key=lambda o: o["end"])
            gens = [o for o in obs if o["type"] == "GENERATION"]
            rets = [o for o in obs if o["type"] == "RETRIEVER"]
            g, ret = (gens[-1] if gens else None), (rets[-1] if rets else None)
            question = t["root_input"] or t["trace_input"] or next(
                (o["user"] for o in (*rets, *gens) if o.get("user")), None)
            yield Trace(
                trace_id=trace_id, file=t["file"], line=t["line"], start_ns=t["root_start"] or t["first_start"],
                service=t["project"],
                version=t["version"], question=question, question_span_id=None,
                retrieval_span_id=ret["span"] if ret else None, retriever=ret["retriever"] if ret else None,
                documents=ret["docs"] if ret else [], answer_span_id=g["span"] if g else None,
                answer=g["answer"] if g else None, prompt=g["prompt"] if g else None, model=g["model"] if g else None,
                prompt_tokens=g["prompt_tokens"] if g else None,
                completion_tokens=g["completion_tokens"] if g else None,
                latency_ms=(g["end"] - g["start"]) / 1e6 if g else None,
                cost_usd=float(g["cost"]) if g and g["cost"] is not None else None, error=g["error"] if g else None,
                evaluations=t.get("evals", []))


def _as_text(v: Any) -> str | None:
    if v is None or isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, default=str)


def read_langfuse(paths: list[Path], version_attribute: str) -> list[Trace]:
    reader = LangfuseReader(version_attribute)
    for p in export_files(paths):
        reader.read(p)
    return list(reader.resolve())


def ingest_langfuse(lake: Lake, paths: list[Path], opts: TraceOptions, dry_run: bool = False) -> TraceSummary:
    """Read every export file (nothing lands unless all read), then land their traces (sources/traces.py)."""
    return land_traces(lake, read_langfuse(paths, opts.version_attribute), opts, dry_run=dry_run)
