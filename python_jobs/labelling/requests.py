"""`finrag label-next`: choose the unlabelled answers whose human labels would narrow the calibrated interval most,
write them as a label file `finrag import-human-labels` reads back, and land the design (`label_requests`).

- The candidates are the answer run's answers that have no label of the metric in the label set yet (the lake's
  answers and human_labels: what `import-human-labels` just landed counts before any build). The predictor's scores
  come from the published marts (python_jobs/marts/published.py): a lexical predictor's from
  fct_question_metric_scores, a judged one's every ok repeat of every judge run of the answer run from
  fct_judge_scores (its mean and its repeats' spread). The rule, its weights and the draw: design.py.
- The label file: one JSON line per chosen answer, the import format with `score: null` for the person to fill in,
  the request's id, and a `context` object (question, answer, the predictor's score, the inclusion probability)
  the import ignores.
- `label_requests` gets one row per candidate (chosen or not) with its inclusion probability: the partition of the
  label set keeps other runs' and metrics' requests and replaces this run and metric's (a new request is a new
  design; labels of the old one's answers that are in the set by then are a census of their part).
- Checked before anything lands or is written (InputError naming the option): the label set is an id; the answer run
  is in the lake; the metric is a judged metric; the predictor a lexical or judged metric that scored the run in
  the published marts; 1 <= N <= the number of unlabelled answers. The same inputs and seed give the same file.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl

from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.core.metrics import load_metrics
from python_jobs.judge.calibration import predictor_families
from python_jobs.labelling.design import inclusion_probabilities, systematic_sample, uncertainty

TABLE = "label_requests"
DEFAULT_THRESHOLD = 0.5  # a metric an external run declared has no pass threshold in the seed


def pass_threshold(metric: str) -> float:
    """The metric's pass threshold on the normalised scale, as the build published it (dim_metrics, from the metric
    registry); DEFAULT_THRESHOLD for one without (a metric an external run declared)."""
    from python_jobs.marts.published import select

    found = select("select pass_threshold from dim_metrics where metric = ?", [metric])
    value = found["pass_threshold"][0] if found.height else None
    return DEFAULT_THRESHOLD if value is None else float(value)


def predictor_scores(answer_run: str, predictor: str, family: str) -> pl.DataFrame:
    """question_id, mean, repeat_var: the predictor's scores of the run's answers, from the published marts."""
    from python_jobs.marts.published import select

    if family == "lexical":
        return select("select question_id, avg(value) as mean, 0.0 as repeat_var from fct_question_metric_scores "
                      "where run_kind = 'generation' and run_id = ? and metric = ? group by question_id",
                      [answer_run, predictor])
    return select("select question_id, avg(normalized_score) as mean, var_pop(normalized_score) as repeat_var "
                  "from fct_judge_scores where answer_run_id = ? and metric = ? and status = 'ok' "
                  "and normalized_score is not null group by question_id", [answer_run, predictor])


def request_id(*parts: object) -> str:
    return "lr-" + hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).hexdigest()[:16]


def choose(lake: Lake, *, answer_run: str, n: int, label_set: str, metric: str, predictor: str, seed: int,
           out: Path) -> dict:
    """Choose, land the design and write the label file; returns the request's figures."""
    specs = load_metrics()
    if metric not in specs:
        raise InputError(f"unknown metric {metric!r}: the label is of a judged metric ({', '.join(specs)})",
                         field="metric")
    families = predictor_families(lake)
    if predictor not in families:
        raise InputError(f"unknown predictor metric {predictor!r}: a per-answer score of the metric registry, "
                         f"lexical or judged", field="predictor")
    runs = dict(lake.read("generation_runs", columns=["run_id", "dataset"]).iter_rows())
    if answer_run not in runs:
        raise InputError(f"unknown answer run {answer_run!r} (not in the lake's generation_runs)", field="answer_run")
    answers = lake.read("answers", where={"run_id": answer_run}, columns=["question_id", "answer"])
    labelled = set(lake.read("human_labels", where={"label_set": label_set, "answer_run_id": answer_run},
                             columns=["question_id", "metric"]).filter(pl.col("metric") == metric)["question_id"])
    candidates = answers.filter(~pl.col("question_id").is_in(sorted(labelled))).sort("question_id")
    if n < 1:
        raise InputError(f"--n {n}: ask for at least one answer", field="n")
    if n > candidates.height:
        raise InputError(f"--n {n} is more than the {candidates.height} unlabelled answers of run {answer_run!r} "
                         f"({answers.height} answers, {len(labelled)} of them labelled with {metric} in label set "
                         f"{label_set!r}): ask for at most {candidates.height}", field="n")
    scores = predictor_scores(answer_run, predictor, families[predictor])
    if scores.height == 0:
        raise InputError(f"predictor {predictor!r} scored no answer of run {answer_run!r} in the published marts "
                         "(score or judge the run, then `finrag build`)", field="predictor")
    frame = candidates.join(scores, on="question_id", how="left")
    mean = frame["mean"].to_numpy().astype(float)  # null (not scored) -> NaN: as uncertain as any
    u = uncertainty(mean, frame["repeat_var"].fill_null(0.0).to_numpy().astype(float), pass_threshold(predictor))
    pi = inclusion_probabilities(u, n)
    chosen = np.zeros(frame.height, dtype=bool)
    chosen[systematic_sample(pi, np.random.default_rng(seed))] = True
    rid = request_id(label_set, answer_run, metric, predictor, n, seed, *frame["question_id"].to_list())
    design = contract(TABLE).frame([
        {"label_set": label_set, "answer_run_id": answer_run, "metric": metric, "question_id": q,
         "request_id": rid, "predictor": predictor, "predicted_score": None if np.isnan(m) else float(m),
         "uncertainty": float(uu), "inclusion_probability": float(p), "chosen": bool(c), "seed": seed}
        for q, m, uu, p, c in zip(frame["question_id"], mean, u, pi, chosen, strict=True)])
    kept = lake.read_partition(TABLE, label_set).filter(
        (pl.col("answer_run_id") != answer_run) | (pl.col("metric") != metric))
    landed = pl.concat([kept.drop("created_at", strict=False), design], how="diagonal_relaxed") if kept.height \
        else design
    questions = lake.read("questions", where={"dataset": runs[answer_run]}, columns=["question_id", "question"])
    picked = frame.with_columns(pl.Series("pi", pi), pl.Series("chosen", chosen)).filter(pl.col("chosen")).join(
        questions.unique("question_id"), on="question_id", how="left").sort("question_id")
    lines = [json.dumps({"answer_run_id": answer_run, "question_id": r["question_id"], "metric": metric,
                         "score": None, "annotator": None, "label": None, "request_id": rid,
                         "context": {"question": r["question"], "answer": r["answer"], "predictor": predictor,
                                     "predicted_score": r["mean"], "inclusion_probability": r["pi"]}})
             for r in picked.iter_rows(named=True)]
    lake.land([(TABLE, label_set, landed)])
    out.write_text("".join(line + "\n" for line in lines))
    return {"request_id": rid, "chosen": int(chosen.sum()), "candidates": frame.height, "labelled": len(labelled),
            "unscored": int(np.isnan(mean).sum())}


