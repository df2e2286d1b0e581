"""The gate's statistics on synthetic frames (python_jobs/gate/verdicts.py): a planted regression fails and names its
slice, exchangeable runs pass (200 simulated null pairs fail at most at rate alpha), the one-sided p is scipy's,
the interval is paired_tests' interval of the plain differences, a lower-is-better metric counts a rise as a loss,
small slices are not tested, and Holm is Holm."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import scipy.stats

from python_jobs.gate.verdicts import FAIL, INCONCLUSIVE, NOT_TESTED, PAIRED_SCHEMA, PASS, gate_statistics, holm
from python_jobs.marts.comparisons import comparison_settings
from python_jobs.stats.paired_tests import paired_tests

ALPHA = 0.05
FAST = {"resamples": 1000, "sign_flips": 1000, "seed": 7, "level": 0.95}  # the null simulation's settings


def frame(base: np.ndarray, cand: np.ndarray, groups: np.ndarray, metric: str = "ndcg", margin: float = 0.02,
          higher_is_better: bool = True) -> pl.DataFrame:
    """Paired rows of one metric: the whole set, and one slice per value of `groups` (dimension question_type)."""
    n = len(base)
    rows = pl.DataFrame({"question_id": [f"q{i:05d}" for i in range(n)], "value_baseline": base,
                         "value_candidate": cand, "group": groups.astype(str)})
    common = {"metric": metric, "granularity": "doc", "k": 10, "baseline": "b", "higher_is_better": higher_is_better,
              "margin": margin}
    whole = rows.with_columns(slice=pl.lit("all"), slice_value=pl.lit("all"))
    sliced = rows.with_columns(slice=pl.lit("question_type"), slice_value=pl.col("group"))
    return (pl.concat([whole, sliced]).with_columns(**{k: pl.lit(v) for k, v in common.items()})
            .select(list(PAIRED_SCHEMA)).cast(PAIRED_SCHEMA))


def test_a_planted_regression_fails_and_names_its_slice() -> None:
    rng = np.random.default_rng(1)
    groups = np.repeat(np.arange(4), 100)
    base = rng.uniform(0.35, 0.65, 400)
    cand = base + rng.normal(0, 0.1, 400)
    cand[groups == 2] -= 0.1  # one slice 0.1 worse
    rows = gate_statistics(frame(base, np.clip(cand, 0, 1), groups), comparison_settings(), ALPHA, 10)
    failed = rows.filter(pl.col("verdict") == FAIL)
    assert failed["slice_value"].to_list() == ["2"]
    assert rows.row(0, named=True)["slice_value"] == "2"  # worst first
    assert FAIL not in rows.filter(pl.col("slice_value").is_in(["0", "1", "3"]))["verdict"].to_list()


def null_failures(margin: float) -> int:
    """Gates failed of 200 null pairs: each question's two scores exchangeable (drawn alike around its own
    difficulty); two metrics x (the whole set + 4 slices of 50)."""
    rng = np.random.default_rng(20241104)
    groups = np.repeat(np.arange(4), 50)
    failures = 0
    for _ in range(200):
        difficulty = rng.uniform(0, 1, 200)
        base = np.clip(difficulty + rng.normal(0, 0.2, 200), 0, 1)
        cand = np.clip(difficulty + rng.normal(0, 0.2, 200), 0, 1)
        paired = pl.concat([frame(base, cand, groups, "ndcg", margin),
                            frame(base ** 2, cand ** 2, groups, "mrr", margin)])
        failures += FAIL in gate_statistics(paired, FAST, ALPHA, 10)["verdict"].to_list()
    return failures


def test_exchangeable_runs_fail_at_most_at_rate_alpha() -> None:
    """With a gate's margin (0.02) at most alpha x 200 gates fail; with margin 0, the strictest gate, Holm keeps the
    family-wise rate at alpha: the count is no evidence of a rate above it (binomial test)."""
    with_margin, strictest = null_failures(0.02), null_failures(0.0)
    print(f"null pairs failed: {with_margin} of 200 at margin 0.02, {strictest} of 200 at margin 0 (alpha {ALPHA})")
    assert with_margin <= ALPHA * 200
    assert scipy.stats.binomtest(strictest, 200, ALPHA, alternative="greater").pvalue > 0.05


def test_the_p_value_is_the_one_sided_t_test_and_the_interval_paired_tests() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0, 1, 60)
    cand = np.clip(base - 0.03 + rng.normal(0, 0.1, 60), 0, 1)
    settings = comparison_settings()
    row = gate_statistics(frame(base, cand, np.zeros(60)), settings, ALPHA, 10).filter(
        pl.col("slice") == "all").row(0, named=True)
    d = cand - base
    assert row["p_value"] == pytest.approx(scipy.stats.ttest_1samp(d + 0.02, 0, alternative="less").pvalue,
                                           rel=1e-9)
    plain = paired_tests(d.tolist(), int(settings["resamples"]), int(settings["sign_flips"]), int(settings["seed"]),
                         float(settings["level"]))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((plain.ci_low, plain.ci_high), abs=1e-12)
    assert row["delta"] == pytest.approx(d.mean())


def test_lower_is_better_counts_a_rise_as_a_loss() -> None:
    rng = np.random.default_rng(4)
    base = rng.uniform(0, 0.5, 300)
    rows = gate_statistics(frame(base, base + 0.2, np.zeros(300), "hal", 0.05, higher_is_better=False),
                           FAST, ALPHA, 10)
    assert set(rows["verdict"]) == {FAIL}
    better = gate_statistics(frame(base, base - 0.2, np.zeros(300), "hal", 0.05, higher_is_better=False),
                             FAST, ALPHA, 10)
    assert set(better["verdict"]) == {PASS}


def test_small_slices_are_not_tested_and_a_wide_interval_is_inconclusive() -> None:
    rng = np.random.default_rng(5)
    groups = np.array([0] * 5 + [1] * 25)
    base = rng.uniform(0, 1, 30)
    cand = np.clip(base + rng.normal(0, 0.3, 30), 0, 1)
    rows = gate_statistics(frame(base, cand, groups), FAST, ALPHA, 10)
    small = rows.filter(pl.col("slice_value") == "0").row(0, named=True)
    assert small["verdict"] == NOT_TESTED and small["p_holm"] is None and small["n_questions"] == 5
    assert rows.filter(pl.col("slice_value") == "1")["verdict"][0] == INCONCLUSIVE
    assert rows.filter(pl.col("p_holm").is_not_null()).height == 2  # Holm's family: the tested rows only


def test_holm() -> None:
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
