"""`finrag label-next` round trip on FinanceBench's labelled answers (the judge suites' shared base home): a judge
run with 3 noisy repeats of correctness over one configuration's 150 answers, built; label-next chooses 20 answers
by the judge's uncertainty and writes the label file; a "person" fills in the human labels FinanceBench gives them
(one line left blank, one extra label of an answer it did not choose); `finrag import-human-labels` reads it back,
`finrag calibrate` pairs it, `finrag build` builds. Checked:

- the file and `label_requests`: 20 chosen among the 150 candidates, the probabilities summing to 20, the same seed
  writing the same file;
- import says what it skipped (the blank line), what label-next did not choose (the extra label) and what is still
  missing;
- mart_judge_calibrated's active_* columns equal python_jobs/labelling/design.py's weighted mean over the same
  answers, probabilities and labels (to 1e-9), while PPI++ and the human-only mean still use every label;
- bad input: N larger than the unlabelled answers, an unknown predictor, a label file with no score filled in: one
  clear message each, nothing lands."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from python_jobs.core.lake import Lake
from python_jobs.labelling.design import active_mean
from support.cli import MODELS_ONLY, run_finrag
from support.judge_home import copy_home
from support.warehouse import warehouse_query

pytestmark = pytest.mark.slow

CONFIG = "gpt-4-1106-preview_oracle"
LABEL_SET = "fb_active"
JUDGE_RUN = "noisy_correctness_judge_x3"
N = 20
Z = 1.959963984540054  # alpha 0.05 (dbt_project.yml var run_comparison_alpha)


def normalised(raw: float) -> float:
    return (raw + 1) / 3  # correctness' scale -1..2 (seeds/metrics.csv)


@pytest.fixture(scope="module")
def built(base: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    home = copy_home(base, tmp_path_factory.mktemp("label_next") / "warehouse")
    lake = Lake(home)
    human = lake.read("human_labels", where={"label_set": "financebench_human", "answer_run_id": CONFIG})
    raw = dict(zip(human["question_id"], human["raw_score"], strict=True))
    rng = random.Random(57)
    # a judge that agrees with the human three times in four and guesses otherwise, three times per answer
    judged = {q: [raw[q] if rng.random() < 0.75 else float(rng.choice([-1, 0, 1, 2])) for _ in range(3)]
              for q in sorted(raw)}
    lake.land([
        ("judge_runs", JUDGE_RUN, pl.DataFrame([{"judge_run_id": JUDGE_RUN, "answer_run_id": CONFIG,
                                                  "judge_model": "noise-model",
                                                  "rubric_version": "judge_correctness_v1@noise"}])),
        ("judgments", JUDGE_RUN, pl.DataFrame([
            {"judge_run_id": JUDGE_RUN, "question_id": q, "metric": "correctness", "repeat": i + 1, "raw_score": s,
             "status": "ok"} for q, scores in judged.items() for i, s in enumerate(scores)],
            schema_overrides={"repeat": pl.Int32})),
    ])
    run_finrag(home, "build", *MODELS_ONLY, "--select", "+fct_judge_scores +dim_metrics")  # what label-next reads
    folder = tmp_path_factory.mktemp("files")
    out = folder / "next.jsonl"
    args = ("label-next", "--answer-run", CONFIG, "--n", str(N), "--label-set", LABEL_SET, "--predictor",
            "correctness", "--seed", "5", "--out")
    first = run_finrag(home, *args, str(out))
    again = run_finrag(home, *args, str(folder / "again.jsonl"))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    # the person: every chosen answer's FinanceBench label but one left blank, and one answer it was not asked for
    filled = [{**row, "score": None if i == 0 else int(raw[row["question_id"]]), "annotator": "a1"}
              for i, row in enumerate(lines)]
    chosen = {row["question_id"] for row in lines}
    extra = next(q for q in sorted(raw) if q not in chosen)
    filled.append({"answer_run_id": CONFIG, "question_id": extra, "metric": "correctness", "score": int(raw[extra])})
    labels = folder / "filled.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in filled))
    imported = run_finrag(home, "import-human-labels", str(labels), "--label-set", LABEL_SET)
    run_finrag(home, "calibrate", "--label-set", LABEL_SET, "--human-metric", "correctness",
               "--predictor", "correctness")
    run_finrag(home, "build", *MODELS_ONLY, "--select", "+mart_judge_calibrated")
    return {"home": home, "raw": raw, "judged": judged, "first": first, "again": again, "out": out,
            "again_out": folder / "again.jsonl", "lines": lines, "blank": lines[0]["question_id"], "extra": extra,
            "imported": imported}


def test_label_next_writes_the_chosen_answers_and_lands_the_design(built: dict) -> None:
    lines, lake = built["lines"], Lake(built["home"])
    assert len(lines) == N and all(row["score"] is None and row["metric"] == "correctness" for row in lines)
    assert all(row["context"]["question"] and row["context"]["inclusion_probability"] > 0 for row in lines)
    rid = built["first"].stdout.strip()
    assert all(row["request_id"] == rid for row in lines)
    assert built["out"].read_bytes() == built["again_out"].read_bytes() and built["again"].stdout.strip() == rid
    design = lake.read("label_requests", where={"label_set": LABEL_SET})
    assert design.height == 150 and design["chosen"].sum() == N
    assert design["inclusion_probability"].sum() == pytest.approx(N, abs=1e-9)
    assert set(design.filter(pl.col("chosen"))["question_id"]) == {row["question_id"] for row in lines}
    # the judge's mean and spread over its repeats
    by_q = dict(zip(design["question_id"], design["predicted_score"], strict=True))
    assert all(by_q[q] == pytest.approx(np.mean([normalised(s) for s in built["judged"][q]]), abs=1e-9)
               for q in by_q)
    # answers whose repeats disagree are more likely to be asked for than answers whose repeats agree at 0 or 1
    spread = design.with_columns(pl.col("uncertainty") > 0.3)
    assert (spread.filter(pl.col("uncertainty"))["inclusion_probability"].min()
            > spread.filter(~pl.col("uncertainty"))["inclusion_probability"].max())


def test_import_says_what_label_next_did_not_choose(built: dict) -> None:
    err = built["imported"].stderr
    assert "1 line(s) with score null skipped" in err
    assert f"1 label(s) of run {CONFIG} (correctness) name answers label-next did not choose" in err
    assert built["extra"] in err
    assert f"1 of the {N} answers label-next chose in run {CONFIG} (correctness) have no label yet" in err


def test_the_calibrated_mean_weights_label_next_labels_by_their_probabilities(built: dict) -> None:
    wh, raw, lake = built["home"], built["raw"], Lake(built["home"])
    design = lake.read("label_requests", where={"label_set": LABEL_SET}).sort("question_id")
    qs = design["question_id"].to_list()
    labelled_qs = {row["question_id"] for row in built["lines"]} - {built["blank"]}
    f = np.array([np.mean([normalised(s) for s in built["judged"][q]]) for q in qs])
    y = np.array([normalised(raw[q]) for q in qs])
    want = active_mean(f, y, design["inclusion_probability"].to_numpy(), np.array([q in labelled_qs for q in qs]),
                       np.zeros(len(qs), dtype=bool), N, Z)
    (n_labelled, n_active, lam, mean, lower, upper, human_mean), = warehouse_query(wh, f"""
        select n_labelled, active_n_labelled, active_lambda, active_mean, active_lower, active_upper, human_mean
        from mart_judge_calibrated where label_set = '{LABEL_SET}' and answer_run_id = '{CONFIG}'""")
    assert (n_labelled, n_active) == (N, N - 1)  # PPI++ counts the extra label; the active mean does not
    assert want is not None and 0 < want["lambda"] < 1
    assert lam == pytest.approx(want["lambda"], abs=1e-9)
    assert mean == pytest.approx(want["mean"], abs=1e-9)
    assert [lower, upper] == pytest.approx([max(0.0, want["lower"]), min(1.0, want["upper"])], abs=1e-9)
    assert human_mean == pytest.approx(np.mean([normalised(raw[q]) for q in labelled_qs | {built["extra"]}]),
                                       abs=1e-9)


def test_bad_input_is_one_clear_message_and_lands_nothing(built: dict, tmp_path: Path) -> None:
    wh = built["home"]
    lake = Lake(wh)
    before = lake.read("label_requests", where={"label_set": LABEL_SET}).sort("question_id")
    out = tmp_path / "x.jsonl"
    too_many = run_finrag(wh, "label-next", "--answer-run", CONFIG, "--n", "200", "--label-set", LABEL_SET,
                          "--predictor", "correctness", "--out", str(out), check=False)
    assert too_many.returncode != 0
    assert ("field 'n': --n 200 is more than the 130 unlabelled answers of run 'gpt-4-1106-preview_oracle' (150 "
            "answers, 20 of them labelled with correctness in label set 'fb_active'): ask for at most 130"
            ) in too_many.stderr
    unknown = run_finrag(wh, "label-next", "--answer-run", CONFIG, "--n", "5", "--label-set", LABEL_SET,
                         "--predictor", "nope", "--out", str(out), check=False)
    assert unknown.returncode != 0 and "unknown predictor metric 'nope'" in unknown.stderr
    assert not out.exists()
    assert lake.read("label_requests", where={"label_set": LABEL_SET}).sort("question_id").equals(before)
    labels_before = lake.read("human_labels", where={"label_set": LABEL_SET}).sort("question_id")
    unfilled = run_finrag(wh, "import-human-labels", str(built["out"]), "--label-set", LABEL_SET, check=False)
    assert unfilled.returncode == 2
    assert f"file {built['out']}, field 'score': no line has a score yet ({N} with score null)" in unfilled.stderr
    assert lake.read("human_labels", where={"label_set": LABEL_SET}).sort("question_id").equals(labels_before)
