"""Which answers to label next, and the mean that stays valid when they are chosen that way: active statistical
inference (Zrnic and Candès 2024, "Active Statistical Inference", ICML; arXiv:2403.03208).

The rule implemented, for the mean of a human metric over an answer run's M answers:

- **Uncertainty** u_i of the predictor on answer i, from what it says without a label (no label is read): the
  spread of its repeats (their population variance s_i^2: a judge that disagrees with itself) and how near its mean
  m_i sits to the metric's pass threshold t on the normalised [0, 1] scale, b_i = (1 - ((m_i - t) / max(t, 1 - t))^2)
  / 4 (for t = 0.5 this is m_i (1 - m_i), the variance of a pass with probability m_i): u_i = sqrt(b_i + s_i^2).
  An answer the predictor did not score is as uncertain as any (u_i = 1/2). The paper's optimal rule samples in
  proportion to sqrt(E[(Y - f(X))^2 | X]) (its §3, "optimal sampling rule"); u_i is the model's own estimate of that
  root mean squared error, as the paper uses for a classifier's uncertainty.
- **Inclusion probabilities** for a budget of n labels among the M answers: pi_i = n ((1 - tau) u_i / sum(u) +
  tau / M), mixed with the uniform rule at share tau (the paper mixes its rule with uniform sampling so that no
  pi_i is near zero and no inverse weight explodes), capped at 1 with the excess spread over the others in the same
  proportions. sum(pi) = n.
- **The draw** takes exactly n answers with inclusion probabilities exactly pi_i: randomised systematic sampling
  with probability proportional to size (the answers in a random order, a random start U in [0, 1), every answer
  whose share of the cumulated pi holds one of U, U + 1, ..., U + n - 1; Goodman and Kish 1950, Hartley and Rao
  1962). With every pi_i = n / M it is a simple random sample. Seeded: the same seed gives the same answers.
- **The estimate** (the paper's estimator with power tuning, its eq. for theta^lambda): with xi_i = 1 for a chosen
  answer that got its label, w_i = xi_i / pi_i, and f_i the predictor's score,
      phi_i = lambda f_i + (Y_i - lambda f_i) w_i,   theta = mean(phi),   se = sqrt(var_pop(phi) / M),
  the interval theta +/- z se. lambda minimises var(phi): with a_i = f_i (1 - w_i), b_i = Y_i w_i,
  lambda = -cov(a, b) / var(a), clipped to [0, 1] as mart_judge_calibrated clips PPI++'s. E[w_i] = 1 for every
  answer, so theta is unbiased for the mean of the M human labels whatever the pi_i: the inverse-probability
  weights are what keeps the mean valid when labels are not drawn uniformly (a plain PPI++ mean over such labels is
  biased towards the answers the rule favours).
- **Labels already there** when the answers were chosen are a census of their part: pi_i = 1, w_i = 1 (the choice
  is among the answers without a label). A label for an answer the rule did not choose gets w_i = 0: it is kept in
  the label set (PPI++ and the human-only interval use it) but the estimate that assumes the design does not.
"""

from __future__ import annotations

import math

import numpy as np

UNIFORM_SHARE = 0.5  # tau: the share of the uniform rule in the mixture (the paper's safeguard against tiny pi)
UNSCORED_UNCERTAINTY = 0.5  # an answer the predictor did not score: the largest boundary uncertainty sqrt(1/4)


def uncertainty(mean: np.ndarray, repeat_var: np.ndarray, threshold: float) -> np.ndarray:
    """u_i = sqrt(b_i + s_i^2) (module doc); a NaN mean (no score) gives UNSCORED_UNCERTAINTY."""
    mean = np.asarray(mean, dtype=float)
    repeat_var = np.nan_to_num(np.asarray(repeat_var, dtype=float), nan=0.0)
    reach = max(threshold, 1.0 - threshold)
    boundary = (1.0 - np.clip((mean - threshold) / reach, -1.0, 1.0) ** 2) / 4.0
    out = np.sqrt(boundary + repeat_var)
    return np.where(np.isnan(mean), UNSCORED_UNCERTAINTY, out)


