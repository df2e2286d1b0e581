"""What Ragas and DeepEval files land as (sources/ragas_files.py and sources/deepeval_runs.py read and write the
formats; this module holds what their ingests share, external_exports.py what their exports are written from).

A file (a Ragas results / experiment / EvaluationDataset file, a DeepEval test run) lands as:
- questions: each sample's question is matched by its exact text among --dataset's questions (a DeepEval test case's
  `name` or `metadata.question_id` decides between questions of the same text); a question the dataset does not
  hold is created (id `ext-<sha256 of the text, 16 hex>`, source imported, split test, the sample's reference as its
  reference answer, its reference contexts in meta) in the partition `<dataset>.<answer run>`;
- an answer run (generation_runs + answers; eval_mode = the tool): the response is the answer; the retrieved
  contexts are the answer's passages (`answers.passages`, JSON [{doc_ids, chunk_id, text, context_id}], as imported
  answer files carry them), with chunk_id set and `context_chunk_ids` filled when the tool's context ids name chunks
  of the dataset. Decision: contexts are not made chunks of a corpus. They are what another system retrieved from its
  own corpus, with no document, page or gold link here: as chunks they would join `finrag index` / `retrieve`'s
  corpus and every retrieval metric would count them as misses; as passages `finrag judge` judges over them
  (faithfulness, UTL, HAL) and the drill-down can show them from the lake's answers;
- where the file carries metric scores, a judge run `<answer run>-<tool>` (judge_runs + judgments): one judgment
  per sample and metric, ok with the raw score, or failed (DeepEval's `error`, Ragas' NaN / empty cell) with the
  reason; the tool's `reason` is the rationale. A score off the metric's scale is refused (nothing lands).
- repeats (the judge's noise, SPEC §10): a sample given several times in one file - the same question with the same
  answer (response and retrieved contexts), each time with the tool's scores of that evaluation - is ONE answer of
  the answer run judged several times: judgments.repeat numbers them, by the file's own numbering where the reader
  has one (Ragas' optional `repeat` column) and else in file order (a DeepEval test case repeated, as `deepeval test
  run --repeat N` writes them). Refused, naming the file, line and field (nothing lands): the same question with
  another answer (two answers to one question are two runs); a file that numbers some samples and not others; a
  repeat number given twice for a question; and repeats that differ between samples - every question of the run
  has repeats 1..N (a repeat naming a question that repeat 1 does not hold, a question with fewer repeats than the
  others), so every answer's mean is over the same number of judgments.
- metrics: a tool's metric is the registry's `<tool>_<slug of its name>` (core/metrics.py
  `external_metric_name`). The seed declares the ones the project knows (scale, direction); a name it does not
  know is declared with the run in metric_declarations (a DeepEval metric: [0, 1], DeepEval's convention, and the
  direction its own verdicts show; a Ragas column: only when named with --metric, else left out with a note), and
  int_metric_registry / dim_metrics union both. A declaration that disagrees with an earlier one of the same metric
  is refused; why a lake table and not the seed: DeepEval's GEval names are the user's own, one per file, and a
  seed edited per file is a seed no one can review.
Every run of one command lands in ONE `Lake.land` call: all or nothing. Re-ingesting a run replaces it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from python_jobs.core.console import say
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.metrics import MetricSpec, external_metric_name, fmt_number, load_metrics
from python_jobs.core.run_ids import lake_safe
from python_jobs.sources.landing import land

# how each tool's file names a sample's parts, for errors
FIELDS = {
    "ragas": {"question": "user_input", "response": "response", "contexts": "retrieved_contexts",
              "context_ids": "retrieved_context_ids"},
    "deepeval": {"question": "input", "response": "actualOutput", "contexts": "retrievalContext",
                 "context_ids": "retrievalContext"},
}
REPEAT_FIELD = "repeat"  # Ragas' optional column numbering a sample's repeats


@dataclass(frozen=True)
class Declaration:
    """A metric the seed does not know, as a file (or the command line) declares it."""

    higher_is_better: bool
    scale_min: float
    scale_max: float
    continuous: bool = True
    description: str | None = None


@dataclass
class ExternalScore:
    source_name: str
    score: float | None  # None: the tool wrote no score (a failed metric)
    field: str  # where the score is in the input, for errors
    reason: str | None = None
    error: str | None = None
    evaluation_model: str | None = None


@dataclass
class ExternalSample:
    line: int | None
    field_prefix: str  # "" for a line-per-sample file, "testCases[3]." inside a DeepEval run
    question: str
    response: str | None
    reference: str | None = None
    contexts: list[str] | None = None
    context_ids: list[str] | None = None
    reference_contexts: list[str] | None = None
    reference_context_ids: list[str] | None = None
    question_id_hints: tuple[str, ...] = ()
    scores: list[ExternalScore] = field(default_factory=list)
    repeat: int | None = None  # the repeat's number as the file gives it (None: numbered in file order)


@dataclass
class ExternalRun:
    tool: str
    path: Path
    run_id: str
    samples: list[ExternalSample]
    declarations: dict[str, Declaration] = field(default_factory=dict)  # by source name
    params: dict[str, Any] = field(default_factory=dict)


def default_run_id(path: Path) -> str:
    """A run id from a file name: `.latest_run_full.json` -> latest_run_full (made lake-safe by the run-id rule's
    `lake_safe`, not cut: a file's id is its whole name)."""
    stem = path.name.split(".json")[0].split(".csv")[0].strip(".")
    return check_id(lake_safe(stem) or "run", "run id")


def question_id_for(text: str) -> str:
    return f"ext-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def declared_specs(lake: Lake) -> tuple[dict[str, MetricSpec], dict[str, tuple[str, Declaration]]]:
    """The registry as landing needs it: the seed's judged metrics (own and external) and the lake's declarations
    (metric -> (judge run that declared it first, declaration))."""
    seed = load_metrics(external=True)
    landed: dict[str, tuple[str, Declaration]] = {}
    rows = lake.read("metric_declarations").sort(["created_at", "judge_run_id"])
    for r in rows.iter_rows(named=True):
        landed.setdefault(r["metric"], (r["judge_run_id"], Declaration(
            r["higher_is_better"], r["scale_min"], r["scale_max"], r["continuous"], r["description"])))
    return seed, landed


def spec_of(metric: str, tool: str, source_name: str, d: Declaration) -> MetricSpec:
    tool_label = "Ragas" if tool == "ragas" else "DeepEval"
    return MetricSpec(metric=metric, judge_family=tool, label=f"{source_name} ({tool_label})",
                      scale_min=d.scale_min, scale_max=d.scale_max, na_value=None, needs_passages=False,
                      needs_numeric_reference=False, continuous=d.continuous, higher_is_better=d.higher_is_better,
                      description=d.description or "", source_name=source_name)


def land_external_runs(lake: Lake, runs: list[ExternalRun], dataset: str, model: str) -> list[tuple[str, str | None]]:
    """Land every run (answer run, its judge run when it has scores, new questions, declarations) in one landing.
    Returns (answer run id, judge run id or None) per run."""
    check_id(dataset, "dataset")
    seed, landed = declared_specs(lake)
    questions = lake.read("questions", where={"dataset": dataset}, columns=["question_id", "question", "load_id"])
    chunk_ids = set(lake.read("chunks", where={"dataset": dataset}, columns=["chunk_id"])["chunk_id"].to_list())
    frames: list[tuple[str, str, pl.DataFrame]] = []
    out: list[tuple[str, str | None]] = []
    created_anywhere: set[str] = set()
    seen_runs: dict[str, Path] = {}
    for run in runs:
        if run.run_id in seen_runs:
            raise InputError(f"two files give the run id {run.run_id!r} ({seen_runs[run.run_id].name} too): name one "
                             "with --run-id", file=str(run.path))
        seen_runs[run.run_id] = run.path
        load_id = f"{dataset}.{run.run_id}"
        check_id(load_id, "questions load id")
        # the run's own earlier questions are about to be replaced: they do not count as the dataset's
        known = questions.filter(pl.col("load_id") != load_id)
        by_text: dict[str, list[str]] = {}
        for qid, text in zip(known["question_id"], known["question"], strict=True):
            by_text.setdefault(text, []).append(qid)
        file = str(run.path)
        names = FIELDS[run.tool]
        check_repeat_numbering(run)
        new_questions: dict[str, dict] = {}
        answered: dict[str, ExternalSample] = {}  # question id -> the sample that gave its answer
        repeats: dict[str, dict[int, ExternalSample]] = {}  # question id -> repeat -> sample
        answer_rows, judgment_rows = [], []
        metrics: dict[str, MetricSpec] = {}
        for s in run.samples:
            where = {"file": file, "line": s.line}
            qid = resolve_question(s, by_text, where)
            if qid is None:
                qid = question_id_for(s.question)
                if qid not in created_anywhere:
                    new_questions[qid] = {
                        "question_id": qid, "dataset": dataset, "split": "test", "question": s.question,
                        "reference_answers": [s.reference] if s.reference else None, "source": "imported",
                        "meta": json.dumps({"imported_from": run.tool, "file": run.path.name,
                                            "reference_contexts": s.reference_contexts,
                                            "reference_context_ids": s.reference_context_ids}, ensure_ascii=False),
                        "_file": file, "_line": s.line}
                    created_anywhere.add(qid)
            done = repeats.setdefault(qid, {})
            repeat = s.repeat if s.repeat is not None else len(done) + 1
            if repeat in done:
                raise InputError(f"repeat {repeat} of question {qid!r} ({s.question[:60]!r}) is given twice (first at "
                                 f"{at(done[repeat])})", **where, field=f"{s.field_prefix}{REPEAT_FIELD}")
            done[repeat] = s
            if qid in answered:  # a repeat: the same answer, judged again
                first = answered[qid]
                differs = next((k for k in ("response", "contexts", "context_ids")
                                if getattr(s, k) != getattr(first, k)), None)
                if differs is not None:
                    raise InputError(f"question {qid!r} ({s.question[:60]!r}) is asked twice in one run with another "
                                     f"{names[differs]} (first at {at(first)}): a repeated sample is the same answer "
                                     "judged again; two answers to one question are two runs", **where,
                                     field=f"{s.field_prefix}{names[differs]}")
                judgment_rows += judgments_of(run, s, qid, repeat, metrics, seed, landed, where)
                continue
            answered[qid] = s
            if s.response is None:
                raise InputError("the sample has no response: an answer run needs one per sample", **where,
                                 field=f"{s.field_prefix}{names['response']}")
            ids = s.context_ids if s.context_ids and len(s.context_ids) == len(s.contexts or []) else None
            passages = [{"doc_ids": [], "chunk_id": (ids[i] if ids and ids[i] in chunk_ids else None), "text": text,
                         "context_id": ids[i] if ids else None} for i, text in enumerate(s.contexts or [])]
            answer_rows.append({
                "run_id": run.run_id, "question_id": qid, "answer": s.response, "prompt": None,
                "context_chunk_ids": ids if ids and all(i in chunk_ids for i in ids) else None,
                "passages": json.dumps(passages, ensure_ascii=False) if s.contexts is not None else None,
                "error": None, "_file": file, "_line": s.line})
            judgment_rows += judgments_of(run, s, qid, repeat, metrics, seed, landed, where)
        check_same_repeats(run, repeats)
        n_repeats = max((max(done) for done in repeats.values()), default=1)
        say(f"{run.tool} {run.path.name}: {len(answer_rows)} answers ({len(answer_rows) - len(new_questions)} to "
            f"questions of {dataset!r}, {len(new_questions)} new), {len(metrics)} metrics"
            f"{f', {n_repeats} repeats' if n_repeats > 1 else ''}")
        params = {"source": run.tool, "file": run.path.name,
                  "sha256": hashlib.sha256(run.path.read_bytes()).hexdigest(), **run.params}
        frames += [
            ("questions", load_id, contract("questions").frame(list(new_questions.values()))),
            ("generation_runs", run.run_id, contract("generation_runs").frame([{
                "run_id": run.run_id, "dataset": dataset, "retrieval_run_id": None, "model": model,
                "eval_mode": run.tool, "prompt_template": None, "params": json.dumps(params, sort_keys=True)}])),
            ("answers", run.run_id, contract("answers").frame(answer_rows)),
        ]
        judge_run_id = None
        if judgment_rows:
            judge_run_id = check_id(f"{run.run_id}-{run.tool}", "judge run id")
            models = sorted({sc.evaluation_model for s in run.samples for sc in s.scores if sc.evaluation_model})
            frames += [
                ("judge_runs", judge_run_id, contract("judge_runs").frame([{
                    "judge_run_id": judge_run_id, "answer_run_id": run.run_id,
                    "judge_model": ",".join(models) or run.tool,
                    "rubric_version": ",".join(f"{run.tool}:{m.source_name}" for m in metrics.values()),
                    "metrics": ",".join(metrics),
                    "params": json.dumps({**params, **({"repeats": n_repeats} if n_repeats > 1 else {})},
                                         sort_keys=True)}])),
                ("judgments", judge_run_id, contract("judgments").frame(judgment_rows)),
                ("metric_declarations", judge_run_id, contract("metric_declarations").frame([
                    {"judge_run_id": judge_run_id, "metric": m, "source_name": spec.source_name,
                     "judge_family": run.tool, "label": spec.label, "higher_is_better": spec.higher_is_better,
                     "scale_min": spec.scale_min, "scale_max": spec.scale_max, "continuous": spec.continuous,
                     "description": spec.description or None}
                    for m, spec in metrics.items() if m not in seed])),
            ]
        out.append((run.run_id, judge_run_id))
    land(lake, frames)
    # an earlier landing of a run may have created questions, scored or declared metrics this one does not: the
    # landing skips empty frames, so those partitions go here
    landed_parts = {(t, v) for t, v, f in frames if not f.is_empty()}
    for run in runs:
        stale = [("questions", f"{dataset}.{run.run_id}")] + [
            (t, f"{run.run_id}-{run.tool}") for t in ("judge_runs", "judgments", "metric_declarations")]
        for table, value in stale:
            if (table, value) not in landed_parts and lake.drop_partition(table, value):
                say(f"dropped {table} {value} of an earlier landing of {run.run_id!r}")
    return out


def resolve_question(s: ExternalSample, by_text: dict[str, list[str]], where: dict) -> str | None:
    candidates = by_text.get(s.question, [])
    if len(candidates) > 1:
        hinted = [h for h in s.question_id_hints if h in candidates]
        if len(hinted) != 1:
            raise InputError(f"{len(candidates)} questions of the dataset have this text ({', '.join(candidates[:3])})"
                             "; which one is meant is not said", **where,
                             field=f"{s.field_prefix}{'input' if s.field_prefix else 'user_input'}")
        return hinted[0]
    return candidates[0] if candidates else None


def metric_spec(run: ExternalRun, sc: ExternalScore, metric: str, seed: dict[str, MetricSpec],
                landed: dict[str, tuple[str, Declaration]], where: dict) -> MetricSpec:
    if not metric:
        raise InputError(f"metric name {sc.source_name!r} has no letter or digit", **where, field=sc.field)
    if metric in seed:
        return seed[metric]
    declared = run.declarations.get(sc.source_name)
    if declared is None:
        raise InputError(f"metric {sc.source_name!r} is not in the metric registry and not declared", **where,
                         field=sc.field)
    if declared.scale_max <= declared.scale_min:
        raise InputError(f"metric {sc.source_name!r}: the scale's max must exceed its min", **where, field=sc.field)
    earlier = landed.get(metric)
    if earlier is not None:
        judge_run_id, before = earlier
        keys = ("higher_is_better", "scale_min", "scale_max", "continuous")
        if judge_run_id != f"{run.run_id}-{run.tool}" and any(getattr(before, k) != getattr(declared, k)
                                                             for k in keys):
            raise InputError(f"metric {metric!r} was declared by judge run {judge_run_id!r} as "
                             f"{describe(before)}; this file makes it {describe(declared)}", **where, field=sc.field)
    return spec_of(metric, run.tool, sc.source_name, declared)


def describe(d: Declaration) -> str:
    return (f"[{fmt_number(d.scale_min)}, {fmt_number(d.scale_max)}] "
            f"{'higher' if d.higher_is_better else 'lower'} is better")


def judgments_of(run: ExternalRun, s: ExternalSample, qid: str, repeat: int, metrics: dict[str, MetricSpec],
                 seed: dict[str, MetricSpec], landed: dict[str, tuple[str, Declaration]], where: dict) -> list[dict]:
    """The judgment rows of one sample's scores (its repeat of the answer); each metric's spec found once (into
    `metrics`)."""
    rows = []
    for sc in s.scores:
        metric = external_metric_name(run.tool, sc.source_name)
        spec = metrics.get(metric) or metric_spec(run, sc, metric, seed, landed, where)
        metrics[metric] = spec
        rows.append(judgment(run, qid, repeat, metric, spec, sc, where))
    return rows


def at(s: ExternalSample) -> str:
    """Where a sample is, as an error says it: its line, or its place in a one-line document."""
    return f"line {s.line}" if s.line and not s.field_prefix else s.field_prefix.rstrip(".") or f"line {s.line}"


def check_repeat_numbering(run: ExternalRun) -> None:
    """A file that numbers its repeats numbers every sample."""
    numbered = [s for s in run.samples if s.repeat is not None]
    if numbered and len(numbered) < len(run.samples):
        s = next(s for s in run.samples if s.repeat is None)
        raise InputError(f"this sample has no repeat number, and the file numbers its repeats ({at(numbered[0])} "
                         f"has repeat {numbered[0].repeat})", file=str(run.path), line=s.line,
                         field=f"{s.field_prefix}{REPEAT_FIELD}")


def check_same_repeats(run: ExternalRun, repeats: dict[str, dict[int, ExternalSample]]) -> None:
    """Every question of the run has repeats 1..N, N the run's most: a repeat naming a question that repeat 1 does
    not hold, or a question with fewer repeats than the others, is refused where it is."""
    n = max((max(done) for done in repeats.values()), default=1)
    names = FIELDS[run.tool]
    for qid, done in repeats.items():
        if sorted(done) == list(range(1, n + 1)):
            continue
        if 1 not in done:
            s = done[min(done)]
            raise InputError(f"repeat {min(done)} names question {qid!r} ({s.question[:60]!r}), which the run's repeat "
                             f"1 does not hold: every question of a run has the same repeats, 1..{n}",
                             file=str(run.path), line=s.line,
                             field=f"{s.field_prefix}{REPEAT_FIELD if s.repeat is not None else names['question']}")
        s = done[1]
        missing = [r for r in range(1, n + 1) if r not in done]
        raise InputError(f"question {qid!r} ({s.question[:60]!r}) has repeats {', '.join(map(str, sorted(done)))}, "
                         f"not {missing[0]}: every question of a run has the same repeats, 1..{n} (repeat {n} is at "
                         f"{at(next(d[n] for d in repeats.values() if n in d))})", file=str(run.path), line=s.line,
                         field=f"{s.field_prefix}{REPEAT_FIELD if s.repeat is not None else names['question']}")


def judgment(run: ExternalRun, qid: str, repeat: int, metric: str, spec: MetricSpec, sc: ExternalScore,
             where: dict) -> dict:
    row = {"judge_run_id": f"{run.run_id}-{run.tool}", "question_id": qid, "metric": metric, "repeat": repeat,
           "rubric": f"{run.tool}:{sc.source_name}", "rationale": sc.reason, "_file": where["file"],
           "_line": where["line"]}
    if sc.error is not None or sc.score is None or math.isnan(sc.score):
        why = sc.error or f"{run.tool} wrote no score for {sc.source_name!r}"
        return row | {"raw_score": None, "status": "failed", "error": why}
    if not spec.on_scale(sc.score):
        raise InputError(f"score {sc.score!r} is off the {metric} scale; allowed: {spec.allowed()}", **where,
                         field=sc.field)
    return row | {"raw_score": float(sc.score), "status": "ok", "error": None}
