"""The gate's statistics where the candidate and the baseline share no questions (two versions' traffic;
python_jobs/gate/verdicts.py on synthetic frames): the rows say welch_t and n on each side, the one-sided p is scipy's
Welch test of the candidate's scores + margin against the baseline's, the interval welch_tests' of the plain scores,
200 simulated null pairs of independent samples fail at most at rate alpha, and a planted regression fails while the
same traffic split at random passes. A slice where the runs do share most questions stays paired."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import scipy.stats

from python_jobs.gate.verdicts import FAIL, NOT_TESTED, PAIRED_SCHEMA, PASS, gate_statistics
from python_jobs.marts.comparisons import comparison_settings
from python_jobs.stats.unpaired_tests import PAIRED, UNPAIRED, welch_tests

ALPHA = 0.05
FAST = {"resamples": 1000, "sign_flips": 1000, "seed": 7, "level": 0.95}  # the null simulation's settings


def traffic(base: np.ndarray, cand: np.ndarray, base_groups: np.ndarray, cand_groups: np.ndarray,
            metric: str = "judge_correctness", margin: float = 0.02, higher_is_better: bool = True) -> pl.DataFrame:
    """Two runs' rows on disjoint questions (b0.., c0..): the whole set, and one slice per group value."""
    rows = pl.concat([
        pl.DataFrame({"question_id": [f"b{i:05d}" for i in range(len(base))], "value_baseline": base,
                      "value_candidate": [None] * len(base), "group": base_groups.astype(str)},
                     schema_overrides={"value_candidate": pl.Float64}),
        pl.DataFrame({"question_id": [f"c{i:05d}" for i in range(len(cand))], "value_baseline": [None] * len(cand),
                      "value_candidate": cand, "group": cand_groups.astype(str)},
                     schema_overrides={"value_baseline": pl.Float64})])
    common = {"metric": metric, "granularity": None, "k": None, "baseline": "version_a",
              "higher_is_better": higher_is_better, "margin": margin}
    whole = rows.with_columns(slice=pl.lit("all"), slice_value=pl.lit("all"))
    sliced = rows.with_columns(slice=pl.lit("question_type"), slice_value=pl.col("group"))
    return (pl.concat([whole, sliced]).with_columns(**{k: pl.lit(v) for k, v in common.items()})
            .select(list(PAIRED_SCHEMA)).cast(PAIRED_SCHEMA))


def test_welch_rows_name_the_test_and_match_scipy() -> None:
    rng = np.random.default_rng(11)
    base, cand = rng.uniform(0.3, 0.9, 120), rng.uniform(0.25, 0.85, 90)
    settings = comparison_settings()
    rows = gate_statistics(traffic(base, cand, np.zeros(120), np.zeros(90), margin=0.05), settings, ALPHA, 10)
    row = rows.filter(pl.col("slice") == "all").row(0, named=True)
    assert (row["test"], row["n_questions"], row["n_baseline"], row["n_candidate"]) == (UNPAIRED, 0, 120, 90)
    assert (row["mean_baseline"], row["mean_candidate"]) == pytest.approx((base.mean(), cand.mean()), abs=1e-12)
    assert row["p_value"] == pytest.approx(
        scipy.stats.ttest_ind(cand + 0.05, base, equal_var=False, alternative="less").pvalue, abs=1e-9)
    plain = welch_tests(base.tolist(), cand.tolist(), int(settings["resamples"]), int(settings["seed"]),
                        float(settings["level"]))
    assert plain is not None
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((plain.ci_low, plain.ci_high), abs=1e-12)
    # lower is better: the interval flips back to the plain difference's
    flipped = gate_statistics(traffic(base, cand, np.zeros(120), np.zeros(90), "hal", 0.05, False), settings,
                              ALPHA, 10).filter(pl.col("slice") == "all").row(0, named=True)
    assert (flipped["ci_low"], flipped["ci_high"]) == pytest.approx((plain.ci_low, plain.ci_high), abs=1e-12)
    assert flipped["p_value"] == pytest.approx(
        scipy.stats.ttest_ind(-cand + 0.05, -base, equal_var=False, alternative="less").pvalue, abs=1e-9)


