"""The unpaired comparison's statistics (python_jobs/stats/unpaired_tests.py) against their references: Welch's p
equals scipy.stats.ttest_ind(equal_var=False) to 1e-9 (edge cases included); the interval is a percentile bootstrap
of the difference of means - equal to a plain loop over the same seeded draws, and within Monte-Carlo error of
scipy.stats.bootstrap's - deterministic and independent of its batch; the pairing rule at its threshold; and the same
functions called from SQL as the dbt plugin registers them. Settings are the mart's (vars run_comparison_*)."""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pytest
import scipy.stats

from python_jobs.core.rules import RULES
from python_jobs.stats.unpaired_tests import (
    PAIRED,
    UNPAIRED,
    comparison_test,
    register_duckdb_functions,
    welch_tests,
    welch_tests_batch,
)
from support.warehouse import run_comparison_settings

SETTINGS = run_comparison_settings()
RESAMPLES, SEED, LEVEL = int(SETTINGS["resamples"]), int(SETTINGS["seed"]), float(SETTINGS["level"])
FEW = 500


def samples(seed: int) -> list[tuple[list[float], list[float]]]:
    """Pairs of independent samples of unequal sizes and spreads: continuous, 0/1 and tenths."""
    rng = np.random.default_rng(seed)
    out = []
    for n_a, n_b in ((2, 2), (3, 40), (25, 25), (60, 17), (200, 150)):
        out.append((rng.random(n_a).tolist(), np.clip(rng.normal(0.6, 0.3, n_b), 0, 1).tolist()))
        out.append(((rng.random(n_a) < 0.5).astype(float).tolist(), (rng.random(n_b) < 0.7).astype(float).tolist()))
        out.append(((rng.integers(0, 4, n_a) / 10).tolist(), (rng.integers(0, 8, n_b) / 10).tolist()))
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scipy on a 0/1 sample of two equal values
def test_the_p_value_is_scipys_welch_t_test() -> None:
    pairs = samples(1)
    results = welch_tests_batch([a for a, _ in pairs], [b for _, b in pairs], RESAMPLES, SEED, LEVEL)
    for (a, b), res in zip(pairs, results, strict=True):
        want = scipy.stats.ttest_ind(b, a, equal_var=False).pvalue
        assert res is not None
        if np.isnan(want):
            assert res.p_ttest is None
        else:
            assert res.p_ttest == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize(("a", "b"), [([0.2, 0.2, 0.2], [0.7, 0.7]), ([0.5, 0.5], [0.5, 0.5, 0.5]), ([1.0], [0.0, 1.0]),
                                      ([0.0, 1.0], [1.0, 1.0, 1.0]), ([0.3, 0.3], [0.1, 0.9])])
