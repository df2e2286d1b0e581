"""Human labels as a rater, and as the ground truth judged numbers are calibrated against: FinanceBench's 16 labelled
result files land through the real CLI (the judge suites' shared base home: questions and answer runs ingested once
per session, support/judge_home.py); a copy of it gets, for one configuration, a random labelled subset of its human
labels as a label set of its own, a noisy judge run of correctness over all 150 answers and the pairing (`finrag
calibrate`), and is built once (`finrag build`, every model).

- mart_human_label_leaderboard (read with `finrag sql`, as the README's table is) gives exactly the label counts of
  the raw files; by question type the shares add up to the run's.
- mart_judge_calibrated equals ppi_py (`ppi_mean_ci` with lambda estimated and lambda = 1, `classical_mean_ci`) to
  1e-9 for both predictors, numeric match and the judge's correctness, with the ends cut to the scale [0, 1].
- mart_judge_calibrated_by_slice equals ppi_py on each stratum (FinanceBench's three question types, and the
  document types and companies, where strata with fewer than 2 labels are reported and left out), and its
  stratified mean is the strata's means weighted by their answers, with the variance sum w_h^2 se_h^2; `finrag report
  --judged --slice question_type` says so per stratum.
- a pairing naming an unknown label set, human metric or predictor is one clear error, and nothing lands."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate
from scipy.stats import norm

from python_jobs.core.lake import Lake
from support.cli import MODELS_ONLY, run_finrag
from support.judge_home import copy_home
from support.warehouse import warehouse_query

pytestmark = pytest.mark.slow

CONFIG = "gpt-4-1106-preview_oracle"  # one FinanceBench configuration: 150 answers, each with a human label
SUBSET = "fb_subset"
N_LABELLED = 40
JUDGE_RUN = "noisy_correctness_judge"
ALPHA = 0.05  # dbt_project.yml var run_comparison_alpha


def normalised(raw: float) -> float:
    return (raw + 1) / 3  # correctness' scale -1..2 (seeds/metrics.csv)


@pytest.fixture(scope="module")
def built(base: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The base home with the labelled subset, the noisy judge run and the pairing, built once."""
    home = copy_home(base, tmp_path_factory.mktemp("calibration") / "warehouse")
    lake = Lake(home)
    human = lake.read("human_labels", where={"label_set": "financebench_human", "answer_run_id": CONFIG})
    raw = dict(zip(human["question_id"], human["raw_score"], strict=True))
    rng = random.Random(45)
    labelled = sorted(rng.sample(sorted(raw), N_LABELLED))
    labels = tmp_path_factory.mktemp("labels") / "subset.jsonl"
    labels.write_text("".join(json.dumps({"answer_run_id": CONFIG, "question_id": q, "metric": "correctness",
                                          "score": int(raw[q])}) + "\n" for q in labelled))
    run_finrag(home, "import-human-labels", str(labels), "--label-set", SUBSET)
    # a judge that agrees with the human three times in four and guesses otherwise: a real predictor, not a copy
    judged = {q: raw[q] if rng.random() < 0.75 else float(rng.choice([-1, 0, 1, 2])) for q in sorted(raw)}
    lake.land([
        ("judge_runs", JUDGE_RUN, pl.DataFrame([{"judge_run_id": JUDGE_RUN, "answer_run_id": CONFIG,
                                                  "judge_model": "noise-model",
                                                  "rubric_version": "judge_correctness_v1@noise"}])),
        ("judgments", JUDGE_RUN, pl.DataFrame([{"judge_run_id": JUDGE_RUN, "question_id": q, "metric": "correctness",
                                                 "raw_score": s, "status": "ok"} for q, s in judged.items()])),
    ])
    run_finrag(home, "calibrate", "--label-set", SUBSET, "--human-metric", "correctness",
               "--predictor", "numeric_match", "--predictor", "correctness")
    run_finrag(home, "build", *MODELS_ONLY)
    return {"home": home, "raw": raw, "labelled": labelled, "judged": judged}


def test_the_leaderboard_counts_what_the_raw_files_say(built: dict, shared_data: Path) -> None:
    wh = built["home"]
    fb = shared_data / "financebench"
    files = sorted((fb / "results").glob("*.jsonl"))
    assert len(files) == 16

    raw = {(f.stem, label): n for f in files
           for label, n in Counter(json.loads(line)["label"] for line in f.open()).items()}
    out = run_finrag(wh, "sql", "select answer_run_id, label, n from mart_human_label_leaderboard "
                                "where label_set = 'financebench_human'", "--format", "json")
    mart = {(r["answer_run_id"], r["label"]): r["n"] for r in json.loads(out.stdout)}
    assert mart == raw
    assert mart[("gpt-4-1106-preview_sharedStore", "Refusal")] == 101  # the paper's 68 % refusals of GPT-4-Turbo

    out = run_finrag(wh, "sql", "select answer_run_id, label, cast(sum(n) as bigint) as n from "
                                "mart_human_label_by_slice where dimension = 'question_type' "
                                "and label_set = 'financebench_human' group by all", "--format", "json")
    assert {(r["answer_run_id"], r["label"]): r["n"] for r in json.loads(out.stdout)} == raw


