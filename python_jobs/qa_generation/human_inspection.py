"""Human inspection of generated instances: the one rule that turns annotators' scores into verdicts and splits.

score 1-2 -> dropped; 3 -> the corrected text applied (original kept in meta); 4-5 -> kept; a human-accepted instance
whose seeded split is gen_test becomes gen_human_test, the others stay gen_train. `apply_human` is the one place
the rule lives: generate-qa applies it too, so a re-run keeps the human verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import polars as pl

from python_jobs.core.contracts import contract
from python_jobs.core.lake import Lake
from python_jobs.qa_generation.tasks import HUMAN, SPLIT_DROPPED, SPLIT_HUMAN_TEST, SPLIT_TEST, SPLIT_TRAIN


# ---- human inspection: the one rule -------------------------------------------------------------------------------
def human_verdict(score: int) -> str:
    return "drop" if score <= 2 else "fix" if score == 3 else "keep"


def latest_human(lake: Lake) -> pl.DataFrame:
    """The latest human inspection per question (a later import wins)."""
    ins = lake.read("qa_inspections").filter(pl.col("inspector") == HUMAN)
    return ins.sort(["created_at", "inspection_run_id"]).unique("question_id", keep="last")


def apply_human(questions: pl.DataFrame, human: pl.DataFrame) -> pl.DataFrame:
    """Questions of a generation run with the human verdicts applied, from their original (generated) text, so
    applying any number of times gives the same rows. The verdict lands in the columns human_verdict, human_score and
    human_inspection_run_id (the models read them: this is the one place "the latest human inspection wins" is
    decided); meta keeps original_question / original_answers (when fixed) and llm_split (what the LLM inspector
    left)."""
    by_q = {r["question_id"]: r for r in human.iter_rows(named=True)}
    rows = []
    for q in questions.iter_rows(named=True):
        meta = json.loads(q["meta"] or "{}")
        # restore the generated text first, then apply the latest human verdict (if any)
        if "original_question" in meta:
            q["question"] = meta.pop("original_question")
            q["reference_answers"] = meta.pop("original_answers")
            if q["conversation"]:
                q["conversation"] = [*q["conversation"][:-1], {"role": "user", "content": q["question"]}]
        q["split"] = meta.get("llm_split", q["split"])
        h = by_q.get(q["question_id"])
        q["human_verdict"] = q["human_score"] = q["human_inspection_run_id"] = None
        if h is not None:
            verdict = h["verdict"]
            q.update(human_verdict=verdict, human_score=h["score"], human_inspection_run_id=h["inspection_run_id"])
            if verdict == "drop":
                q["split"] = SPLIT_DROPPED
            else:
                q["split"] = SPLIT_HUMAN_TEST if meta.get("assigned_split") == SPLIT_TEST else SPLIT_TRAIN
            if verdict == "fix":
                meta["original_question"], meta["original_answers"] = q["question"], q["reference_answers"]
                if h["corrected_question"]:
                    q["question"] = h["corrected_question"]
                    if q["conversation"]:
                        q["conversation"] = [*q["conversation"][:-1], {"role": "user", "content": q["question"]}]
                if h["corrected_answer"]:
                    q["reference_answers"] = [h["corrected_answer"]]
        q["meta"] = json.dumps(meta, sort_keys=True, ensure_ascii=False)
        rows.append(q)
    return contract("questions").frame(rows) if rows else questions


def generated_questions(lake: Lake, dataset: str | None = None, generation_run_id: str | None = None) -> pl.DataFrame:
    """Questions landed by generate-qa (`finrag synth`'s are source=generated too, without a generation run)."""
    qs = lake.read("questions").filter(pl.col("generation_run_id").is_not_null())
    if dataset:
        qs = qs.filter(pl.col("dataset") == dataset)
    if generation_run_id:
        qs = qs.filter(pl.col("generation_run_id") == generation_run_id)
    return qs


def reland_with_human(lake: Lake, generation_run_ids: Iterable[str], human: pl.DataFrame,
                      extra: Sequence[tuple[str, str, pl.DataFrame]] = ()) -> list[tuple[str, pl.DataFrame]]:
    """Re-land each generation run's questions partition with the human verdicts applied, together with `extra`
    frames, in one atomic landing (same load id: the partition is replaced)."""
    frames = []
    out = []
    for run_id in sorted(set(generation_run_ids)):
        qs = lake.read_partition("questions", run_id)
        fixed = apply_human(qs.drop("load_id", "created_at"), human)
        frames.append(("questions", run_id, fixed))
        out.append((run_id, fixed))
    lake.land([*extra, *frames])
    return out