def test_a_slice_below_min_questions_on_one_side_is_not_tested() -> None:
    rng = np.random.default_rng(12)
    rows = gate_statistics(traffic(rng.random(40), rng.random(40), np.array([0] * 35 + [1] * 5),
                                   np.array([0] * 20 + [1] * 20)), FAST, ALPHA, 10)
    small = rows.filter(pl.col("slice_value") == "1").row(0, named=True)
    assert small["verdict"] == NOT_TESTED and (small["n_baseline"], small["n_candidate"]) == (5, 20)


def test_mostly_shared_questions_stay_paired() -> None:
    rng = np.random.default_rng(13)
    base = rng.random(50)
    frame = traffic(base, base + 0.01, np.zeros(50), np.zeros(50)).with_columns(
        question_id=pl.col("question_id").str.replace("^[bc]", "q"))  # the same 50 questions
    both = (frame.group_by(["slice", "slice_value", "question_id"], maintain_order=True)
            .agg(pl.exclude("value_baseline", "value_candidate").first(), pl.col("value_baseline").max(),
                 pl.col("value_candidate").max()).select(list(PAIRED_SCHEMA)))
    row = gate_statistics(both, FAST, ALPHA, 10).filter(pl.col("slice") == "all").row(0, named=True)
    assert (row["test"], row["n_questions"], row["n_baseline"], row["n_candidate"]) == (PAIRED, 50, 50, 50)


def null_failures(margin: float) -> int:
    """Gates failed of 200 null pairs of independent samples: both versions' traffic drawn from one distribution of
    question difficulty; two metrics x (the whole set + 4 slices), 200 questions a side."""
    rng = np.random.default_rng(57)
    groups = np.repeat(np.arange(4), 50)
    failures = 0
    for _ in range(200):
        base = np.clip(rng.uniform(0, 1, 200) + rng.normal(0, 0.2, 200), 0, 1)
        cand = np.clip(rng.uniform(0, 1, 200) + rng.normal(0, 0.2, 200), 0, 1)
        frame = pl.concat([traffic(base, cand, groups, groups, "correctness", margin),
                           traffic(base ** 2, cand ** 2, groups, groups, "faithfulness", margin)])
        failures += FAIL in gate_statistics(frame, FAST, ALPHA, 10)["verdict"].to_list()
    return failures


def test_independent_null_samples_fail_at_most_at_rate_alpha() -> None:
    """With a margin (0.02) at most alpha x 200 gates fail; with margin 0, the strictest gate, Holm keeps the
    family-wise rate at alpha: the count is no evidence of a rate above it (binomial test)."""
    with_margin, strictest = null_failures(0.02), null_failures(0.0)
    print(f"unpaired null pairs failed: {with_margin} of 200 at margin 0.02, {strictest} of 200 at margin 0 "
          f"(alpha {ALPHA})")
    assert with_margin <= ALPHA * 200
    assert scipy.stats.binomtest(strictest, 200, ALPHA, alternative="greater").pvalue > 0.05


def test_a_planted_regression_fails_and_a_random_split_passes() -> None:
    """One week of traffic (600 answers' scores) split at random into version A and version B passes a gate of
    margin 0.05; B's half with one slice 0.2 worse fails, on that slice."""
    rng = np.random.default_rng(14)
    scores = np.clip(rng.beta(5, 2, 600), 0, 1)
    groups = np.repeat(np.arange(3), 200)
    side = rng.permutation(600) < 300
    split = traffic(scores[side], scores[~side], groups[side], groups[~side], margin=0.05)
    rows = gate_statistics(split, FAST, ALPHA, 10)
    assert set(rows["verdict"]) == {PASS} and set(rows["test"]) == {UNPAIRED}
    worse = scores[~side] - np.where(groups[~side] == 1, 0.2, 0.0)
    rows = gate_statistics(traffic(scores[side], np.clip(worse, 0, 1), groups[side], groups[~side], margin=0.05),
                           FAST, ALPHA, 10)
    assert rows.filter(pl.col("verdict") == FAIL)["slice_value"].to_list()[0] == "1"
    assert FAIL not in rows.filter(pl.col("slice_value").is_in(["0", "2"]))["verdict"].to_list()
