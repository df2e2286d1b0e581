"""The paired tests' resampling (python_jobs/stats/paired_tests.py) against scipy's, measured in the same run.

    .venv/bin/python -m bench.stats.resampling              # n = 1,000 and 5,000 questions; 1, 3 and 9 comparisons
    .venv/bin/python -m bench.stats.resampling --n 5000 --m 1 --repeats 5

`finrag compare` on demand and `finrag gate` spend their time past start-up here (bench/reads): a percentile
bootstrap of the mean difference (10,000 resamples, the vars' default) and, in compare, a sign-flip randomization
test (10,000 flips). For each n (questions) and m (comparisons of that n in one batch, as the gate's metrics on the
whole set are: 3 in bench/reads' gate) it times, best of --repeats:

- ours: `resample_means` (the bootstrap's means) and `_sign_flip` (the randomization p), as the mart and the CLI
  call them, on this machine's cores;
- scipy: `scipy.stats.bootstrap(method='percentile', vectorized=True)` on each comparison (the same estimator:
  paired_tests.py's docstring) and `scipy.stats.permutation_test(permutation_type='samples')` of the paired means
  (under the null each pair's two scores swap: a sign flip of the difference), with the same counts of resamples;
- plain numpy: the textbook draw, comparison by comparison (int64 indices, gather, mean). Not the module before
  281b304, which counted the picks of one int64 draw for all comparisons at once (bench/reads has that before
  and after, in compare's and gate's own wall time).

It prints each time, ours / scipy and ours / plain numpy, and checks that each interval end is within Monte-Carlo
error of scipy's (a few standard errors of the mean difference / sqrt(resamples)). Not run in CI.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from scipy import stats

from python_jobs.stats import paired_tests as pt


def best_of(repeats: int, work) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - t0)
    return min(times), out


def plain_numpy_means(diffs: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs))), j].mean(axis=1)
                     for j in range(diffs.shape[1])])


def measure(n: int, m: int, resamples: int, repeats: int) -> str:
    """One table line: ours, scipy's and plain numpy's times for m comparisons of n questions."""
    rng = np.random.default_rng([n, m])
    # per-question differences of scores in [0, 1]: a small true difference, many ties at 0 (as nDCG's have)
    diffs = np.where(rng.random((n, m)) < 0.4, 0.0, rng.normal(0.01, 0.2, (n, m)))
    t_ours, means = best_of(repeats, lambda: pt.resample_means(diffs, resamples, 42, 0))
    low, high = pt.percentile_interval(means, 0.95)
    t_scipy, ref = best_of(repeats, lambda: [
        stats.bootstrap((diffs[:, j],), np.mean, n_resamples=resamples, method="percentile", vectorized=True,
                        rng=np.random.default_rng(42)).confidence_interval for j in range(m)])
    t_numpy, _ = best_of(repeats, lambda: plain_numpy_means(diffs, resamples, 42))
    se = diffs.std(axis=0, ddof=1) / np.sqrt(n)
    off = max(np.abs(np.array([r.low for r in ref]) - low).max(),
              np.abs(np.array([r.high for r in ref]) - high).max()) / se.min()
    f_ours, _ = best_of(repeats, lambda: pt._sign_flip(diffs, resamples, 42))
    zeros = np.zeros(n)
    f_scipy, _ = best_of(repeats, lambda: [
        stats.permutation_test((diffs[:, j], zeros), lambda x, y, axis: np.mean(x - y, axis=axis),
                               permutation_type="samples", n_resamples=resamples, vectorized=True,
                               rng=np.random.default_rng(42)) for j in range(m)])
    return (f"{n:>6} {m:>3} | {t_ours:>14.3f}s {t_scipy:>7.3f}s {t_numpy:>7.3f}s {t_ours / t_scipy:>7.3f} "
            f"{t_ours / t_numpy:>7.3f} | {f_ours:>15.3f}s {f_scipy:>7.3f}s {f_ours / f_scipy:>7.3f} | {off:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000], help="questions a comparison has")
    ap.add_argument("--m", type=int, nargs="+", default=[1, 3, 9], help="comparisons of that n in one batch")
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(f"cores {pt._WORKERS}, load {os.getloadavg()[0]:.1f}; {args.resamples:,} resamples / sign flips; "
          f"best of {args.repeats}")
    print(f"{'n':>6} {'m':>3} | {'bootstrap: ours':>15} {'scipy':>8} {'numpy':>8} {'/scipy':>7} {'/numpy':>7} | "
          f"{'sign flips: ours':>16} {'scipy':>8} {'/scipy':>7} | max |end - scipy's| / se")
    for n in args.n:
        for m in args.m:
            print(measure(n, m, args.resamples, args.repeats))


if __name__ == "__main__":
    main()