def test_calibrated_means_equal_ppi_py(built: dict) -> None:
    wh, raw, labelled = built["home"], built["raw"], set(built["labelled"])
    numeric = dict(warehouse_query(wh, f"""select question_id, numeric_match from fct_generation_question_scores
        where run_id = '{CONFIG}' and numeric_match is not null"""))
    predictors = {"numeric_match": numeric,
                  "correctness": {q: normalised(s) for q, s in built["judged"].items()}}
    rows = {r[0]: r[1:] for r in warehouse_query(wh, f"""
        select predictor, predictor_run_id, n_labelled, n_unlabelled, predictor_mean, human_mean, human_lower,
            human_upper, ppi_lambda, ppi_mean, ppi_lower, ppi_upper, ppi_classic_mean, ppi_classic_lower,
            ppi_classic_upper, ppi_effective_gain
        from mart_judge_calibrated where label_set = '{SUBSET}' and answer_run_id = '{CONFIG}'""")}
    assert set(rows) == {"numeric_match", "correctness"}
    assert rows["numeric_match"][0] == CONFIG and rows["correctness"][0] == JUDGE_RUN

    def cut(interval: tuple) -> list[float]:
        return [min(max(float(np.ravel(end)[0]), 0.0), 1.0) for end in interval]

    for name, scores in predictors.items():
        lab = sorted(q for q in scores if q in labelled)
        unl = sorted(q for q in scores if q not in labelled)
        y = np.array([normalised(raw[q]) for q in lab])
        yhat, yhat_u = np.array([scores[q] for q in lab]), np.array([scores[q] for q in unl])
        (_, n, n_u, p_mean, h_mean, h_lo, h_hi, lam, ppi, ppi_lo, ppi_hi, ppi1, ppi1_lo, ppi1_hi, gain) = rows[name]
        assert (n, n_u) == (len(lab), len(unl))
        # numeric match scores only the answers with a numeric gold answer (53 of 150)
        assert (n, n_u) == ((10, 43) if name == "numeric_match" else (N_LABELLED, 150 - N_LABELLED))
        assert p_mean == pytest.approx(np.mean([*yhat, *yhat_u]), abs=1e-9)
        assert h_mean == pytest.approx(y.mean(), abs=1e-9)
        assert [h_lo, h_hi] == pytest.approx(cut(classical_mean_ci(y, alpha=ALPHA)), abs=1e-9)
        # PPI++: lambda estimated from the data (ppi_py's own estimate, the one its point estimate uses)
        assert ppi == pytest.approx(float(ppi_mean_pointestimate(y, yhat, yhat_u)[0]), abs=1e-9)
        assert ppi == pytest.approx(lam * yhat_u.mean() + y.mean() - lam * yhat.mean(), abs=1e-9)
        assert 0 < lam < 1
        assert [ppi_lo, ppi_hi] == pytest.approx(cut(ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA)), abs=1e-9)
        assert [ppi_lo, ppi_hi] == pytest.approx(cut(ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA, lam=lam)), abs=1e-9)
        # classic PPI: lambda = 1
        assert ppi1 == pytest.approx(float(ppi_mean_pointestimate(y, yhat, yhat_u, lam=1)[0]), abs=1e-9)
        assert [ppi1_lo, ppi1_hi] == pytest.approx(cut(ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA, lam=1)), abs=1e-9)
        human_width = np.subtract(*classical_mean_ci(y, alpha=ALPHA)[::-1])
        ppi_width = np.subtract(*[float(np.ravel(e)[0]) for e in ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA)][::-1])
        assert gain == pytest.approx((human_width / ppi_width) ** 2, rel=1e-9)

    # the judge's correctness is calibrated against the subset (its trust state), unless its kappa against the full
    # human labels reaches 0
    (state, method, cal_mean, kappa_lower), = warehouse_query(wh, f"""
        select trust_state, calibration_method, calibrated_mean, kappa_lower from mart_judge_trust
        where judge_run_id = '{JUDGE_RUN}' and metric = 'correctness' and label_set = '{SUBSET}'""")
    assert state == ("no_better_than_chance" if kappa_lower <= 0 else "calibrated")
    assert method == "ppi++" and cal_mean == rows["correctness"][8]
    # `finrag report --judged` says so beside the mean, with the mart's numbers
    (report,) = json.loads(run_finrag(wh, "report", "--judged", "--run-id", JUDGE_RUN, "--format", "json").stdout)
    lo, hi = rows["correctness"][9:11]
    assert report["trust_state"] == state and report["calibrated_mean"] == cal_mean
    assert (f"calibrated against {SUBSET} correctness (PPI++, {N_LABELLED} labelled of 150): "
            f"{cal_mean:.4f} [{lo:.4f}, {hi:.4f}]") in report["trust"]


