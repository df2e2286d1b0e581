"""Paired comparison of two runs scored on the same questions (mart_run_comparison), defined once here and exposed
to SQL by the dbt-duckdb plugin as `paired_tests(diffs, resamples, sign_flips, seed, level)`. The settings have one
home, the vars run_comparison_resamples / _sign_flips / _seed / _level of dbt_project.yml, which the mart passes in.

The input is one comparison's per-question differences d_i = score_b - score_a, in a fixed order (the mart passes
them ordered by question id, so a result never depends on the order DuckDB happens to scan rows in). With n = len(d):

- ci_low, ci_high: a percentile bootstrap interval of the mean difference: `resamples` resamples of the n questions
  with replacement, the mean difference of each, and the (1 - level) / 2 and (1 + level) / 2 quantiles of those
  means (numpy's default linear interpolation; scipy.stats.bootstrap(method='percentile') is the same estimator).
- p_ttest: the two-sided paired Student t-test, t = mean(d) / (sd(d) / sqrt(n)) with sd's n - 1 denominator and
  p = 2 * T_{n-1}(-|t|), as scipy.stats.ttest_rel computes it. NULL where scipy gives NaN: n < 2, or every
  difference 0 (0 / 0); when every difference is the same non-zero value, t is infinite and p = 0, as in scipy.
- p_randomization: the two-sided paired randomization (sign-flip) test of Fisher: under the null hypothesis each
  question's two scores are exchangeable, so each d_i is as likely as -d_i; the statistic is |mean(d)| and p is the
  share of sign vectors s (s_i = +-1) with |mean(s * d)| >= |mean(d)|. When 2^n <= sign_flips every sign vector is
  enumerated (the exact p, no Monte-Carlo error, and cheaper); otherwise `sign_flips` random sign vectors and
  p = (hits + 1) / (sign_flips + 1), the estimate that counts the observed assignment (Phipson & Smyth, 2010), so a
  Monte-Carlo p is never 0. ranx's `compare(stat_test='fisher')` is the same test with p = hits / permutations.
  Two sums closer than 1e-10 * sum(|d|) count as equal (the observed sum met again in another order is a tie,
  not a float accident).

Randomness: numpy Generators seeded with (seed, n, stream, block) - one stream for the bootstrap, one for the sign
flips, one generator per block of about a million draws, so blocks can be drawn in parallel - so a comparison's
result depends only on its differences, the settings and the seed, never on which other comparisons share its batch
(the p-values exactly; the interval ends to ~1e-16, as BLAS may sum in another order when a batch has another
width). Comparisons of the same n share the same resampling and sign matrices; a batch of them is a matrix product
(counts @ D, bits @ D with D the n x m matrix of m comparisons' differences), so a DuckDB chunk of up to 2,048
comparisons costs a few BLAS calls instead of 2,048 Python loops.
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from python_jobs.stats import sql_functions
from python_jobs.stats.sql_functions import arrow_array, arrow_struct

# elements of one block of a random matrix (rows x n): bounds the memory of one step at 8 MB of float64
_BLOCK_ELEMENTS = 1 << 20
# comparisons multiplied at once: the resample means of a batch (resamples x batch) stay under ~40 MB
_BATCH_COLUMNS = 512
# up to this many comparisons a block's picks are counted a slice of rows at a time, each slice's counts (~16 rows x n
# int64) small enough to stay in the cache: 15-35 % faster than counting a whole block (8 MB) from 2 to 32 columns
# (bench/stats, n 1,000-20,000); past it the product's reads of the columns dominate and whole blocks are faster
_SLICED_COLUMNS = 32
_SLICE_ELEMENTS = 1 << 16
_TIE_TOLERANCE = 1e-10
_WORKERS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@dataclass(frozen=True)
class PairedTests:
    ci_low: float
    ci_high: float
    p_ttest: float | None
    p_randomization: float | None  # None when not asked for (randomization=False)
    randomization_exact: bool | None


def _blocks(rows: int, n: int) -> Iterator[int]:
    """Row counts of the blocks a rows x n random matrix is drawn in (a function of n only, so the draws are too)."""
    step = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, rows, step):
        yield min(step, rows - start)


def _generator(seed: int, n: int, stream: int, block: int = 0) -> np.random.Generator:
    return np.random.default_rng([seed, n, stream, block])


def prefetch_t_distribution() -> None:
    """Start importing scipy.special (the t-test's `stdtr`, ~0.15 s: it clones numpy's namespace for its array API)
    on a thread of its own while the caller reads scores: DuckDB's reads and numpy's draws release the GIL, so a read
    verb (`finrag compare` on demand, the gate) pays little of it. Not a daemon: exiting waits for the import rather
    than stopping it half done."""
    if "scipy.special" not in sys.modules:
        threading.Thread(target=importlib.import_module, args=("scipy.special",), name="import scipy.special").start()


def _t_test(diffs: np.ndarray) -> np.ndarray:
    """Two-sided paired t-test p per column of diffs (n x m); NaN where undefined."""
    from scipy.special import stdtr

    n = diffs.shape[0]
    if n < 2:
        return np.full(diffs.shape[1], np.nan)
    mean = diffs.mean(axis=0)
    var = diffs.var(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
    return 2.0 * stdtr(n - 1, -np.abs(t))


def _index_dtype(n: int) -> type[np.unsignedinteger] | type[np.int64]:
    """The narrowest integer type that holds 0..n-1: numpy draws a uint16 in about half the time of an int64, and
    the draws are a function of n alone (as the blocks are), so a result still depends only on its values."""
    return np.uint16 if n <= 1 << 16 else np.uint32 if n <= 1 << 32 else np.int64


def resample_means(values: np.ndarray, resamples: int, seed: int, stream: int) -> np.ndarray:
    """The means of `resamples` bootstrap resamples (with replacement, n of n) of each column of values (n x m), as
    an m x resamples matrix; block b of the draws comes from the generator (seed, n, stream, b), so columns of the
    same n share them (python_jobs/stats/unpaired_tests.py resamples each run's sample on a stream of its own)."""
    n, m = values.shape
    dtype = _index_dtype(n)
    columns = np.ascontiguousarray(values.T)
    means = np.empty((m, resamples))  # one row of resample means per comparison
    starts = list(itertools.accumulate(_blocks(resamples, n), initial=0))
    # the rows of picks counted at once (see _SLICED_COLUMNS) and each row's offset into their flat counts; the
    # first block is the largest
    largest = starts[1] if len(starts) > 1 else 1
    step = largest if m > _SLICED_COLUMNS else min(largest, max(16, _SLICE_ELEMENTS // n))
    offsets = (np.arange(step, dtype=np.int64) * n)[:, None]

    def block(b: int) -> None:
        done, rows = starts[b], starts[b + 1] - starts[b]
        picks = _generator(seed, n, stream, b).integers(0, n, size=(rows, n), dtype=dtype)
        if m == 1:
            # one column: gather its picked values (as fast as counting them, below, and fewer steps)
            means[0, done:done + rows] = np.take(columns[0], picks).sum(axis=1) / n
            return
        # how often each question is drawn in each resample: the resample mean is d @ counts / n, one BLAS product
        # for every column
        for start in range(0, rows, step):
            part = picks[start:start + step]
            k = part.shape[0]
            counts = np.bincount((part + offsets[:k]).ravel(), minlength=k * n)
            means[:, done + start:done + start + k] = columns @ counts.reshape(k, n).T.astype(np.float64) / n

    _in_parallel(block, len(starts) - 1)
    return means


def _in_parallel(work: Callable[[int], None], blocks: int) -> None:
    """work(0 .. blocks-1) on the machine's cores. Each block has its own generator and its own slice of the
    output, and BLAS is held to one thread a block whether the blocks run in the pool or one after another, so a
    block's sums come in one order and the result is the same, bit for bit, on any number of cores; numpy draws and
    counts without the GIL (BLAS's own threads would only compete with the blocks'): at 5,000 questions this halves
    the resampling on 2 cores."""
    if blocks < 2:
        for b in range(blocks):
            work(b)
        return
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="blas"):
        if _WORKERS < 2:
            for b in range(blocks):
                work(b)
            return
        with ThreadPoolExecutor(min(_WORKERS, blocks)) as pool:
            list(pool.map(work, range(blocks)))


def percentile_interval(means: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The (1 - level) / 2 and (1 + level) / 2 quantiles of each row of resample statistics (m x resamples)."""
    alpha = 1.0 - level
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2], axis=1)  # numpy's default (linear) definition
    return low, high


def _bootstrap(diffs: np.ndarray, resamples: int, seed: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the mean per column of diffs (n x m)."""
    return percentile_interval(resample_means(diffs, resamples, seed, 0), level)


def _sign_flip(diffs: np.ndarray, sign_flips: int, seed: int) -> tuple[np.ndarray, bool]:
    """Two-sided randomization p per column of diffs (n x m): exact when 2^n <= sign_flips."""
    n, m = diffs.shape
    observed = np.abs(diffs.sum(axis=0))
    floor = observed - _TIE_TOLERANCE * np.abs(diffs).sum(axis=0)
    if 2 ** n <= sign_flips:
        codes = np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]
        signs = 1.0 - 2.0 * (codes & 1)
        return (np.abs(signs @ diffs) >= floor).sum(axis=0) / 2 ** n, True
    # a random sign vector is n random bits (s_i = 1 - 2 b_i): drawn as bytes, an eighth of a byte a sign, about a
    # sixth of the time of drawing a 0/1 integer each; sum(s * d) = sum(d) - 2 (b @ d)
    total = diffs.sum(axis=0)
    sizes = list(_blocks(sign_flips, n))
    block_hits = np.zeros((len(sizes), m), dtype=np.int64)  # counts: their sum is the same in any order

    def block(b: int) -> None:
        rows = sizes[b]
        random_bytes = _generator(seed, n, 1, b).bytes((rows * n + 7) // 8)
        bits = np.unpackbits(np.frombuffer(random_bytes, dtype=np.uint8), count=rows * n)
        flipped = total - 2.0 * (bits.reshape(rows, n).astype(np.float64) @ diffs)
        block_hits[b] = (np.abs(flipped) >= floor).sum(axis=0)

    _in_parallel(block, len(sizes))
    return (block_hits.sum(axis=0) + 1) / (sign_flips + 1), False


def paired_tests_batch(diffs: Sequence[Sequence[float]], resamples: int, sign_flips: int, seed: int,
                       level: float, randomization: bool = True) -> list[PairedTests | None]:
    """The statistics of many comparisons at once (None for an empty one), each as `paired_tests` gives it; without
    the randomization test when a caller reads only the interval and the t-test (`finrag gate`: about half the
    time of a gate of 200 comparisons)."""
    if resamples < 1 or sign_flips < 1 or not 0 < level < 1:
        raise ValueError(f"resamples {resamples}, sign_flips {sign_flips} must be >= 1 and level {level} in (0, 1)")
    out: list[PairedTests | None] = [None] * len(diffs)
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, d in enumerate(diffs):
        if d is not None and len(d):
            by_length[len(d)].append(i)
    for rows in by_length.values():
        for start in range(0, len(rows), _BATCH_COLUMNS):
            batch = rows[start:start + _BATCH_COLUMNS]
            matrix = np.array([diffs[i] for i in batch], dtype=np.float64).T  # n x m
            low, high = _bootstrap(matrix, resamples, seed, level)
            p_t = _t_test(matrix)
            p_r, exact = _sign_flip(matrix, sign_flips, seed) if randomization else (None, None)
            for j, i in enumerate(batch):
                out[i] = PairedTests(float(low[j]), float(high[j]), None if np.isnan(p_t[j]) else float(p_t[j]),
                                     None if p_r is None else float(p_r[j]), exact)
    return out


def paired_tests(diffs: Sequence[float], resamples: int, sign_flips: int, seed: int,
                 level: float) -> PairedTests | None:
    """Bootstrap interval, paired t-test and paired randomization test of one comparison's per-question
    differences (b - a); None when there are none."""
    return paired_tests_batch([diffs], resamples, sign_flips, seed, level)[0]


# ---- who won a question, and Tukey's HSD ----------------------------------------------------------------------------
def outcome(diff: float | None, higher_is_better: bool | None) -> str | None:
    """B's outcome on one question from diff = B - A in the metric's direction: 'win' when B is better (higher, or
    lower when lower is better), 'loss' when worse, 'tie' when equal; None when the diff or the direction is."""
    if diff is None or higher_is_better is None or diff != diff:
        return None
    if diff == 0:
        return "tie"
    return "win" if (diff > 0) == bool(higher_is_better) else "loss"


# Tukey's HSD p-values (scipy.stats.tukey_hsd, which ranx's compare(stat_test="tukey") calls) for one comparison of
# two runs of a family of k runs: q = |mean_a - mean_b| / sqrt((1/n_a + 1/n_b) * mse / 2), p = the studentized range
# survival sf(q, k, df) with the family's pooled within-run variance mse and df = N - k. scipy integrates that
# survival numerically (~20-50 ms a value) below df = 100,000, and switches to its df = infinity form above (here
# _studentized_range_sf_infinite_df, without importing scipy.stats). Below, each (k, df) gets its log-survival
# evaluated exactly on a Chebyshev grid of log(1 + q) over the q where p moves (from cdf < 1e-12 to sf < 1e-12) and a
# cubic spline (relative error below 1e-4 where p > 1e-6, within scipy's own integration noise below;
# tests/unit/stats/test_tukey_hsd_p.py), so a build's cost grows with the families, not with the runs compared.
# Below the grid p is 1, beyond it 0 (both within 1e-12).
_TUKEY_DIRECT_DF = 100_000
_TUKEY_GRID = 128
_TUKEY_FLOOR = 1e-12


@lru_cache(maxsize=512)
def _tukey_log_sf(k: int, df: float):
    import warnings

    from scipy.interpolate import CubicSpline
    from scipy.stats import studentized_range

    with warnings.catch_warnings():
        from scipy.integrate import IntegrationWarning

        # scipy's integration deep in the tail, where the grid stops anyway
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", IntegrationWarning)
        # the top of the grid: sf below the floor - or no longer halving as q doubles, where scipy's integration
        # reaches its own noise (~1e-11 for many runs and df near 100,000) and would never get there
        q_max, previous = 8.0, 1.0
        while True:
            sf_max = studentized_range.sf(q_max, k, df)
            if not np.isfinite(sf_max) or sf_max <= _TUKEY_FLOOR or previous / 2 <= sf_max < 1e-6:
                break
            q_max, previous = q_max * 2, sf_max
        # the bottom: p is 1 to 1e-12 below it; for many runs p stays 1 up to q of several units, and nodes spent
        # there would leave the steep fall after it too coarse
        q_min = 8.0
        while q_min > 1e-9 and studentized_range.cdf(q_min, k, df) > _TUKEY_FLOOR:
            q_min /= 2
        # nodes even in log(1 + q): a few degrees of freedom give the survival a tail to q in the thousands
        low, high = np.log1p(q_min), np.log1p(q_max)
        x = low + (high - low) * (1 - np.cos(np.linspace(0, np.pi, _TUKEY_GRID))) / 2
        sf = studentized_range.sf(np.expm1(x), k, df)
    finite = np.isfinite(sf) & (sf > 0)
    return q_min, float(np.expm1(x[finite][-1])), CubicSpline(x[finite], np.log(sf[finite]))


# scipy's df = infinity form, cdf(q, k) = k * integral of phi(z) (Phi(z + q) - Phi(z))^(k - 1) dz, on a fixed grid of
# z instead of scipy's adaptive quad: importing scipy.stats (~1 CPU-s) was most of an on-demand `finrag compare`. The
# trapezoid rule is exponentially accurate for this smooth integrand, which decays at both ends: a step of 0.1 over
# [-9, 9] is within 2e-12 of scipy for 3 to 5,000 runs (a step of 0.025 gives the same), 20,000 q in ~0.2 s.
_TUKEY_Z = np.linspace(-9.0, 9.0, 181)


def _studentized_range_sf_infinite_df(q: np.ndarray, k: int) -> np.ndarray:
    from scipy.special import ndtr

    z = _TUKEY_Z
    density = k * np.exp(-z * z / 2) / np.sqrt(2 * np.pi)
    upper, lower = ndtr(-z), ndtr(z)  # 1 - Phi(z), Phi(z)
    out = np.empty(q.shape)
    for start in range(0, len(q), 1024):
        qq = q[start:start + 1024, None]
        # Phi(z + q) - Phi(z), from the upper tails where both are near 1 (no cancellation)
        mass = np.where(z > -qq / 2, upper - ndtr(-z - qq), ndtr(z + qq) - lower)
        out[start:start + 1024] = 1.0 - np.trapezoid(density * mass ** (k - 1), z, axis=1)
    return np.clip(out, 0.0, 1.0)


def tukey_pvalues(q: np.ndarray, k: int, df: float) -> np.ndarray:
    """The studentized range survival sf(q, k, df) of many q at once (see above)."""
    from scipy.special import stdtr

    q = np.abs(np.asarray(q, dtype=np.float64))
    if k < 2 or not df > 0:
        return np.full(q.shape, np.nan)
    if k == 2:  # the range of two is sqrt(2) |T|: Student's t on df, in closed form
        return 2.0 * stdtr(df, -q / np.sqrt(2.0))
    if df > _TUKEY_DIRECT_DF:
        return _studentized_range_sf_infinite_df(q, int(k))
    q_min, q_max, spline = _tukey_log_sf(int(k), float(df))
    inside = np.minimum(np.exp(spline(np.log1p(np.clip(q, q_min, q_max)))), 1.0)
    return np.where(q <= q_min, 1.0, np.where(q >= q_max, 0.0, inside))


def tukey_hsd_pvalue(mean_diff, mse, n_a, n_b, k, df) -> np.ndarray:
    """Tukey's HSD p of each comparison (arrays): q from the means' difference, the family's mse and sizes."""
    mean_diff, mse, n_a, n_b, k, df = (np.asarray(x, dtype=np.float64) for x in (mean_diff, mse, n_a, n_b, k, df))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.abs(mean_diff) / np.sqrt((1 / n_a + 1 / n_b) * mse / 2)
    out = np.full(q.shape, np.nan)
    ok = np.isfinite(q) & (k >= 2) & (df > 0)
    for kk, dd in {(int(a), float(b)) for a, b in zip(k[ok], df[ok])}:
        rows = ok & (k == kk) & (df == dd)
        out[rows] = tukey_pvalues(q[rows], kk, dd)
    # no spread within the runs (every score equal): equal means are tied (p 1), different ones are not (p 0)
    flat = (mse == 0) & (k >= 2)
    out[flat] = np.where(mean_diff[flat] == 0, 1.0, 0.0)
    return out


# ---- DuckDB -------------------------------------------------------------------------------------------------------
FIELDS = ("ci_low", "ci_high", "p_ttest", "p_randomization", "randomization_exact")


def _arrow_paired_tests(diffs, resamples, sign_flips, seeds, levels):
    """The vectorised UDF: one call per DuckDB chunk; comparisons with the same settings are batched together."""
    import pyarrow as pa

    lists = diffs.to_pylist()
    settings = list(zip(resamples.to_pylist(), sign_flips.to_pylist(), seeds.to_pylist(), levels.to_pylist(),
                        strict=True))
    results: list[PairedTests | None] = [None] * len(lists)
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, (d, s) in enumerate(zip(lists, settings, strict=True)):
        if d is not None and None not in s:
            groups[s].append(i)
    for (r, f, seed, level), rows in groups.items():
        for i, res in zip(rows, paired_tests_batch([lists[i] for i in rows], int(r), int(f), int(seed),
                                                   float(level)), strict=True):
            results[i] = res
    columns = {name: [None if res is None else getattr(res, name) for res in results] for name in FIELDS}
    return arrow_struct({name: arrow_array(columns[name], pa.bool_() if name == "randomization_exact" else pa.float64())
                         for name in FIELDS}, [res is None for res in results])


def _arrow_outcome(diffs, directions):
    import pyarrow as pa

    return arrow_array([outcome(d, h) for d, h in zip(diffs.to_pylist(), directions.to_pylist(), strict=True)],
                       pa.string())


def _arrow_tukey(mean_diff, mse, n_a, n_b, k, df):
    import pyarrow as pa

    # nulls become NaN
    values = [np.array(c.to_pylist(), dtype=np.float64) for c in (mean_diff, mse, n_a, n_b, k, df)]
    p = tukey_hsd_pvalue(*values)
    return arrow_array(p, pa.float64(), mask=np.isnan(p))


def register_duckdb_functions(conn, existing: Collection[str] | None = None) -> None:
    """`paired_tests(diffs DOUBLE[], resamples INTEGER, sign_flips INTEGER, seed BIGINT, level DOUBLE)` returning
    STRUCT(ci_low, ci_high, p_ttest, p_randomization DOUBLE, randomization_exact BOOLEAN); NULL for an empty or NULL
    list. Called by the dbt-duckdb plugin for every connection; `existing`: the connection's scalar functions, when
    the caller has read them (sql_functions.scalar_functions)."""
    import duckdb
    from duckdb import sqltypes as t

    existing = sql_functions.scalar_functions(conn) if existing is None else existing
    sql_functions.register("paired_tests", _arrow_paired_tests)
    sql_functions.register("pair_outcome", outcome, _arrow_outcome)
    sql_functions.register("tukey_hsd_p", tukey_hsd_pvalue, _arrow_tukey)
    if "pair_outcome" not in existing:
        conn.create_function("pair_outcome", _arrow_outcome, [t.DOUBLE, t.BOOLEAN], t.VARCHAR, type="arrow",
                             null_handling="special", side_effects=False)
    if "tukey_hsd_p" not in existing:
        conn.create_function("tukey_hsd_p", _arrow_tukey, [t.DOUBLE] * 6, t.DOUBLE, type="arrow",
                             null_handling="special", side_effects=False)
    if "paired_tests" in existing:
        return
    result = duckdb.struct_type({name: t.BOOLEAN if name == "randomization_exact" else t.DOUBLE for name in FIELDS})
    conn.create_function("paired_tests", _arrow_paired_tests,
                         [duckdb.list_type(t.DOUBLE), t.INTEGER, t.INTEGER, t.BIGINT, t.DOUBLE], result,
                         type="arrow", null_handling="special", side_effects=False)


def register_spark_functions(spark) -> None:
    """The same `paired_tests` on a SparkSession, as a pandas UDF returning the struct (python_jobs/warehouse/
    spark_session.py). An empty or NULL list gives a struct of NULLs (DuckDB: a NULL struct); the model reads its
    fields, which are NULL either way."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    sql_functions.register("paired_tests", _arrow_paired_tests)

    def udf(diffs, resamples, sign_flips, seeds, levels):
        import pyarrow as pa

        # from_pandas reads None and NaN as null, and numpy arrays as lists
        out = _arrow_paired_tests(*(pa.Array.from_pandas(s, type=t) for s, t in zip(
            (diffs, resamples, sign_flips, seeds, levels),
            (pa.list_(pa.float64()), pa.int64(), pa.int64(), pa.int64(), pa.float64()), strict=True)))
        return pd.DataFrame({name: out.field(name).to_pylist() for name in FIELDS})

    # pandas_udf reads the kind of UDF from the signature's type hints (evaluated, not this module's strings)
    udf.__annotations__ = {**{p: pd.Series for p in ("diffs", "resamples", "sign_flips", "seeds", "levels")},
                           "return": pd.DataFrame}

    fields = ", ".join(f"{name} {'boolean' if name == 'randomization_exact' else 'double'}" for name in FIELDS)
    spark.udf.register("paired_tests", pandas_udf(udf, f"struct<{fields}>"))

    sql_functions.register("pair_outcome", outcome, _arrow_outcome)
    sql_functions.register("tukey_hsd_p", tukey_hsd_pvalue, _arrow_tukey)

    def outcome_udf(diffs: pd.Series, directions: pd.Series) -> pd.Series:
        return pd.Series([outcome(None if pd.isna(d) else float(d), None if pd.isna(h) else bool(h))
                          for d, h in zip(diffs, directions, strict=True)], dtype=object)

    def tukey_udf(mean_diff: pd.Series, mse: pd.Series, n_a: pd.Series, n_b: pd.Series, k: pd.Series,
                  df: pd.Series) -> pd.Series:
        p = tukey_hsd_pvalue(*(s.astype("float64").to_numpy() for s in (mean_diff, mse, n_a, n_b, k, df)))
        return pd.Series(p).where(~np.isnan(p), None)

    # as for paired_tests above: the hints pandas_udf evaluates, not this module's postponed strings
    outcome_udf.__annotations__ = {"diffs": pd.Series, "directions": pd.Series, "return": pd.Series}
    tukey_udf.__annotations__ = {**{p: pd.Series for p in ("mean_diff", "mse", "n_a", "n_b", "k", "df")},
                                 "return": pd.Series}
    spark.udf.register("pair_outcome", pandas_udf(outcome_udf, "string"))
    spark.udf.register("tukey_hsd_p", pandas_udf(tukey_udf, "double"))