def check_against_requests(lake: Lake, label_set: str, named: pl.DataFrame, landed: pl.DataFrame) -> list[str]:
    """What to say about a label file (`named`: its answer_run_id, question_id, metric) measured against the set's
    label-next requests: labels of answers the current request of their run and metric did not choose (landed; the
    active mean leaves them out), and chosen answers the set (`landed`: its labels after the import) still has no
    label for."""
    requests = lake.read_partition(TABLE, label_set)
    notes: list[str] = []
    if requests.height == 0 or named.height == 0:
        return notes
    for (run, metric), group in named.group_by(["answer_run_id", "metric"], maintain_order=True):
        design = requests.filter((pl.col("answer_run_id") == run) & (pl.col("metric") == metric))
        if design.height == 0:
            continue
        chosen = set(design.filter(pl.col("chosen"))["question_id"])
        candidates = set(design["question_id"])
        named = set(group["question_id"])
        unchosen = sorted((named & candidates) - chosen)
        if unchosen:
            notes.append(f"{len(unchosen)} label(s) of run {run} ({metric}) name answers label-next did not choose "
                         f"(request {design['request_id'][0]}): landed, and PPI++ and the human-only mean use them, "
                         f"but the active mean leaves them out: {', '.join(unchosen[:5])}"
                         + (" ..." if len(unchosen) > 5 else ""))
        missing = len(chosen - set(landed.filter((pl.col("answer_run_id") == run)
                                                 & (pl.col("metric") == metric))["question_id"]))
        if missing:
            notes.append(f"{missing} of the {len(chosen)} answers label-next chose in run {run} ({metric}) have no "
                         "label yet")
    return notes
