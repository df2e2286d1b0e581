"""tukey_hsd_p (python_jobs/stats/paired_tests.py) against its references: scipy.stats.studentized_range.sf (what
scipy.stats.tukey_hsd and ranx's compare(stat_test="tukey") call) across families of 2 to 200 runs and 5 to 100,000
degrees of freedom, q from 0 far into the tail; scipy.stats.tukey_hsd itself on real-shaped groups; the k == 2 closed
form (Student's t). Relative error below 1e-4 where p > 1e-6; deeper in the tail scipy's own integration is the
limit (at df near 100,000 it levels off near 1e-11), so there within 2 % above 1e-9 and 1e-10 absolute below."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
from scipy.stats import studentized_range

from python_jobs.stats.paired_tests import tukey_hsd_pvalue, tukey_pvalues

# (k, df): few and many runs, few and many degrees of freedom, df just below scipy's switch to its df = infinity form
# (100,000) and above it
CASES = [(3, 5), (3, 1000), (5, 44), (10, 99_999), (30, 300), (50, 44), (50, 99_999), (100, 5), (200, 5),
         (200, 1000), (200, 100_000), (200, 250_000), (3, 1e6), (1000, 500_000)]


def reference(q: np.ndarray, k: int, df: float) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return studentized_range.sf(q, k, df)


@pytest.mark.parametrize(("k", "df"), CASES)
def test_tukey_p_equals_the_studentized_range_survival(k: int, df: float) -> None:
    # q from 0 through the fall of p to far beyond it (for df = 5 the tail reaches q in the thousands)
    q = np.unique(np.concatenate([[0.0, 1e-3], np.linspace(0.05, 12, 40), np.geomspace(0.1, 3000 if df < 50 else 60,
                                                                                         30)]))
    expected = reference(q, k, df)
    got = tukey_pvalues(q, k, df)
    assert np.all((got >= 0) & (got <= 1))
    main = expected > 1e-6
    assert main.sum() >= 15 and (expected[main] < 0.5).any()  # the test reaches into the fall, not only p = 1
    np.testing.assert_allclose(got[main], expected[main], rtol=1e-4, atol=0, err_msg=f"k={k} df={df}")
    tail = (expected > 1e-9) & ~main
    np.testing.assert_allclose(got[tail], expected[tail], rtol=2e-2, atol=0, err_msg=f"k={k} df={df} tail")
    deep = expected <= 1e-9
    np.testing.assert_allclose(got[deep], expected[deep], rtol=0, atol=1e-10, err_msg=f"k={k} df={df} deep")
    assert got[0] == 1.0  # q = 0: equal means


@pytest.mark.parametrize("df", [1, 5, 44, 1000, 1e6])
def test_two_runs_is_students_t_in_closed_form(df: float) -> None:
    q = np.array([0.0, 0.3, 1.0, 2.5, 4.0, 8.0, 20.0])
    got = tukey_pvalues(q, 2, df)
    # the range of two normals over s is sqrt(2) |T|: the two-sided t p of t = q / sqrt(2)
    np.testing.assert_allclose(got, 2 * scipy.stats.t.sf(q / np.sqrt(2), df), rtol=1e-12, atol=1e-300)
    main = got > 1e-6
    # scipy's integral (its df = infinity form above df = 100,000, 2e-5 off at df = 1e6)
    np.testing.assert_allclose(got[main], reference(q[main], 2, df), rtol=1e-6 if df < 1e5 else 1e-4)


def test_tukey_hsd_pvalue_equals_scipy_tukey_hsd() -> None:
    """The mart's inputs - each run's mean and questions, the family's pooled variance and df - give scipy.stats
    .tukey_hsd's p-value matrix, for equal and unequal group sizes (Tukey-Kramer)."""
    rng = np.random.default_rng(7)
    for sizes in ([45] * 4, [45, 40, 45, 30, 45], [150] * 12):
        groups = [np.clip(rng.normal(0.5 + 0.04 * i, 0.3, n), 0, 1) for i, n in enumerate(sizes)]
        expected = scipy.stats.tukey_hsd(*groups).pvalue
        k, n_total = len(groups), sum(sizes)
        mse = sum(((g - g.mean()) ** 2).sum() for g in groups) / (n_total - k)
        pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
        got = tukey_hsd_pvalue([groups[b].mean() - groups[a].mean() for a, b in pairs], [mse] * len(pairs),
                               [sizes[a] for a, _ in pairs], [sizes[b] for _, b in pairs], [k] * len(pairs),
                               [n_total - k] * len(pairs))
        want = np.array([expected[a, b] for a, b in pairs])
        main = want > 1e-6
        np.testing.assert_allclose(got[main], want[main], rtol=1e-4, err_msg=str(sizes))
        np.testing.assert_allclose(got[~main], want[~main], atol=1e-6, rtol=0, err_msg=str(sizes))


def test_no_spread_and_missing_inputs() -> None:
    # every score equal within each run: equal means tie (p 1), different ones do not (p 0); no family: null (NaN)
    got = tukey_hsd_pvalue([0.0, 0.1, 0.1, 0.1], [0.0, 0.0, np.nan, 0.01], [10] * 4, [10] * 4, [3, 3, 3, 1],
                           [27, 27, 27, 9])
    assert got[0] == 1.0 and got[1] == 0.0 and np.isnan(got[2]) and np.isnan(got[3])