def ends(interval: tuple) -> tuple[float, float]:
    low, high = (float(np.ravel(end)[0]) for end in interval)
    return low, high


def cut(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def stratum_reference(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> dict[str, tuple[float, float]]:
    """ppi_py on one stratum's data: each method's (mean, standard error), the error read off its uncut interval."""
    z = norm.ppf(1 - ALPHA / 2)
    human_low, human_high = ends(classical_mean_ci(y, alpha=ALPHA))
    out = {"human": (float(y.mean()), (human_high - human_low) / (2 * z))}
    if len(yhat_u):
        # a predictor without variation: lambda 0 (ppi_py divides by zero there; the mart's documented choice)
        lam = 0.0 if np.ptp(np.r_[yhat, yhat_u]) == 0 else None
        for name, method_lam in (("ppi", lam), ("ppi_classic", 1)):
            low, high = ends(ppi_mean_ci(y, yhat, yhat_u, alpha=ALPHA, lam=method_lam))
            point = float(ppi_mean_pointestimate(y, yhat, yhat_u, lam=method_lam)[0])
            out[name] = (point, (high - low) / (2 * z))
    return out


def test_calibrated_means_by_slice_equal_ppi_py_per_stratum_and_combine_by_weight(built: dict,
                                                                                  shared_data: Path) -> None:
    wh, raw, labelled = built["home"], built["raw"], set(built["labelled"])
    z = norm.ppf(1 - ALPHA / 2)
    source = [json.loads(line) for line in (shared_data / "financebench" / "data"
                                            / "financebench_open_source.jsonl").open()]
    numeric = dict(warehouse_query(wh, f"""select question_id, numeric_match from fct_generation_question_scores
        where run_id = '{CONFIG}' and numeric_match is not null"""))
    predictors = {"numeric_match": numeric,
                  "correctness": {q: normalised(s) for q, s in built["judged"].items()}}
    columns = ("value", "grain", "n_labelled", "n_unlabelled", "n_strata", "n_strata_excluded", "share", "weight",
               "not_calibrated_reason", "calibration_method", "calibrated_mean", "human_mean", "human_lower",
               "human_upper", "ppi_mean", "ppi_lower", "ppi_upper", "ppi_classic_mean", "ppi_classic_lower",
               "ppi_classic_upper")
    checked = {"excluded": 0, "strata": 0}
    for dimension in ("question_type", "doc_type", "company"):
        values = {q: v for q, v in warehouse_query(wh, f"select question_id, {dimension} from dim_questions")
                  if q in raw}
        if dimension == "question_type":  # the strata are FinanceBench's own question types
            assert values == {r["financebench_id"]: r["question_type"] for r in source}
            assert sorted(Counter(values.values()).values()) == [50, 50, 50]
        for name, scores in predictors.items():
            rows = [dict(zip(columns, r, strict=True)) for r in warehouse_query(wh, f"""
                select {', '.join(columns)} from mart_judge_calibrated_by_slice
                where label_set = '{SUBSET}' and answer_run_id = '{CONFIG}' and predictor = '{name}'
                    and dimension = '{dimension}'""")]
            strata = {r["value"]: r for r in rows if r["grain"] == "stratum"}
            (combined,) = [r for r in rows if r["grain"] == "stratified"]
            assert set(strata) == {values[q] for q in scores if values[q] is not None}
            included = {v for v, r in strata.items() if r["n_labelled"] >= 2}
            n_included = sum(1 for q in scores if values[q] in included)
            reference, weight = {}, {}
            for value, row in strata.items():
                lab = sorted(q for q in scores if values[q] == value and q in labelled)
                unl = sorted(q for q in scores if values[q] == value and q not in labelled)
                assert (row["n_labelled"], row["n_unlabelled"]) == (len(lab), len(unl))
                assert row["share"] == pytest.approx((len(lab) + len(unl)) / len(scores), abs=1e-9)
                if value not in included:  # reported, not calibrated, left out of the combination
                    assert row["not_calibrated_reason"] == "fewer than 2 labelled answers"
                    assert row["calibrated_mean"] is row["weight"] is row["ppi_mean"] is row["human_mean"] is None
                    checked["excluded"] += 1
                    continue
                checked["strata"] += 1
                weight[value] = (len(lab) + len(unl)) / n_included
                assert row["weight"] == pytest.approx(weight[value], abs=1e-9)
                y = np.array([normalised(raw[q]) for q in lab])
                ref = reference[value] = stratum_reference(y, np.array([scores[q] for q in lab]),
                                                           np.array([scores[q] for q in unl]))
                for method, (point, se) in ref.items():
                    assert row[f"{method}_mean"] == pytest.approx(point, abs=1e-9)
                    assert [row[f"{method}_lower"], row[f"{method}_upper"]] == pytest.approx(
                        [cut(point - z * se), cut(point + z * se)], abs=1e-9)
                best = "ppi" if "ppi" in ref else "human"  # every answer of the stratum labelled: the human mean
                assert row["calibrated_mean"] == row[f"{best}_mean"]
            # the stratified mean: sum_h w_h theta_h, variance sum_h w_h^2 se_h^2, over the strata with 2 labels
            assert (combined["n_strata"], combined["n_strata_excluded"]) == (len(strata), len(strata) - len(included))
            assert combined["share"] == pytest.approx(n_included / len(scores), abs=1e-9)
            for method in ("human", "ppi", "ppi_classic"):
                parts = [(weight[v], *ref.get(method, ref["human"])) for v, ref in reference.items()]
                point = sum(w * p for w, p, _ in parts)
                se = sum(w * w * s * s for w, _, s in parts) ** 0.5
                assert combined[f"{method}_mean"] == pytest.approx(point, abs=1e-9)
                assert [combined[f"{method}_lower"], combined[f"{method}_upper"]] == pytest.approx(
                    [cut(point - z * se), cut(point + z * se)], abs=1e-9)
            assert combined["calibration_method"] == "ppi++" and combined["calibrated_mean"] == combined["ppi_mean"]
    # the three question types are calibrated; the companies include strata under 2 labels
    assert checked["strata"] >= 6 and checked["excluded"] >= 1

    # `finrag report --judged --slice question_type`: the judge's correctness per question type, then combined
    report = json.loads(run_finrag(wh, "report", "--judged", "--run-id", JUDGE_RUN, "--slice", "question_type",
                                   "--format", "json").stdout)
    ours = [r for r in report if r["label_set"] == SUBSET]
    assert [r["grain"] for r in ours] == ["stratum", "stratum", "stratum", "stratified"]
    combined = ours[-1]
    assert combined["trust"] == (
        f"stratified over question_type: calibrated against {SUBSET} correctness (PPI++, {N_LABELLED} labelled of "
        f"150): {combined['calibrated_mean']:.4f} [{combined['calibrated_lower']:.4f}, "
        f"{combined['calibrated_upper']:.4f}]; 3 of 3 strata, 100.0% of the answers")
    assert all(r["trust"].startswith(f"question_type = {r['value']}: calibrated against") for r in ours[:-1])
    proc = run_finrag(wh, "report", "--judged", "--slice", "topic_x_task", check=False)
    assert proc.returncode != 0 and "field 'slice'" in proc.stderr and "not topic_x_task" in proc.stderr


def test_a_bad_pairing_is_one_clear_error_and_lands_nothing(wh: Path) -> None:
    cases = [
        (["--label-set", "no_such_set", "--human-metric", "correctness", "--predictor", "numeric_match"],
         "field 'label_set'", "unknown label set 'no_such_set'"),
        (["--label-set", "financebench_human", "--human-metric", "acc", "--predictor", "numeric_match"],
         "field 'human_metric'", "labels no metric 'acc'"),
        (["--label-set", "financebench_human", "--human-metric", "correctness", "--predictor", "ndcg"],
         "field 'predictor'", "unknown predictor metric 'ndcg'"),
        (["--label-set", "financebench_human", "--human-metric", "correctness", "--predictor", "rouge_l",
          "--predictor", "rouge_l"], "field 'predictor'", "named twice"),
    ]
    for args, field, message in cases:
        proc = run_finrag(wh, "calibrate", *args, check=False)
        assert proc.returncode != 0 and field in proc.stderr and message in proc.stderr, proc.stderr
        assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert Lake(wh).read("calibration_pairings").height == 0
    # a good one lands, and declaring it again replaces it (idempotent)
    for _ in range(2):
        run_finrag(wh, "calibrate", "--label-set", "financebench_human", "--human-metric", "correctness",
                   "--predictor", "rouge_l")
    assert Lake(wh).read("calibration_pairings")["predictor"].to_list() == ["rouge_l"]