def inclusion_probabilities(u: np.ndarray, n: int, uniform_share: float = UNIFORM_SHARE) -> np.ndarray:
    """pi_i for a budget of n among len(u) answers (module doc): proportional to the uncertainty mixed with the
    uniform rule, capped at 1, summing to n."""
    u = np.asarray(u, dtype=float)
    m = len(u)
    if not 0 <= n <= m:
        raise ValueError(f"a budget of {n} among {m} answers")
    total = u.sum()
    size = (1.0 - uniform_share) * (u / total if total > 0 else np.full(m, 1.0 / m)) + uniform_share / m
    pi = np.zeros(m)
    capped = np.zeros(m, dtype=bool)
    while True:  # cap at 1 and spread what the capped ones leave over the others, in proportion to size
        free = ~capped
        left = n - capped.sum()
        pi[capped] = 1.0
        pi[free] = left * size[free] / size[free].sum() if left > 0 else 0.0
        over = free & (pi > 1.0)
        if not over.any():
            return pi
        capped |= over


def systematic_sample(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices of exactly round(sum(pi)) answers, answer i with probability pi_i: randomised systematic sampling
    (module doc). Sorted."""
    pi = np.asarray(pi, dtype=float)
    n = int(round(pi.sum()))
    order = rng.permutation(len(pi))
    ends = np.cumsum(pi[order])
    ends[-1] = n  # the last end is n, not n plus a rounding error: every point U + k falls inside [0, n)
    points = rng.uniform() + np.arange(n)
    return np.sort(order[np.searchsorted(ends, points, side="right")])


def active_mean(f: np.ndarray, y: np.ndarray, pi: np.ndarray, labelled: np.ndarray, census: np.ndarray,
                n_chosen: int, z: float, lam: float | None = None) -> dict[str, float] | None:
    """The inverse-probability-weighted PPI mean with power tuning and its interval (module doc) over an answer
    run's M answers. f: the predictor's scores; y: the human labels (read only where labelled); pi: each candidate's
    inclusion probability (read only for chosen ones); labelled: a chosen answer that has its label; census: an
    answer labelled before the choice; n_chosen: how many the draw chose. Returns mean, lower, upper (not cut to the
    scale), se, lambda and n (the chosen answers with a label). None below 2 of them. lam: a fixed lambda instead
    of the variance-minimising estimate (any fixed lambda gives an exactly unbiased mean)."""
    f, y, pi = (np.asarray(v, dtype=float) for v in (f, y, pi))
    labelled, census = np.asarray(labelled, dtype=bool), np.asarray(census, dtype=bool)
    n = int(labelled.sum())
    if n < 2:
        return None
    candidates = ~census
    m, m_k = len(f), int(candidates.sum())
    scaled = pi[labelled] * n / n_chosen  # pi' (module doc: chosen answers still without a label)
    big_a, big_b = n * y[labelled] / scaled, n * f[labelled] / scaled
    var_f = float(np.var(f[candidates]))
    var_a, var_b = float(np.var(big_a, ddof=1)), float(np.var(big_b, ddof=1))
    cov_ab = float(np.cov(big_a, big_b, ddof=1)[0, 1])
    denominator = var_b + n * m_k * var_f
    if lam is None:
        lam = min(1.0, max(0.0, cov_ab / denominator)) if denominator > 0 else 0.0
    total = float(y[census].sum()) + lam * float(f[candidates].sum()) + float(np.mean(big_a - lam * big_b))
    variance = lam * lam * m_k * var_f + max(0.0, var_a - 2 * lam * cov_ab + lam * lam * var_b) / n
    mean, se = total / m, math.sqrt(variance) / m
    return {"mean": mean, "lower": mean - z * se, "upper": mean + z * se, "se": se, "lambda": lam, "n": n}
