"""Production traces as the lake's own runs (SPEC §11): what every trace reader maps onto, and the one landing.

The readers (one module per source: sources/otlp_traces.py, OTLP/JSON files with GenAI or OpenInference attributes;
sources/langfuse_exports.py, Langfuse's blob-storage exports; sources/mlflow_traces.py, an MLflow tracking store)
turn what a tool wrote into `Trace` records, keyed on the GenAI semantic conventions' notions (the others are mapped
onto them). A trace lands as:
- a question: the user's input (question_id = the trace id, source imported, split `production`, in the partition
  `<dataset>.<run>`); a trace without an input (a health check, a tool call alone) is left out with a note;
- a retrieval run's results (retrieval_runs source `trace`, run `<run>-retrieval`): the documents of the trace's
  last retriever-kind span (a reranker's output is the final ranking), ranked as the span lists them; a document id
  is both the result's doc_id and its chunk_id (production retrieves the application's own corpus, which the lake
  does not hold: with no qrels the retrieval metrics are empty, as SPEC §11 says);
- an answer of the production run (generation_runs eval_mode `production`): the LLM span's output, its prompt, the
  retrieved documents as passages, tokens, latency (the LLM span's duration), cost (the span's own when recorded,
  else seeds/llm_prices.csv); and a row of the LLM ledger (llm_calls, purpose `production_answer`, batch
  `<run>-traces`, request_hash = SHA-256 of `<trace id>:<span id>`);
- judgments: each evaluation result of an LLM or code evaluator (judge runs `<run>-llm` and `<run>-code`,
  evaluator_kind kept), metric `<tool>_<slug of the evaluation name>`, rubric `<tool>:<name>`; an evaluator that ran
  several times on a trace gives repeats 1..N in time order (the judge's noise: mart_judge_reliability);
- human labels: each annotation whose source is a person, in the label set `<dataset>_<tool>_human` (declare its
  calibration once: `finrag calibrate --label-set ... --human-metric M --predictor M`); two labels of one trace and
  metric: the latest stands (a note counts the others).
The evaluation metrics are declared with the run (metric_declarations, judge_family = the tool) on the scale
`--metric NAME=MIN..MAX[:lower]` gives, else [0, 1] higher is better (a score outside is refused, naming the field).

Runs are what production knows: the service (resource `service.name`), the application version (the resource or
span attribute the user names, default `service.version`; `unknown` when a trace has none) and the time window its
root span started in (`--window`, default 1d, windows aligned on the Unix epoch in UTC). The run id is derived from
them (core/run_ids.py): `<tool>-<service>-<version>-<window start>-prod-<hash>`.

Several files may hold one run (a Collector rotates its files): a landing merges into what the lake holds, trace by
trace (a trace in the lake and in the file: the file's rows replace it), and a partition whose rows would not change
is not landed, so re-ingesting a file changes nothing. Every partition of one command lands in ONE `Lake.land`
call: all or nothing. `dry_run` reads, maps and checks everything and says what would land.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import polars as pl

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.metrics import MetricSpec, external_metric_name
from python_jobs.core.partitions import conform
from python_jobs.core.run_ids import derived_id
from python_jobs.llm.prices import call_cost, load_prices
from python_jobs.sources.external_runs import Declaration, declared_specs, describe, spec_of
from python_jobs.sources.ragas_files import parse_metric_option

KINDS = ("llm", "code", "human")
SPLIT = "production"
EVAL_MODE = "production"
PURPOSE = "production_answer"
DEFAULT_SCALE = Declaration(higher_is_better=True, scale_min=0.0, scale_max=1.0,
                            description="A production evaluator's score, on [0, 1] (the default scale).")
# per-trace tables: merged with the landed partition trace by trace
TRACE_TABLES = ("questions", "retrieval_results", "answers", "judgments", "human_labels", "llm_calls")


@dataclass
class RetrievedDoc:
    doc_id: str
    score: float | None = None
    content: str | None = None


@dataclass
class Evaluation:
    """One evaluation result or annotation of a trace."""

    name: str
    kind: str  # llm | code | human
    score: float | None
    label: str | None
    explanation: str | None
    evaluator: str | None  # the judge model or the annotator, when the source says
    span_id: str | None  # the span it is attached to
    time_ns: int
    file: str
    line: int | None
    field: str  # where its score is, for errors


@dataclass
class Trace:
    trace_id: str
    file: str
    line: int | None
    start_ns: int | None = None
    service: str | None = None
    version: str | None = None
    question: str | None = None
    question_span_id: str | None = None
    retrieval_span_id: str | None = None
    retriever: str | None = None
    documents: list[RetrievedDoc] = field(default_factory=list)
    answer_span_id: str | None = None
    answer: str | None = None
    prompt: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    error: str | None = None
    evaluations: list[Evaluation] = field(default_factory=list)


@dataclass(frozen=True)
class TraceOptions:
    """How traces are grouped into runs and what they land as (the verbs' shared options)."""

    tool: str  # otlp | phoenix | mlflow | langfuse: the metric prefix and judge_family
    dataset: str = "production"
    window: timedelta = timedelta(days=1)
    version_attribute: str = "service.version"
    declarations: dict[str, Declaration] = field(default_factory=dict)  # by evaluation name
    label_set: str | None = None

    @property
    def human_label_set(self) -> str:
        return self.label_set or f"{self.dataset}_{self.tool}_human"


def parse_window(text: str) -> timedelta:
    """`30m`, `6h`, `1d`, `7d` -> a window length."""
    units = {"m": "minutes", "h": "hours", "d": "days"}
    number, unit = text[:-1], text[-1:]
    if unit not in units or not number.isdigit() or int(number) < 1:
        raise InputError(f"{text!r}: a window is a whole number of minutes, hours or days (30m, 6h, 1d, 7d)",
                         field="--window")
    return timedelta(**{units[unit]: int(number)})


@dataclass
class Run:
    run_id: str
    service: str
    version: str
    window_start: datetime
    window_end: datetime
    traces: list[Trace] = field(default_factory=list)


def window_of(start_ns: int, window: timedelta) -> tuple[datetime, datetime]:
    size = int(window.total_seconds() * 1e9)
    first = start_ns - start_ns % size
    start = datetime.fromtimestamp(first // 1_000_000_000, tz=UTC)
    return start, start + window


def group_runs(traces: Iterable[Trace], opts: TraceOptions) -> tuple[dict[str, Run], int]:
    """The production runs the traces fall into; and how many traces had no question (left out)."""
    runs: dict[str, Run] = {}
    seen: dict[str, Trace] = {}
    no_question = 0
    for t in traces:
        if t.trace_id in seen:
            first = seen[t.trace_id]
            raise InputError(f"trace {t.trace_id} is given twice (first in {first.file}, line {first.line})",
                             file=t.file, line=t.line, field="traceId")
        seen[t.trace_id] = t
        if not t.question:
            no_question += 1
            continue
        if t.start_ns is None:
            raise InputError(f"trace {t.trace_id} has no start time", file=t.file, line=t.line,
                             field="startTimeUnixNano")
        service, version = t.service or "unknown", t.version or "unknown"
        start, end = window_of(t.start_ns, opts.window)
        digest = hashlib.sha256(json.dumps([opts.dataset, opts.tool, service, version, start.isoformat(),
                                            opts.window.total_seconds()]).encode()).hexdigest()
        run_id = check_id(derived_id(f"{opts.tool}-{service}-{version}-{start:%Y%m%dT%H%M}", "prod", digest),
                          "run id")
        run = runs.setdefault(run_id, Run(run_id, service, version, start, end))
        run.traces.append(t)
    return runs, no_question


# ------------------------------------------------------------------------------------------------- the rows
@dataclass
class Frames:
    """Each partition's rows, by (table, partition value)."""

    rows: dict[tuple[str, str], list[dict]] = field(default_factory=lambda: defaultdict(list))

    def add(self, table: str, value: str, row: dict) -> None:
        self.rows[(table, value)].append(row)


def metric_specs(evaluations: Iterable[Evaluation], opts: TraceOptions, lake: Lake) -> dict[str, MetricSpec]:
    """Every evaluation name's registry spec: the seed's when it knows the metric, else declared (checked against
    another run's declaration of the same metric)."""
    seed, landed = declared_specs(lake)
    out: dict[str, MetricSpec] = {}
    for e in evaluations:
        metric = external_metric_name(opts.tool, e.name)
        if not metric:
            raise InputError(f"evaluation name {e.name!r} has no letter or digit", file=e.file, line=e.line,
                             field=e.field)
        if metric in out:
            continue
        if metric in seed:
            out[metric] = seed[metric]
            continue
        declared = opts.declarations.get(e.name, DEFAULT_SCALE)
        earlier = landed.get(metric)
        if earlier is not None:
            judge_run_id, before = earlier
            keys = ("higher_is_better", "scale_min", "scale_max", "continuous")
            if any(getattr(before, k) != getattr(declared, k) for k in keys):
                raise InputError(f"metric {metric!r} was declared by judge run {judge_run_id!r} as "
                                 f"{describe(before)}; this ingest makes it {describe(declared)} (--metric)",
                                 file=e.file, line=e.line, field=e.field)
        out[metric] = replace(spec_of(metric, opts.tool, e.name, declared), label=f"{e.name} ({opts.tool})")
    return out


def run_rows(run: Run, opts: TraceOptions, specs: dict[str, MetricSpec], prices: dict) -> tuple[Frames, int]:
    """One production run's rows; and how many human labels were superseded by a later one."""
    f = Frames()
    rid, ds, tool = run.run_id, opts.dataset, opts.tool
    retrieval_run = f"{rid}-retrieval"
    has_retrieval = any(t.documents for t in run.traces)
    params = {"tool": tool, "service": run.service, "version": run.version,
              "version_attribute": opts.version_attribute, "window_seconds": opts.window.total_seconds()}
    superseded = 0
    judge_meta: dict[str, dict[str, set[str]]] = {}
    for t in sorted(run.traces, key=lambda t: t.trace_id):
        where = {"_file": t.file, "_line": t.line}
        f.add("questions", f"{ds}.{rid}", {
            "question_id": t.trace_id, "dataset": ds, "split": SPLIT, "question": t.question, "source": "imported",
            "meta": json.dumps({"tool": tool, "service": run.service, "version": run.version,
                                "span_id": t.question_span_id}, sort_keys=True),
            "trace_id": t.trace_id, **where})
        docs, seen_docs = [], set()
        for d in t.documents:
            if d.doc_id not in seen_docs:  # a ranking lists a unit once
                seen_docs.add(d.doc_id)
                docs.append(d)
        for rank, d in enumerate(docs, start=1):
            f.add("retrieval_results", retrieval_run, {
                "run_id": retrieval_run, "question_id": t.trace_id, "dataset": ds, "rank": rank,
                "chunk_id": d.doc_id, "doc_id": d.doc_id, "score": d.score, "trace_id": t.trace_id,
                "span_id": t.retrieval_span_id, **where})
        cost = t.cost_usd
        if cost is None and t.model:
            cost = call_cost(prices, t.model, t.prompt_tokens, t.completion_tokens)
        error = t.error if t.error else (None if t.answer is not None else "the trace has no LLM output")
        f.add("answers", rid, {
            "run_id": rid, "question_id": t.trace_id, "answer": t.answer, "prompt": t.prompt,
            "context_chunk_ids": [d.doc_id for d in docs] or None,
            "passages": json.dumps([{"doc_ids": [d.doc_id], "chunk_id": d.doc_id, "text": d.content}
                                    for d in docs], ensure_ascii=False) if docs else None,
            "prompt_tokens": t.prompt_tokens, "completion_tokens": t.completion_tokens, "latency_ms": t.latency_ms,
            "cost_usd": cost, "error": error, "trace_id": t.trace_id, "span_id": t.answer_span_id, **where})
        if t.answer_span_id is not None:
            f.add("llm_calls", f"{rid}-traces", {
                "request_hash": hashlib.sha256(f"{t.trace_id}:{t.answer_span_id}".encode()).hexdigest(),
                "model": t.model or "unknown", "purpose": PURPOSE, "request": t.prompt, "response": t.answer,
                "prompt_tokens": t.prompt_tokens, "completion_tokens": t.completion_tokens,
                "latency_ms": t.latency_ms, "cost_usd": cost, "error": t.error, "attempts": 1, "cache_hits": 0,
                "trace_id": t.trace_id, "span_id": t.answer_span_id, **where})
        repeats: Counter = Counter()
        labels: dict[str, dict] = {}
        for e in sorted(t.evaluations, key=lambda e: e.time_ns):
            metric = external_metric_name(tool, e.name)
            spec = specs[metric]
            if e.score is not None and not spec.on_scale(e.score):
                raise InputError(f"score {e.score!r} of evaluation {e.name!r} is off the {metric} scale "
                                 f"({spec.allowed()}); declare its scale with --metric '{e.name}=MIN..MAX'",
                                 file=e.file, line=e.line, field=e.field)
            ewhere = {"_file": e.file, "_line": e.line}
            if e.kind == "human":
                if metric in labels:
                    superseded += 1
                labels[metric] = {
                    "label_set": opts.human_label_set, "answer_run_id": rid, "question_id": t.trace_id,
                    "metric": metric, "raw_score": e.score, "label": e.label, "annotator": e.evaluator,
                    "trace_id": t.trace_id, "span_id": e.span_id, **ewhere}
                continue
            judge_run = f"{rid}-{e.kind}"
            repeats[(e.kind, metric)] += 1
            meta = judge_meta.setdefault(e.kind, {"models": set(), "metrics": set(), "rubrics": set()})
            meta["models"].add(e.evaluator or e.name)
            meta["metrics"].add(metric)
            meta["rubrics"].add(f"{tool}:{e.name}")
            ok = e.score is not None
            f.add("judgments", judge_run, {
                "judge_run_id": judge_run, "question_id": t.trace_id, "metric": metric,
                "repeat": repeats[(e.kind, metric)], "rubric": f"{tool}:{e.name}",
                "raw_score": e.score, "rationale": e.explanation, "status": "ok" if ok else "failed",
                "error": None if ok else f"the evaluation has no numeric score (label {e.label!r})",
                "trace_id": t.trace_id, "span_id": e.span_id, **ewhere})
        for row in labels.values():
            f.add("human_labels", opts.human_label_set, row)
    models = sorted({t.model for t in run.traces if t.model})
    if has_retrieval:
        retrievers = sorted({t.retriever for t in run.traces if t.documents and t.retriever}) or ["production"]
        config = hashlib.sha256(json.dumps({**params, "retriever": retrievers}, sort_keys=True).encode()).hexdigest()
        f.add("retrieval_runs", retrieval_run, {
            "run_id": retrieval_run, "dataset": ds, "retriever": ",".join(retrievers), "condition": "full",
            "k": max(len(t.documents) for t in run.traces), "params": json.dumps(params, sort_keys=True),
            "config_hash": config, "config_id": config, "source": "trace"})
    f.add("generation_runs", rid, {
        "run_id": rid, "dataset": ds, "retrieval_run_id": retrieval_run if has_retrieval else None,
        "model": ",".join(models) or "unknown", "eval_mode": EVAL_MODE, "params": json.dumps(params, sort_keys=True),
        "app_version": run.version, "window_start": run.window_start, "window_end": run.window_end})
    for kind, meta in judge_meta.items():
        f.add("judge_runs", f"{rid}-{kind}", {
            "judge_run_id": f"{rid}-{kind}", "answer_run_id": rid, "judge_model": ",".join(sorted(meta["models"])),
            "rubric_version": ",".join(sorted(meta["rubrics"])), "metrics": ",".join(sorted(meta["metrics"])),
            "params": json.dumps(params, sort_keys=True), "evaluator_kind": kind})
    # the declarations go with the run's first judge run (llm before code); a run with human labels only declares
    # nothing (its labels' metric is declared by the judge runs that score it)
    declaring = next((f"{rid}-{k}" for k in ("llm", "code") if k in judge_meta), None)
    if declaring:
        used = {m for meta in judge_meta.values() for m in meta["metrics"]} | {
            r["metric"] for r in f.rows.get(("human_labels", opts.human_label_set), [])}
        for m in sorted(used):
            spec = specs[m]
            if spec.judge_family != tool:
                continue  # a seed metric
            f.add("metric_declarations", declaring, {
                "judge_run_id": declaring, "metric": m, "source_name": spec.source_name, "judge_family": tool,
                "label": spec.label, "higher_is_better": spec.higher_is_better, "scale_min": spec.scale_min,
                "scale_max": spec.scale_max, "continuous": spec.continuous, "description": spec.description or None})
    return f, superseded


# ------------------------------------------------------------------------------------------------- merging
LIST_COLUMNS = {"generation_runs": ("model",), "retrieval_runs": ("retriever",),
                "judge_runs": ("judge_model", "rubric_version", "metrics")}


def _comparable(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    c = contract(table)
    key = [k for k in c.key if k in frame.columns]
    return conform(frame, c).drop("created_at").sort(key)


def merge(lake: Lake, table: str, value: str, new: pl.DataFrame) -> pl.DataFrame | None:
    """The partition as it will be after this landing, or None when it would not change."""
    c = contract(table)
    landed = lake.read_partition(table, value)
    new = new.with_columns(pl.lit(value).alias(c.partition))
    if landed.height:
        if table in TRACE_TABLES:
            keep = landed.filter(~pl.col("trace_id").is_in(new["trace_id"].unique().implode()))
            merged = pl.concat([conform(keep, c, keep_origin=False), conform(new, c, keep_origin=True)],
                               how="diagonal_relaxed")
        elif table == "metric_declarations":
            keep = landed.filter(~pl.col("metric").is_in(new["metric"].implode()))
            merged = pl.concat([conform(keep, c), conform(new, c, keep_origin=True)], how="diagonal_relaxed")
        else:  # a run row: its lists are the union of the landed row's and this landing's
            old, row = landed.row(0, named=True), new.row(0, named=True)
            for col in LIST_COLUMNS.get(table, ()):
                parts = {p for v in (old[col], row[col]) if v for p in v.split(",") if p and p != "unknown"}
                row[col] = ",".join(sorted(parts)) or "unknown"
            if table == "retrieval_runs":
                row["k"] = max(old["k"] or 0, row["k"] or 0)
            merged = conform(pl.DataFrame([row]), c, keep_origin=True) if "_file" in row else conform(
                pl.DataFrame([row]), c)
        if _comparable(merged, table).equals(_comparable(landed, table)):
            return None
        return merged.drop("created_at")
    return new


@dataclass
class TraceSummary:
    runs: list[dict]
    landed: list[tuple[str, str, int]]  # (table, partition, rows) that changed
    left_out: int
    unchanged: bool

    def lines(self) -> list[str]:
        out = []
        for r in self.runs:
            out.append(f"run {r['run_id']}: service {r['service']}, version {r['version']}, window "
                       f"{r['window_start']:%Y-%m-%dT%H:%MZ} .. {r['window_end']:%Y-%m-%dT%H:%MZ}: "
                       f"{r['questions']} questions, {r['results']} retrieval results, {r['answers']} answers, "
                       f"{r['judgments']} judgments, {r['human_labels']} human labels")
        for table, value, rows in self.landed:
            out.append(f"  {table} {contract(table).partition}={value}: {rows} rows")
        if self.unchanged:
            out.append("nothing changes: the lake already holds these traces")
        if self.left_out:
            out.append(f"note: {self.left_out} traces without a user input are left out")
        return out


def land_traces(lake: Lake, traces: Iterable[Trace], opts: TraceOptions, dry_run: bool = False) -> TraceSummary:
    check_id(opts.dataset, "dataset")
    check_id(opts.human_label_set, "label set")
    runs, left_out = group_runs(traces, opts)
    if not runs:
        raise InputError("no trace with a user input: nothing would land", field="traces")
    specs = metric_specs((e for r in runs.values() for t in r.traces for e in t.evaluations), opts, lake)
    prices = load_prices()
    rows: dict[tuple[str, str], list[dict]] = defaultdict(list)
    summary_runs, superseded = [], 0
    for run in sorted(runs.values(), key=lambda r: r.run_id):
        f, n = run_rows(run, opts, specs, prices)
        superseded += n
        for k, v in f.rows.items():
            rows[k].extend(v)
        summary_runs.append({
            "run_id": run.run_id, "service": run.service, "version": run.version,
            "window_start": run.window_start, "window_end": run.window_end,
            "questions": len(f.rows.get(("questions", f"{opts.dataset}.{run.run_id}"), [])),
            "results": len(f.rows.get(("retrieval_results", f"{run.run_id}-retrieval"), [])),
            "answers": len(f.rows.get(("answers", run.run_id), [])),
            "judgments": sum(len(f.rows.get(("judgments", f"{run.run_id}-{k}"), [])) for k in ("llm", "code")),
            "human_labels": sum(1 for r in f.rows.get(("human_labels", opts.human_label_set), [])
                                if r["answer_run_id"] == run.run_id)})
    if superseded:
        say(f"note: {superseded} human labels superseded by a later label of the same trace and metric")
    frames = []
    for (table, value), table_rows in sorted(rows.items()):
        merged = merge(lake, table, value, contract(table).frame(table_rows))
        if merged is not None:
            frames.append((table, value, merged))
    summary = TraceSummary(summary_runs, [(t, v, f.height) for t, v, f in frames], left_out, not frames)
    if frames and not dry_run:
        lake.land(frames)
    return summary


def question_text(v: Any) -> str | None:
    """The user's question in a recorded input: text, a JSON object's `question` / `query` / `input` /
    `user_input` (or its `messages`), or a message list's last user message."""
    if isinstance(v, str):
        return v or None
    if isinstance(v, dict):
        for k in ("question", "query", "input", "user_input"):
            if isinstance(v.get(k), str):
                return v[k]
        if isinstance(v.get("messages"), list):
            return question_text(v["messages"])
    if isinstance(v, list):
        users = [m.get("content") for m in v if isinstance(m, dict) and m.get("role") == "user"]
        return users[-1] if users and isinstance(users[-1], str) else None
    return None


def answer_text(v: Any) -> str | None:
    """An LLM's recorded output as text: text, a JSON object's `content` / `text` / `output` / `answer`, a chat
    completion's first choice (`choices[0].message`), or a message list's last message."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        for k in ("content", "text", "output", "answer"):
            if isinstance(v.get(k), str):
                return v[k]
        choices = v.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            return answer_text(choices[0].get("message") or choices[0].get("text"))
    if isinstance(v, list) and v and isinstance(v[-1], dict):
        return answer_text(v[-1])
    return None


def trace_id_hex(raw: str, file: str, line: int | None, field: str, length: int = 32) -> str:
    """An OTLP/JSON id: `length` lowercase hex digits (not all zero)."""
    text = raw.lower()
    if len(text) != length or any(ch not in "0123456789abcdef" for ch in text) or not text.strip("0"):
        raise InputError(f"{raw!r} is not a {'trace' if length == 32 else 'span'} id ({length} hex digits; "
                         "OTLP/JSON writes ids as hex, not base64)", file=file, line=line, field=field)
    return text



def parse_trace_metric(text: str) -> tuple[str, Declaration]:
    """`--metric NAME=MIN..MAX[:lower|:higher]` (the Ragas ingest's option): an evaluation's scale, by its name as the
    traces write it."""
    name, declared = parse_metric_option(text)
    return name, replace(declared, description=f"A production evaluator score, its scale set at ingest ({text}).")
