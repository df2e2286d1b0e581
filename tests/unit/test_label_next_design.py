"""label-next's rule (python_jobs/labelling/design.py) against hand-worked cases: the uncertainty, the inclusion
probabilities (mixed with the uniform rule, capped at 1), the draw (exactly n answers, each with its probability,
seeded) and the inverse-probability-weighted mean with power tuning."""

from __future__ import annotations

import math

import numpy as np
import pytest

from python_jobs.labelling.design import active_mean, inclusion_probabilities, systematic_sample, uncertainty


def test_uncertainty_is_the_boundary_variance_plus_the_repeats_spread() -> None:
    # t = 0.5: b = m (1 - m); m = 0.25 -> 0.1875; a repeat variance adds; no score -> 1/2
    got = uncertainty(np.array([0.5, 1.0, 0.25, 1.0, np.nan]), np.array([0, 0, 0, 0.0625, np.nan]), 0.5)
    assert got == pytest.approx([0.5, 0.0, math.sqrt(0.1875), 0.25, 0.5])
    # t = 0.25: reach 0.75; m = 0.5 -> (1 - (0.25 / 0.75)^2) / 4 = 2/9
    assert uncertainty(np.array([0.25, 0.5, 1.0]), np.zeros(3), 0.25) == pytest.approx([0.5, math.sqrt(2 / 9), 0.0])


def test_inclusion_probabilities_mix_with_uniform_and_cap_at_one() -> None:
    # u = 1, 1, 2, 4 (sum 8), tau 1/2: size = u / 16 + 1/8 = 3/16, 3/16, 1/4, 3/8; pi = 2 size
    assert inclusion_probabilities(np.array([1.0, 1, 2, 4]), 2) == pytest.approx([0.375, 0.375, 0.5, 0.75])
    # u = 0, 0, 0, 10: pi = 1/4, 1/4, 1/4, 5/4 -> the last capped at 1, the budget left (1) spread evenly
    assert inclusion_probabilities(np.array([0.0, 0, 0, 10]), 2) == pytest.approx([1 / 3, 1 / 3, 1 / 3, 1.0])
    # no uncertainty anywhere: uniform
    assert inclusion_probabilities(np.zeros(5), 2) == pytest.approx([0.4] * 5)
    with pytest.raises(ValueError):
        inclusion_probabilities(np.ones(3), 4)


def test_the_draw_takes_n_answers_each_with_its_probability() -> None:
    pi = np.array([0.9, 0.1, 0.5, 0.5, 1.0, 0.25, 0.75])  # sum 4
    rng = np.random.default_rng(3)
    counts = np.zeros(len(pi))
    for _ in range(20000):
        chosen = systematic_sample(pi, rng)
        assert len(chosen) == 4 and len(set(chosen.tolist())) == 4
        counts[chosen] += 1
    assert counts / 20000 == pytest.approx(pi, abs=0.012)
    assert counts[4] == 20000  # pi = 1: always
    same = [systematic_sample(pi, np.random.default_rng(7)).tolist() for _ in range(2)]
    assert same[0] == same[1]


def test_the_weighted_mean_on_a_hand_worked_case() -> None:
    # M = 5: answer 4 labelled before the request (census, Y = 1); candidates 0-3 with f = 1, 0, 1/2, 1/2 and
    # pi = 0.8, 0.4, 0.4, 0.4 (n_chosen 2); chosen and labelled: 0 (Y = 1) and 1 (Y = 0).
    # A = 2 Y / pi = 2.5, 0; B = 2 f / pi = 2.5, 0: var_samp(A) = var_samp(B) = cov = 3.125; var_pop(f) = 0.125
    # lambda = 3.125 / (3.125 + 2 x 4 x 0.125) = 25/33
    # total = 1 + lambda x 2 + 1.25 - lambda x 1.25 = 2.25 + 0.75 x 25/33; mean = total / 5
    # variance = lambda^2 x 4 x 0.125 + 3.125 (1 - lambda)^2 / 2 = 25/66; se = sqrt(25/66) / 5
    f = np.array([1.0, 0.0, 0.5, 0.5, 0.5])
    y = np.array([1.0, 0.0, np.nan, np.nan, 1.0])
    pi = np.array([0.8, 0.4, 0.4, 0.4, 1.0])
    labelled = np.array([True, True, False, False, False])
    census = np.array([False, False, False, False, True])
    got = active_mean(f, y, pi, labelled, census, 2, 1.959963984540054)
    lam = 25 / 33
    se = math.sqrt(25 / 66) / 5
    assert got["lambda"] == pytest.approx(lam, abs=1e-12)
    assert got["mean"] == pytest.approx((2.25 + 0.75 * lam) / 5, abs=1e-12)
    assert got["se"] == pytest.approx(se, abs=1e-12)
    assert got["lower"] == pytest.approx(got["mean"] - 1.959963984540054 * se, abs=1e-12)
    assert got["n"] == 2
    assert active_mean(f, y, pi, np.array([True, False, False, False, False]), census, 2, 1.96) is None


def test_the_weighted_mean_is_unbiased_under_a_non_uniform_draw() -> None:
    # a plain mean of the chosen labels is pulled toward the answers the rule favours; the weighted one is not
    rng = np.random.default_rng(11)
    # the uncertain answers (f near the threshold) are the wrong ones, so the rule favours Y = 0
    y = np.array([0.0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    f = np.array([0.5, 0.5, 0.45, 0.55, 1, 1, 1, 0.95, 0.9, 0.98])
    pi = inclusion_probabilities(uncertainty(f, np.zeros(10), 0.5), 4)
    none = np.zeros(10, dtype=bool)
    weighted, fixed, plain = [], [], []
    for _ in range(4000):
        labelled = np.zeros(10, dtype=bool)
        labelled[systematic_sample(pi, rng)] = True
        weighted.append(active_mean(f, y, pi, labelled, none, 4, 1.96)["mean"])
        fixed.append(active_mean(f, y, pi, labelled, none, 4, 1.96, lam=0.5)["mean"])
        plain.append(y[labelled].mean())
    # with a fixed lambda the weighted mean is exactly unbiased; lambda estimated per draw adds an O(1/n) term
    # (n = 4 here)
    assert np.mean(fixed) == pytest.approx(y.mean(), abs=0.01)
    assert np.mean(weighted) == pytest.approx(y.mean(), abs=0.04)
    assert np.mean(plain) < y.mean() - 0.1
