"""What a Ragas or DeepEval export is written from: an answer run, or a judge run and its answer run, read back
from the lake as one sample per answer (and per repeat); sources/ragas_files.py and sources/deepeval_runs.py write
the samples in their formats. The metrics are the ones the ingest side declares (external_runs.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.core.metrics import MetricSpec
from python_jobs.sources.external_runs import declared_specs, spec_of


@dataclass
class ExportSample:
    question_id: str
    question: str
    response: str
    reference: str | None
    contexts: list[str] | None
    context_ids: list[str] | None
    reference_contexts: list[str] | None
    scores: dict[str, dict[str, Any]]  # tool-facing metric name -> {score, reason, error, status, threshold, ...}
    repeat: int | None = None  # which judgment of the answer (a judge run with repeats: one sample per repeat)


def load_export(lake: Lake, run_id: str, tool: str) -> tuple[list[ExportSample], dict[str, MetricSpec]]:
    """An answer run, or a judge run and its answer run, as the samples an export writes. A metric of `tool` keeps
    its raw score and its own name; any other is written normalised to [0, 1] (both tools' convention) under its
    registry name (Ragas: a column) or label (DeepEval). A judge run with repeats gives each answer once per repeat,
    in repeat order (what the readers take as its repeats)."""
    judge = lake.read("judge_runs", where={"judge_run_id": run_id})
    answer_run_id = judge["answer_run_id"][0] if judge.height else run_id
    runs = lake.read("generation_runs", where={"run_id": answer_run_id})
    if runs.height == 0:
        raise InputError(f"no answer run or judge run {run_id!r} in the lake", field="run_id")
    dataset = runs["dataset"][0]
    answers = lake.read_partition("answers", answer_run_id).filter(pl.col("answer").is_not_null()).sort("question_id")
    questions = lake.read("questions", where={"dataset": dataset},
                          columns=["question_id", "question", "reference_answers", "meta"])
    q = {r["question_id"]: r for r in questions.iter_rows(named=True)}
    evidence = lake.read("evidence", where={"dataset": dataset}, columns=["question_id", "evidence_ordinal",
                                                                          "evidence_text"])
    gold: dict[str, list[str]] = {}
    for r in evidence.sort(["question_id", "evidence_ordinal"]).iter_rows(named=True):
        if r["evidence_text"]:
            gold.setdefault(r["question_id"], []).append(r["evidence_text"])
    chunk_wanted = {c for ids in answers["context_chunk_ids"].drop_nulls() for c in ids}
    chunks = lake.read("chunks", where={"dataset": dataset}, columns=["chunk_id", "text"]).filter(
        pl.col("chunk_id").is_in(list(chunk_wanted)))
    chunk_text = dict(zip(chunks["chunk_id"], chunks["text"], strict=True))
    specs: dict[str, MetricSpec] = {}
    by_answer: dict[tuple[str, int], dict[str, dict[str, Any]]] = {}
    n_repeats = 1
    if judge.height:
        seed, landed = declared_specs(lake)
        judgments = lake.read_partition("judgments", run_id)
        for metric in dict.fromkeys(judgments["metric"].to_list()):
            if metric in seed:
                specs[metric] = seed[metric]
            elif metric in landed:
                d = lake.read("metric_declarations", where={"metric": metric}).row(0, named=True)
                specs[metric] = spec_of(metric, d["judge_family"], d["source_name"], landed[metric][1])
            else:
                raise InputError(f"judge run {run_id!r} judged {metric!r}, which the metric registry does not hold",
                                 field="metric")
        params = json.loads(judge["params"][0] or "{}")
        thresholds = params.get("thresholds", {})
        # a DeepEval run's per-metric evaluation models (None for metrics that used none); else the judge model
        models = params.get("evaluation_models", {})
        n_repeats = max(judgments["repeat"].max() or 1, 1)
        for r in judgments.iter_rows(named=True):
            spec = specs[r["metric"]]
            own = spec.judge_family == tool
            name = spec.source_name if own else (r["metric"] if tool == "ragas" else spec.label)
            value = r["raw_score"] if r["status"] == "ok" else None
            score = value if own or value is None else spec.normalize(value)
            by_answer.setdefault((r["question_id"], r["repeat"]), {})[name] = {
                "score": score, "reason": r["rationale"], "error": r["error"] if r["status"] != "ok" else None,
                "status": r["status"], "higher_is_better": spec.higher_is_better,
                "threshold": thresholds.get(r["metric"], 0.5),
                "model": models[r["metric"]] if r["metric"] in models else judge["judge_model"][0]}
    samples = []
    for a in answers.iter_rows(named=True):
        if a["question_id"] not in q:
            raise InputError(f"question {a['question_id']!r} of run {answer_run_id!r} is not in the lake",
                             field="question_id")
        question = q[a["question_id"]]
        passages = json.loads(a["passages"]) if a["passages"] else None
        if passages is not None:
            contexts = [p.get("text") if p.get("text") is not None else chunk_text.get(p.get("chunk_id"), "")
                        for p in passages]
            ids = [p.get("context_id") or p.get("chunk_id") for p in passages]
        elif a["context_chunk_ids"] is not None:
            contexts = [chunk_text.get(c, "") for c in a["context_chunk_ids"]]
            ids = list(a["context_chunk_ids"])
        else:
            contexts, ids = None, None
        meta = json.loads(question["meta"] or "{}")
        refs = question["reference_answers"]
        samples += [ExportSample(
            question_id=a["question_id"], question=question["question"], response=a["answer"],
            reference=refs[0] if refs else None, contexts=contexts,
            context_ids=ids if ids and all(i is not None for i in ids) else None,
            reference_contexts=gold.get(a["question_id"]) or meta.get("reference_contexts"),
            scores=by_answer.get((a["question_id"], repeat), {}), repeat=repeat if n_repeats > 1 else None)
            for repeat in range(1, n_repeats + 1)]
    return samples, specs
