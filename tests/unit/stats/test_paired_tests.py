"""The run comparison's statistics (python_jobs/stats/paired_tests.py) against their references: the paired
t-test against scipy.stats.ttest_rel (1e-9), the randomization test against an exact enumeration of every sign flip
(equal where the function enumerates too, within Monte-Carlo error where it samples), the bootstrap interval against
scipy.stats.bootstrap's percentile interval (within Monte-Carlo error), a hand-worked case, and the same function
called from SQL as the dbt plugin registers it. Settings are the mart's (dbt_project.yml vars run_comparison_*).
ranx's `compare` on real runs: tests/integration/test_run_comparison.py."""

from __future__ import annotations

import itertools
import math

import duckdb
import numpy as np
import pytest
import scipy.stats

from python_jobs.stats.paired_tests import PairedTests, paired_tests, paired_tests_batch, register_duckdb_functions
from support.warehouse import run_comparison_settings

SETTINGS = run_comparison_settings()


def stats_of(diffs) -> PairedTests:
    result = paired_tests(list(map(float, diffs)), **SETTINGS)
    assert result is not None
    return result


def score_pairs(seed: int, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Two runs' per-question scores in [0, 1], B a little better: continuous, 0/1 hits, or P@10-like tenths."""
    rng = np.random.default_rng(seed)
    if kind == "continuous":
        a = rng.random(n)
        return a, np.clip(a + rng.normal(0.05, 0.2, n), 0, 1)
    if kind == "binary":
        return (rng.random(n) < 0.5).astype(float), (rng.random(n) < 0.6).astype(float)
    return rng.integers(0, 4, n) / 10, rng.integers(0, 5, n) / 10


CASES = [(seed, n, kind) for seed, (n, kind) in enumerate(
    [(45, "continuous"), (150, "continuous"), (45, "binary"), (150, "binary"), (45, "tenths"), (2, "continuous"),
     (12, "tenths"), (30, "binary")])]


# ---- the paired t-test = scipy.stats.ttest_rel ---------------------------------------------------------------------
@pytest.mark.parametrize(("seed", "n", "kind"), CASES)
def test_t_test_equals_scipy(seed: int, n: int, kind: str) -> None:
    a, b = score_pairs(seed, n, kind)
    expected = scipy.stats.ttest_rel(b, a).pvalue
    assert stats_of(b - a).p_ttest == pytest.approx(expected, abs=1e-9, rel=0)


def test_t_test_where_scipy_has_no_number() -> None:
    # scipy: NaN for one question and for all-zero differences (0 / 0); the mart stores NULL
    assert np.isnan(scipy.stats.ttest_rel([0.5], [0.25]).pvalue) and stats_of([0.25]).p_ttest is None
    assert np.isnan(scipy.stats.ttest_rel([0.5, 0.5], [0.5, 0.5]).pvalue) and stats_of([0.0, 0.0]).p_ttest is None
    # the same non-zero difference on every question: t is infinite, p = 0, as scipy says
    assert scipy.stats.ttest_rel([0.5] * 4, [0.25] * 4).pvalue == 0.0 == stats_of([0.25] * 4).p_ttest


# ---- the randomization test against an exact enumeration of every sign flip -------------------------------------
def exact_randomization_p(diffs: np.ndarray, scale: int | None = None) -> float:
    """Every one of the 2^n sign vectors, the share with |sum| >= |observed sum|. Sums in exact arithmetic: integers
    when the differences are multiples of 1/scale (tenths meant as tenths), else math.fsum (correctly rounded), so a
    tie in real arithmetic is a tie here."""
    values = [round(d * scale) for d in diffs] if scale else list(diffs)
    if scale:
        assert np.allclose(np.array(values) / scale, diffs)
    observed = abs(math.fsum(values))
    hits = sum(abs(math.fsum(s * v for s, v in zip(signs, values, strict=True))) >= observed
               for signs in itertools.product((1, -1), repeat=len(values)))
    return hits / 2 ** len(values)


def test_hand_worked_case() -> None:
    """d = (0.25, 0.5, 0.75): the sums of +-0.25 +-0.5 +-0.75 reach |1.5| for 2 of the 8 sign vectors; t = 2 sqrt 3
    on 2 degrees of freedom, p = 1 - sqrt(6/7); a resample mean is 0.25 (or 0.75) with probability 1/27 > 2.5 %."""
    result = stats_of([0.25, 0.5, 0.75])
    assert result.randomization_exact and result.p_randomization == 0.25
    assert result.p_ttest == pytest.approx(1 - math.sqrt(6 / 7), abs=1e-15)
    assert (result.ci_low, result.ci_high) == (0.25, 0.75)


@pytest.mark.parametrize("n", [1, 2, 5, 9, 13])
def test_randomization_enumerates_small_cases_exactly(n: int) -> None:
    assert 2 ** 13 <= SETTINGS["sign_flips"] < 2 ** 14, "the cases below assume the mart's 10,000 flips"
    for seed, kind in enumerate(("continuous", "binary", "tenths")):
        a, b = score_pairs(100 + 10 * n + seed, n, kind)
        result = stats_of(b - a)
        assert result.randomization_exact
        assert result.p_randomization == exact_randomization_p(b - a, scale=10 if kind != "continuous" else None)


@pytest.mark.parametrize("seed", range(6))
def test_randomization_samples_within_monte_carlo_error_of_exact(seed: int) -> None:
    """n = 16: 65,536 sign vectors, more than the mart's flips, so the function samples; the test enumerates."""
    n = 16
    kind = ("continuous", "binary", "tenths")[seed % 3]
    a, b = score_pairs(seed, n, kind)
    if seed >= 3:  # a clearer difference, for small p-values (tenths stay tenths)
        b = np.clip(b + 0.1 * (seed - 2), 0, 1)
    diffs = b - a
    result = stats_of(diffs)
    exact = exact_randomization_p(diffs, scale=None if kind == "continuous" else 10)
    flips = SETTINGS["sign_flips"]
    assert not result.randomization_exact and 2 ** n > flips
    tolerance = 4.5 * math.sqrt(exact * (1 - exact) / flips) + 2 / flips
    assert abs(result.p_randomization - exact) <= tolerance, (result.p_randomization, exact)


def test_float_noise_is_not_a_difference() -> None:
    """P@10 differences are tenths, not exact in binary: the sign flips that tie the observed sum in tenths must
    count as ties even when the float sums differ in the last bit (ranx's fisher test loses those ties)."""
    diffs = np.array([0.1, 0.1, 0.1, 0.30000000000000004, -0.2, -0.1, 0.2, 0.1, 0.0, 0.1, -0.1, 0.2])
    assert stats_of(diffs).p_randomization == exact_randomization_p(diffs, scale=10)


# ---- the bootstrap interval = scipy.stats.bootstrap(method='percentile') ------------------------------------------
@pytest.mark.parametrize(("seed", "n", "kind"), [c for c in CASES if c[1] >= 30])
def test_bootstrap_interval_matches_scipy_within_monte_carlo_error(seed: int, n: int, kind: str) -> None:
    a, b = score_pairs(seed, n, kind)
    diffs = b - a
    result = stats_of(diffs)
    reference = scipy.stats.bootstrap((diffs,), np.mean, n_resamples=SETTINGS["resamples"], method="percentile",
                                      confidence_level=SETTINGS["level"], rng=np.random.default_rng(seed))
    # an end of a 95 % percentile interval from 10,000 resamples has a Monte-Carlo sd of ~0.03 standard errors of
    # the mean; two independent estimates differ by ~0.04: 0.2 standard errors is ~5 sd
    standard_error = diffs.std(ddof=1) / math.sqrt(n)
    assert result.ci_low == pytest.approx(reference.confidence_interval.low, abs=0.2 * standard_error)
    assert result.ci_high == pytest.approx(reference.confidence_interval.high, abs=0.2 * standard_error)
    assert result.ci_low <= diffs.mean() <= result.ci_high


# ---- determinism, batching, SQL -----------------------------------------------------------------------------------
def same(x: PairedTests, y: PairedTests) -> bool:
    """Equal p-values (counts) and exactness; interval ends equal to the last bits, which BLAS's summation order
    may change with the number of comparisons multiplied at once."""
    return (x.p_ttest, x.p_randomization, x.randomization_exact) == (y.p_ttest, y.p_randomization,
                                                                    y.randomization_exact) \
        and abs(x.ci_low - y.ci_low) <= 1e-12 and abs(x.ci_high - y.ci_high) <= 1e-12


def test_a_result_depends_only_on_its_differences() -> None:
    cases = [score_pairs(seed, n, kind) for seed, n, kind in CASES]
    diffs = [list(b - a) for a, b in cases] * 3
    alone = [paired_tests(d, **SETTINGS) for d in diffs]
    batched = paired_tests_batch(diffs, **SETTINGS)
    reversed_batch = paired_tests_batch(diffs[::-1], **SETTINGS)[::-1]
    assert all(same(x, y) and same(x, z) for x, y, z in zip(alone, batched, reversed_batch, strict=True))
    assert paired_tests(diffs[0], **SETTINGS) == alone[0]  # bit for bit in the same batch
    assert paired_tests([], **SETTINGS) is None
    # another seed: other resamples and flips, the same t-test
    other = paired_tests(diffs[0], **{**SETTINGS, "seed": SETTINGS["seed"] + 1})
    assert other.p_ttest == alone[0].p_ttest and other.ci_low != alone[0].ci_low


def test_sql_function_equals_python() -> None:
    con = duckdb.connect()
    try:
        register_duckdb_functions(con)
        register_duckdb_functions(con)  # idempotent (dbt calls it for every connection)
        diffs = [list(b - a) for a, b in (score_pairs(seed, n, kind) for seed, n, kind in CASES)]
        rows = con.execute(
            "select i, paired_tests(d, $resamples, $sign_flips, $seed, $level) as t "
            "from (select unnest(range(len($diffs))) as i, unnest($diffs) as d) order by i",
            {"diffs": diffs, **SETTINGS}).fetchall()
        for (_, got), d in zip(rows, diffs, strict=True):
            assert same(PairedTests(**got), paired_tests(d, **SETTINGS))
        assert con.execute("select paired_tests([]::double[], 10000, 10000, 1, 0.95), "
                           "paired_tests(null, 10000, 10000, 1, 0.95)").fetchone() == (None, None)
    finally:
        con.close()


@pytest.mark.parametrize("m", [1, 3, 40])
def test_blocks_drawn_in_parallel_give_the_serial_result(m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """5,000 questions: 48 blocks of draws, each from its own generator into its own slice, BLAS at one thread a
    block in the pool or not, so the cores a machine has (threads or not) change nothing, bit for bit: with one
    column (gathered), three (counted a cache-sized slice of rows at a time) and 40 (a whole block at a time); the
    interval is still the bootstrap's (scipy, Monte-Carlo error as above)."""
    from python_jobs.stats import paired_tests as module

    a, b = score_pairs(7, 5000, "continuous")
    diffs = np.column_stack([b - a + 0.01 * j for j in range(m)])
    monkeypatch.setattr(module, "_WORKERS", 1)
    serial = module.resample_means(diffs, SETTINGS["resamples"], SETTINGS["seed"], 0)
    monkeypatch.setattr(module, "_WORKERS", 2)
    parallel = module.resample_means(diffs, SETTINGS["resamples"], SETTINGS["seed"], 0)
    assert np.array_equal(serial, parallel)
    low, high = module.percentile_interval(parallel, SETTINGS["level"])
    reference = scipy.stats.bootstrap((diffs[:, 0],), np.mean, n_resamples=SETTINGS["resamples"], method="percentile",
                                      confidence_level=SETTINGS["level"], rng=np.random.default_rng(7))
    standard_error = diffs[:, 0].std(ddof=1) / math.sqrt(5000)
    assert low[0] == pytest.approx(reference.confidence_interval.low, abs=0.2 * standard_error)
    assert high[0] == pytest.approx(reference.confidence_interval.high, abs=0.2 * standard_error)


def test_gathered_sliced_and_whole_block_resampling_agree() -> None:
    # the three ways resample_means sums the same draws (1 column; up to _SLICED_COLUMNS; more) give each column
    # the same resample means, to the last bits BLAS may sum in another order
    from python_jobs.stats import paired_tests as module

    a, b = score_pairs(11, 2000, "continuous")
    wide = np.column_stack([b - a + 0.01 * j for j in range(module._SLICED_COLUMNS + 8)])
    args = (SETTINGS["resamples"], SETTINGS["seed"], 0)
    gathered = module.resample_means(wide[:, :1], *args)
    sliced = module.resample_means(wide[:, :3], *args)
    whole = module.resample_means(wide, *args)
    assert np.abs(sliced[0] - gathered[0]).max() <= 1e-14
    assert np.abs(whole[:3] - sliced).max() <= 1e-14
