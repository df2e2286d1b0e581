"""A small warehouse home for the dashboard's rules: two datasets whose questions share ids (as two TREC
collections both use topic "301"), each answered by two imported answer runs, and a third dataset with ids of its
own whose one answer run two judge runs judged on `hal` (OmniEval's hallucination, where lower is better). Landed
through the Lake API with the contracts' frames, then `finrag build` (the marts only).

The scores, worked by hand:
- exact_match, dataset shared_a: run a1 answers q1 right only, a2 answers q1 and q2 right (a2 wins q2, ties q1 and
  q3); dataset shared_b: b1 and b2 both answer everything wrong.
- hal (raw = normalised: the scale is 0..1), judge runs j1 then j2 of c1 (dataset judged): h1 1 -> 0 (j2 says it
  no longer hallucinates: B passes, B wins), h2 0 -> 0 (both pass, a tie), h3 0 -> 1 (A passes only, B loses).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from python_jobs.core.contracts import contract
from python_jobs.core.lake import Lake
from support.cli import MODELS_ONLY, run_finrag

QUESTION_IDS = ("q1", "q2", "q3")
DATASETS = ("shared_a", "shared_b")
JUDGED_DATASET, JUDGED_IDS = "judged", ("h1", "h2", "h3")
ANSWERS = {  # run -> (dataset, answers of q1, q2, q3); every reference answer is "right <dataset> <qid>"
    "a1": ("shared_a", ("right", "wrong", "wrong")),
    "a2": ("shared_a", ("right", "right", "wrong")),
    "b1": ("shared_b", ("wrong", "wrong", "wrong")),
    "b2": ("shared_b", ("wrong", "wrong", "wrong")),
    "c1": (JUDGED_DATASET, ("right", "right", "right")),
}
HAL = {"j1": (1.0, 0.0, 0.0), "j2": (0.0, 0.0, 1.0)}  # judge run of c1 -> raw hal of h1, h2, h3
BUILD_ARGS = ("--quiet", *MODELS_ONLY)


@dataclass(frozen=True)
class SharedIdsHome:
    home: Path


def question_text(dataset: str, question_id: str) -> str:
    return f"What does {dataset} ask in {question_id}?"


def build(home: Path) -> SharedIdsHome:
    lake = Lake(home)
    frames = []
    ids = {**dict.fromkeys(DATASETS, QUESTION_IDS), JUDGED_DATASET: JUDGED_IDS}
    for dataset, question_ids in ids.items():
        questions = contract("questions").frame([
            {"question_id": q, "dataset": dataset, "split": "test", "question": question_text(dataset, q),
             "reference_answers": [f"right {dataset} {q}"], "source": "imported"} for q in question_ids])
        frames.append(("questions", dataset, questions))
    for run_id, (dataset, answers) in ANSWERS.items():
        run = contract("generation_runs").frame([{"run_id": run_id, "dataset": dataset, "model": f"model-{run_id}",
                                                  "eval_mode": "closed_book", "params": "{}"}])
        rows = contract("answers").frame([
            {"run_id": run_id, "question_id": q, "answer": f"{verdict} {dataset} {q}" if verdict == "right"
             else "something else entirely"} for q, verdict in zip(ids[dataset], answers, strict=True)])
        frames += [("generation_runs", run_id, run), ("answers", run_id, rows)]
    for judge_run_id, scores in HAL.items():
        run = contract("judge_runs").frame([{"judge_run_id": judge_run_id, "answer_run_id": "c1",
                                             "judge_model": f"judge-{judge_run_id}", "rubric_version": "judge_hal_v1@x",
                                             "metrics": "hal", "params": "{}"}])
        judgments = contract("judgments").frame([
            {"judge_run_id": judge_run_id, "question_id": q, "metric": "hal", "rubric": "judge_hal_v1@x",
             "raw_score": score, "rationale": "scripted", "status": "ok"}
            for q, score in zip(JUDGED_IDS, scores, strict=True)])
        frames += [("judge_runs", judge_run_id, run), ("judgments", judge_run_id, judgments)]
    lake.land(frames)
    run_finrag(home, "build", *BUILD_ARGS)
    return SharedIdsHome(home)
