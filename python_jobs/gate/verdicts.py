"""The gate's statistics over a frame of paired per-question scores: one row per metric x slice with the difference,
its interval, the one-sided non-inferiority p, Holm's adjustment over the gate and the verdict (the rules are in
python_jobs/gate/__init__.py). Pure: frames in, a frame out, so the statistics are tested without a warehouse.

Which test: the rule run_comparison_tests (python_jobs/stats/unpaired_tests.py's comparison_test, as the marts ask
it) per metric x slice - paired on the questions both runs were scored on, or, where they share no or too few (two
versions' production traffic), Welch's t and a bootstrap of the difference of means on each run's own questions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from python_jobs.gate.spec import WHOLE_SET
from python_jobs.stats.paired_tests import paired_tests_batch
from python_jobs.stats.unpaired_tests import UNPAIRED, comparison_test, welch_tests_batch

FAIL, INCONCLUSIVE, PASS, NOT_TESTED = "fail", "inconclusive", "pass", "not tested"
VERDICT_ORDER = (FAIL, INCONCLUSIVE, PASS, NOT_TESTED)  # worst first
# one comparison: a metric (at a granularity and k), against one baseline run, on one slice
MAX_NEEDED = 10**9  # beyond it (a mean a hair above -δ) no count is worth printing
KEYS = ("metric", "granularity", "k", "baseline", "slice", "slice_value")
# the input: KEYS, the metric's direction and margin (normalised), and per question both runs' scores - either null
# where only the other run scored the question (an unpaired comparison's questions)
PAIRED_SCHEMA = {"metric": pl.String, "granularity": pl.String, "k": pl.Int64, "baseline": pl.String,
                 "slice": pl.String, "slice_value": pl.String, "higher_is_better": pl.Boolean, "margin": pl.Float64,
                 "question_id": pl.String, "value_baseline": pl.Float64, "value_candidate": pl.Float64}
RESULT_SCHEMA = {**{k: PAIRED_SCHEMA[k] for k in KEYS}, "higher_is_better": pl.Boolean, "margin": pl.Float64,
                 "test": pl.String, "n_questions": pl.Int64, "n_baseline": pl.Int64, "n_candidate": pl.Int64,
                 "mean_baseline": pl.Float64, "mean_candidate": pl.Float64,
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
    """One row per comparison (KEYS) of `paired` (PAIRED_SCHEMA): the test (paired or unpaired: comparison_test),
    n_questions (shared), n_baseline and n_candidate (the questions of each run the means and statistics are over),
    both means, delta = candidate - baseline, its interval (settings' level), the one-sided p of a loss beyond the
    margin, p_holm over every tested row and the verdict; worst first (verdict, then the directed difference).

    Paired: the per-question d_i + δ in the metric's direction go to paired_tests; unpaired: the baseline's scores
    and the candidate's plus δ, both in the metric's direction, go to welch_tests (B = the candidate); either way a
    loss beyond the margin is a negative mean (difference), its interval moved back by δ."""
    both = pl.col("value_baseline").is_not_null() & pl.col("value_candidate").is_not_null()
    direction = pl.col("direction")
    groups = (paired.sort("question_id")
              .with_columns(direction=pl.when(pl.col("higher_is_better")).then(1.0).otherwise(-1.0))
              .group_by(KEYS, maintain_order=True)
              .agg(pl.col("higher_is_better").first(), pl.col("margin").first(), direction.first(),
                   both.sum().cast(pl.Int64).alias("n_questions"),
                   pl.col("value_baseline").count().cast(pl.Int64).alias("n_baseline"),
                   pl.col("value_candidate").count().cast(pl.Int64).alias("n_candidate"),
                   pl.col("value_baseline").filter(both).mean().alias("paired_mean_baseline"),
                   pl.col("value_candidate").filter(both).mean().alias("paired_mean_candidate"),
                   pl.col("value_baseline").mean().alias("own_mean_baseline"),
                   pl.col("value_candidate").mean().alias("own_mean_candidate"),
                   # d_i + δ in the metric's direction: a loss beyond the margin is a negative mean
                   ((pl.col("value_candidate") - pl.col("value_baseline")) * direction + pl.col("margin"))
                   .filter(both).alias("shifted"),
                   # unpaired: each run's own scores in the metric's direction, the candidate's moved by δ
                   (pl.col("value_baseline") * direction).drop_nulls().alias("sample_baseline"),
                   (pl.col("value_candidate") * direction + pl.col("margin")).drop_nulls().alias("sample_candidate")))
    rows = groups.to_dicts()
    for r in rows:
        r["test"] = comparison_test(r["n_questions"], r["n_baseline"], r["n_candidate"])
        unpaired = r["test"] == UNPAIRED
        if unpaired:
            r["mean_baseline"], r["mean_candidate"] = r["own_mean_baseline"], r["own_mean_candidate"]
        else:  # paired (or nothing to compare: a run without a question in the slice): the shared questions
            r["mean_baseline"], r["mean_candidate"] = r["paired_mean_baseline"], r["paired_mean_candidate"]
            r["n_baseline"] = r["n_candidate"] = r["n_questions"]
        r["_tested"] = r["test"] is not None and min(r["n_baseline"], r["n_candidate"]) >= min_questions
    tested = [i for i, r in enumerate(rows) if r["_tested"]]
    on_pairs = [i for i in tested if rows[i]["test"] != UNPAIRED]
    on_samples = [i for i in tested if rows[i]["test"] == UNPAIRED]
    resamples, seed, level = int(settings["resamples"]), int(settings["seed"]), float(settings["level"])
    results = dict(zip(on_pairs, paired_tests_batch([rows[i]["shifted"] for i in on_pairs], resamples,
                                                    int(settings["sign_flips"]), seed, level, randomization=False),
                       strict=True))
    results |= dict(zip(on_samples, welch_tests_batch([rows[i]["sample_baseline"] for i in on_samples],
                                                      [rows[i]["sample_candidate"] for i in on_samples], resamples,
                                                      seed, level), strict=True))
    for i in tested:
        r, res = rows[i], results[i]
        assert res is not None  # a tested group has questions on both sides
        if r["test"] == UNPAIRED:
            shifted_mean = (sum(r["sample_candidate"]) / len(r["sample_candidate"])
                            - sum(r["sample_baseline"]) / len(r["sample_baseline"]))
        else:
            shifted_mean = sum(r["shifted"]) / len(r["shifted"])
        r["p_value"] = one_sided_below_zero(res.p_ttest, shifted_mean)
        low, high = res.ci_low - r["margin"], res.ci_high - r["margin"]  # the directed difference's interval
        r["_low_directed"], r["_mean_directed"] = low, shifted_mean - r["margin"]
        r["ci_low"], r["ci_high"] = (low, high) if r["direction"] > 0 else (-high, -low)
    for i, p in zip(tested, holm([rows[i]["p_value"] for i in tested]), strict=True):
        rows[i]["p_holm"] = p
    for r in rows:
        r["delta"] = None if r["mean_candidate"] is None or r["mean_baseline"] is None else (
            r["mean_candidate"] - r["mean_baseline"])
        if "p_holm" not in r:
            r.update(verdict=NOT_TESTED, ci_low=None, ci_high=None, p_value=None, p_holm=None, n_needed=None)
            continue
        r["verdict"] = (FAIL if r["p_holm"] < alpha else PASS if r["_low_directed"] >= -r["margin"]
                        else INCONCLUSIVE)
        r["n_needed"] = None
        if r["verdict"] == INCONCLUSIVE:
            # about how many questions would put the interval above -δ, were the mean and spread to stay as they
            # are (the interval's half-width shrinks as 1 / sqrt(n)); unpaired, the questions of both runs together,
            # each run's growing in proportion
            room, half = r["_mean_directed"] + r["margin"], r["_mean_directed"] - r["_low_directed"]
            n = r["n_questions"] if r["test"] != UNPAIRED else r["n_baseline"] + r["n_candidate"]
            needed = n * (half / room) ** 2 if room > 0 else math.inf
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
