"""The gate's statistics over a frame of paired per-question scores: one row per metric x slice with the difference,
its interval, the one-sided non-inferiority p, Holm's adjustment over the gate and the verdict (the rules are in
python_jobs/gate/__init__.py). Pure: frames in, a frame out, so the statistics are tested without a warehouse."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from python_jobs.gate.spec import WHOLE_SET
from python_jobs.stats.paired_tests import paired_tests_batch

FAIL, INCONCLUSIVE, PASS, NOT_TESTED = "fail", "inconclusive", "pass", "not tested"
VERDICT_ORDER = (FAIL, INCONCLUSIVE, PASS, NOT_TESTED)  # worst first
# one comparison: a metric (at a granularity and k), against one baseline run, on one slice
MAX_NEEDED = 10**9  # beyond it (a mean a hair above -δ) no count is worth printing
KEYS = ("metric", "granularity", "k", "baseline", "slice", "slice_value")
# the paired input: KEYS, the metric's direction and margin (normalised), and per question both runs' scores
PAIRED_SCHEMA = {"metric": pl.String, "granularity": pl.String, "k": pl.Int64, "baseline": pl.String,
                 "slice": pl.String, "slice_value": pl.String, "higher_is_better": pl.Boolean, "margin": pl.Float64,
                 "question_id": pl.String, "value_baseline": pl.Float64, "value_candidate": pl.Float64}
RESULT_SCHEMA = {**{k: PAIRED_SCHEMA[k] for k in KEYS}, "higher_is_better": pl.Boolean, "margin": pl.Float64,
                 "n_questions": pl.Int64, "mean_baseline": pl.Float64, "mean_candidate": pl.Float64,
                 "delta": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "p_value": pl.Float64,
                 "p_holm": pl.Float64, "verdict": pl.String, "n_needed": pl.Int64}


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment, in the order given: the i-th smallest p times (m - i + 1), kept monotone and at
    most 1 (as mart_run_comparison adjusts its families)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def one_sided_below_zero(p_two_sided: float | None, mean: float) -> float:
    """The one-sided p of "the mean is below 0" from paired_tests' two-sided t-test p of the same values (the t
    distribution is symmetric); no p (n < 2, every value 0) is no evidence: 1."""
    if p_two_sided is None or math.isnan(p_two_sided):
        return 1.0
    return p_two_sided / 2 if mean < 0 else 1.0 - p_two_sided / 2


def gate_statistics(paired: pl.DataFrame, settings: dict[str, float], alpha: float,
                    min_questions: int) -> pl.DataFrame:
    """One row per comparison (KEYS) of `paired` (PAIRED_SCHEMA): n_questions, both means, delta = candidate -
    baseline, its interval (settings' level), the one-sided p of a loss beyond the margin, p_holm over every tested
    row and the verdict; worst first (verdict, then the directed difference)."""
    groups = (paired.sort("question_id")
              .with_columns(direction=pl.when(pl.col("higher_is_better")).then(1.0).otherwise(-1.0))
              .group_by(KEYS, maintain_order=True)
              .agg(pl.col("higher_is_better").first(), pl.col("margin").first(),
                   pl.col("direction").first(), pl.len().alias("n_questions"),
                   pl.col("value_baseline").mean().alias("mean_baseline"),
                   pl.col("value_candidate").mean().alias("mean_candidate"),
                   # d_i + δ in the metric's direction: a loss beyond the margin is a negative mean
                   ((pl.col("value_candidate") - pl.col("value_baseline")) * pl.col("direction")
                    + pl.col("margin")).alias("shifted")))
    rows = groups.to_dicts()
    tested = [i for i, r in enumerate(rows) if r["n_questions"] >= min_questions]
    tests = paired_tests_batch([rows[i]["shifted"] for i in tested], int(settings["resamples"]),
                               int(settings["sign_flips"]), int(settings["seed"]), float(settings["level"]),
                               randomization=False)
    for i, res in zip(tested, tests, strict=True):
        r = rows[i]
        assert res is not None  # a tested group has questions
        shifted_mean = sum(r["shifted"]) / len(r["shifted"])
        r["p_value"] = one_sided_below_zero(res.p_ttest, shifted_mean)
        low, high = res.ci_low - r["margin"], res.ci_high - r["margin"]  # the directed difference's interval
        r["_low_directed"], r["_mean_directed"] = low, shifted_mean - r["margin"]
        r["ci_low"], r["ci_high"] = (low, high) if r["direction"] > 0 else (-high, -low)
    for i, p in zip(tested, holm([rows[i]["p_value"] for i in tested]), strict=True):
        rows[i]["p_holm"] = p
    for r in rows:
        r["delta"] = r["mean_candidate"] - r["mean_baseline"]
        if "p_holm" not in r:
            r.update(verdict=NOT_TESTED, ci_low=None, ci_high=None, p_value=None, p_holm=None, n_needed=None)
            continue
        r["verdict"] = (FAIL if r["p_holm"] < alpha else PASS if r["_low_directed"] >= -r["margin"]
                        else INCONCLUSIVE)
        r["n_needed"] = None
        if r["verdict"] == INCONCLUSIVE:
            # about how many questions would put the interval above -δ, were the mean and spread to stay as they
            # are (the interval's half-width shrinks as 1 / sqrt(n))
            room, half = r["_mean_directed"] + r["margin"], r["_mean_directed"] - r["_low_directed"]
            needed = r["n_questions"] * (half / room) ** 2 if room > 0 else math.inf
            r["n_needed"] = math.ceil(needed) if needed <= MAX_NEEDED else None
    frame = pl.DataFrame([{c: r.get(c) for c in RESULT_SCHEMA} for r in rows], schema=RESULT_SCHEMA)
    return sort_worst_first(frame)


def sort_worst_first(frame: pl.DataFrame) -> pl.DataFrame:
    """By verdict (fail, inconclusive, pass, not tested), then the difference in the metric's direction (the largest
    loss first), the whole set before the slices."""
    return (frame.with_columns(
        _verdict=pl.col("verdict").replace_strict(list(VERDICT_ORDER), list(range(len(VERDICT_ORDER)))),
        _directed=pl.when(pl.col("higher_is_better")).then(pl.col("delta")).otherwise(-pl.col("delta")),
        _whole=pl.col("slice") != WHOLE_SET)
        .sort("_verdict", "_directed", "_whole", "metric", "slice", "slice_value", nulls_last=True)
        .drop("_verdict", "_directed", "_whole"))


def gate_verdict(rows: pl.DataFrame) -> str:
    """The gate's verdict: its worst tested row's (pass when nothing could be tested)."""
    verdicts = set(rows["verdict"])
    return next((v for v in (FAIL, INCONCLUSIVE) if v in verdicts), PASS)