def test_edge_cases_are_scipys(a: list[float], b: list[float]) -> None:
    """No spread and different means: p 0; no spread and equal means, or a run of one question: no p (scipy's NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's own note on samples without spread
        want = scipy.stats.ttest_ind(b, a, equal_var=False).pvalue
    got = welch_tests(a, b, RESAMPLES, SEED, LEVEL)
    assert got is not None
    assert (got.p_ttest is None) if np.isnan(want) else got.p_ttest == pytest.approx(want, abs=1e-9)


def test_empty_samples_have_no_statistics() -> None:
    assert welch_tests([], [0.5, 0.2], RESAMPLES, SEED, LEVEL) is None
    assert welch_tests_batch([None, [0.1, 0.2]], [[0.3], [0.4, 0.1]], RESAMPLES, SEED, LEVEL)[0] is None
    with pytest.raises(ValueError, match="level"):
        welch_tests([0.1], [0.2], RESAMPLES, SEED, 1.5)


def test_the_interval_is_a_bootstrap_of_the_difference_of_means() -> None:
    """A plain loop over the same seeded draws (one generator per run, seeded (seed, n, stream, 0)) gives the same ends;
    scipy.stats.bootstrap(method='percentile') of the difference of means, resampling each sample on its own, gives
    the same within Monte-Carlo error."""
    a, b = samples(2)[9]  # continuous, 60 and 17 questions
    got = welch_tests(a, b, RESAMPLES, SEED, LEVEL)
    assert got is not None
    means = []
    # one block of draws each (60 and 17 questions x 10,000 resamples < 2^20), its generator seeded (seed, n, stream,
    # block 0), and indices as the narrowest unsigned type that holds them (uint16 here), as the function draws them
    rng_a, rng_b = (np.random.default_rng([SEED, len(x), stream, 0]) for x, stream in ((a, 2), (b, 3)))
    draws_a = rng_a.integers(0, len(a), size=(RESAMPLES, len(a)), dtype=np.uint16)
    draws_b = rng_b.integers(0, len(b), size=(RESAMPLES, len(b)), dtype=np.uint16)
    for pick_a, pick_b in zip(draws_a, draws_b, strict=True):
        means.append(np.mean(np.array(b)[pick_b]) - np.mean(np.array(a)[pick_a]))
    low, high = np.quantile(means, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    assert (got.ci_low, got.ci_high) == pytest.approx((low, high), abs=1e-12)
    reference = scipy.stats.bootstrap((np.array(b), np.array(a)), lambda x, y, axis: x.mean(axis) - y.mean(axis),
                                      n_resamples=RESAMPLES, method="percentile", confidence_level=LEVEL,
                                      random_state=np.random.default_rng(9), vectorized=True).confidence_interval
    spread = np.sqrt(np.var(a, ddof=1) / len(a) + np.var(b, ddof=1) / len(b))
    assert got.ci_low == pytest.approx(reference.low, abs=0.1 * spread)
    assert got.ci_high == pytest.approx(reference.high, abs=0.1 * spread)
    assert got.ci_low < np.mean(b) - np.mean(a) < got.ci_high


def test_deterministic_and_independent_of_the_batch() -> None:
    pairs = samples(3)
    alone = [welch_tests(a, b, RESAMPLES, SEED, LEVEL) for a, b in pairs[:4]]
    batch = welch_tests_batch([a for a, _ in pairs], [b for _, b in pairs], RESAMPLES, SEED, LEVEL)[:4]
    again = welch_tests_batch([a for a, _ in pairs], [b for _, b in pairs], RESAMPLES, SEED, LEVEL)[:4]
    assert batch == again
    for x, y in zip(alone, batch, strict=True):
        assert x is not None and y is not None
        assert (x.ci_low, x.ci_high) == pytest.approx((y.ci_low, y.ci_high), abs=1e-12) and x.p_ttest == y.p_ttest
    other_seed = welch_tests(*pairs[3], RESAMPLES, SEED + 1, LEVEL)
    assert other_seed is not None and (other_seed.ci_low, other_seed.ci_high) != (alone[3].ci_low, alone[3].ci_high)


def test_the_pairing_rule() -> None:
    share = RULES.paired_min_share
    assert (PAIRED, UNPAIRED) == (RULES.paired_test, RULES.unpaired_test)
    assert comparison_test(100, 100, 100) == PAIRED  # a benchmark: every question shared
    assert comparison_test(90, 100, 90) == PAIRED  # one run missed ten questions
    assert comparison_test(0, 500, 400) == UNPAIRED  # two versions' traffic
    threshold = int(np.ceil(share * 400))
    assert comparison_test(threshold, 500, 400) == PAIRED
    assert comparison_test(threshold - 1, 500, 400) == UNPAIRED  # a handful shared by chance is not a pairing
    assert comparison_test(1, 1, 1) == PAIRED
    assert comparison_test(0, 0, 3) is None and comparison_test(None, 3, None) is None


def test_the_sql_functions_are_the_python_ones() -> None:
    con = duckdb.connect()  # (fewer resamples: SQL and Python are compared at the same settings)
    register_duckdb_functions(con)
    register_duckdb_functions(con)  # idempotent: a second connection setup registers nothing twice
    pairs = samples(4)[:6] + [([], [0.5])]
    con.execute("create table s (i integer, a double[], b double[])")
    con.executemany("insert into s values (?, ?, ?)", [(i, a, b) for i, (a, b) in enumerate(pairs)])
    rows = con.execute(f"select i, welch_tests(a, b, {FEW}, {SEED}, {LEVEL}) as t, "
                       "comparison_test(0, len(a), len(b)) as test from s order by i").fetchall()
    for (i, sql, test), (a, b) in zip(rows, pairs, strict=True):
        want = welch_tests(a, b, FEW, SEED, LEVEL)
        if want is None:
            assert sql is None and test is None, i
            continue
        # the interval's ends to ~1e-16 (BLAS may sum a batch of another width in another order)
        assert sql == pytest.approx({"ci_low": want.ci_low, "ci_high": want.ci_high, "p_ttest": want.p_ttest},
                                    abs=1e-12), i
        assert test == UNPAIRED
