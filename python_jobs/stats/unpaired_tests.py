"""Unpaired comparison of two runs that share no (or too few) questions - two application versions' production
traffic - defined once here and exposed to SQL by the dbt-duckdb plugin and the Spark session:

- `comparison_test(n_shared, n_a, n_b)`: which test compares two runs at a metric point, the rule
  run_comparison_tests of python_jobs/core/rules.yml: 'paired_t' when the questions both runs were scored on
  (n_shared) are at least one and at least paired_min_share of the smaller run's questions, else 'welch_t'. The
  build (fct_run_comparisons), `finrag compare` on demand and `finrag gate` all ask this function.
- `welch_tests(values_a, values_b, resamples, seed, level)`: the two-sample statistics of run B's scores against run
  A's, each run's own questions (mean_b - mean_a):
  - ci_low, ci_high: a percentile bootstrap interval of the difference of means: `resamples` resamples of each
    run's n_a (n_b) scores with replacement, drawn independently of each other, the difference of their means in
    each, and the (1 - level) / 2 and (1 + level) / 2 quantiles of those differences (numpy's linear definition,
    as paired_tests' interval);
  - p_ttest: Welch's two-sided t-test, t = (mean_b - mean_a) / sqrt(s_a^2 / n_a + s_b^2 / n_b) (n - 1 denominators)
    on the Welch-Satterthwaite degrees of freedom, as scipy.stats.ttest_ind(b, a, equal_var=False) computes it;
    NULL where scipy gives NaN (either run below two scores, or no spread in either and equal means); 0 when neither
    run has any spread and the means differ (t infinite), as in scipy. Interpreting it as a p needs
    the two samples independent: different questions, as two versions' traffic is.
  The settings are the paired tests' (vars run_comparison_resamples / _seed / _level): one home for both.

Randomness: each run's resamples come from numpy Generators seeded with (seed, n, stream, block) - stream 2 for run
A's sample, 3 for run B's (0 and 1 are the paired tests') - so a comparison's result depends only on its two samples,
the settings and the seed, never on the other comparisons of its batch; comparisons with the same (n_a, n_b) are
resampled together as matrix products (python_jobs/stats/paired_tests.py's resample_means).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from python_jobs.core.rules import RULES
from python_jobs.stats import sql_functions
from python_jobs.stats.paired_tests import percentile_interval, resample_means
from python_jobs.stats.sql_functions import arrow_array, arrow_struct

PAIRED = RULES.paired_test
UNPAIRED = RULES.unpaired_test
PAIRED_MIN_SHARE = RULES.paired_min_share
_STREAM_A, _STREAM_B = 2, 3
_BATCH_COLUMNS = 512  # comparisons resampled at once (as paired_tests batches them)


@dataclass(frozen=True)
class WelchTests:
    ci_low: float
    ci_high: float
    p_ttest: float | None


def comparison_test(n_shared: int | None, n_a: int | None, n_b: int | None) -> str | None:
    """'paired_t' or 'welch_t' for two runs with n_a and n_b scored questions, n_shared of them scored by both (the
    rule run_comparison_tests); None when either run has no scored question (nothing to compare)."""
    if n_a is None or n_b is None or min(n_a, n_b) < 1:
        return None
    shared = n_shared or 0
    return PAIRED if shared >= 1 and shared >= PAIRED_MIN_SHARE * min(n_a, n_b) else UNPAIRED


def _welch_p(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Welch's two-sided p per column of a (n_a x m) and b (n_b x m); NaN where undefined."""
    from scipy.special import stdtr

    n_a, n_b = a.shape[0], b.shape[0]
    if n_a < 2 or n_b < 2:
        return np.full(a.shape[1], np.nan)
    v_a, v_b = a.var(axis=0, ddof=1) / n_a, b.var(axis=0, ddof=1) / n_b
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (b.mean(axis=0) - a.mean(axis=0)) / np.sqrt(v_a + v_b)
        df = (v_a + v_b) ** 2 / (v_a ** 2 / (n_a - 1) + v_b ** 2 / (n_b - 1))
    # no spread in either run but different means: t is infinite and p 0, as scipy says (df is 0 / 0 there)
    return np.where(np.isinf(t), 0.0, 2.0 * stdtr(df, -np.abs(t)))


def welch_tests_batch(values_a: Sequence[Sequence[float] | None], values_b: Sequence[Sequence[float] | None],
                      resamples: int, seed: int, level: float) -> list[WelchTests | None]:
    """The statistics of many comparisons at once, B - A (None where either sample is empty or missing)."""
    if resamples < 1 or not 0 < level < 1:
        raise ValueError(f"resamples {resamples} must be >= 1 and level {level} in (0, 1)")
    if len(values_a) != len(values_b):
        raise ValueError(f"{len(values_a)} samples of run A and {len(values_b)} of run B")
    out: list[WelchTests | None] = [None] * len(values_a)
    by_sizes: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, (a, b) in enumerate(zip(values_a, values_b, strict=True)):
        if a is not None and b is not None and len(a) and len(b):
            by_sizes[(len(a), len(b))].append(i)
    for rows in by_sizes.values():
        for start in range(0, len(rows), _BATCH_COLUMNS):
            batch = rows[start:start + _BATCH_COLUMNS]
            a = np.array([values_a[i] for i in batch], dtype=np.float64).T  # n_a x m
            b = np.array([values_b[i] for i in batch], dtype=np.float64).T  # n_b x m
            differences = resample_means(b, resamples, seed, _STREAM_B) - resample_means(a, resamples, seed,
                                                                                         _STREAM_A)
            low, high = percentile_interval(differences, level)
            p = _welch_p(a, b)
            for j, i in enumerate(batch):
                out[i] = WelchTests(float(low[j]), float(high[j]), None if np.isnan(p[j]) else float(p[j]))
    return out


def welch_tests(values_a: Sequence[float], values_b: Sequence[float], resamples: int, seed: int,
                level: float) -> WelchTests | None:
    """Bootstrap interval of mean(b) - mean(a) and Welch's t-test p of one comparison; None when a sample is empty."""
    return welch_tests_batch([values_a], [values_b], resamples, seed, level)[0]


# ---- DuckDB and Spark ------------------------------------------------------------------------------------------------
FIELDS = ("ci_low", "ci_high", "p_ttest")


def _arrow_welch_tests(values_a, values_b, resamples, seeds, levels):
    """The vectorised UDF: one call per chunk; comparisons with the same settings are batched together."""
    import pyarrow as pa

    lists_a, lists_b = values_a.to_pylist(), values_b.to_pylist()
    settings = list(zip(resamples.to_pylist(), seeds.to_pylist(), levels.to_pylist(), strict=True))
    results: list[WelchTests | None] = [None] * len(lists_a)
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, s in enumerate(settings):
        if lists_a[i] is not None and lists_b[i] is not None and None not in s:
            groups[s].append(i)
    for (r, seed, level), rows in groups.items():
        found = welch_tests_batch([lists_a[i] for i in rows], [lists_b[i] for i in rows], int(r), int(seed),
                                  float(level))
        for i, res in zip(rows, found, strict=True):
            results[i] = res
    return arrow_struct({name: arrow_array([None if res is None else getattr(res, name) for res in results],
                                           pa.float64()) for name in FIELDS}, [res is None for res in results])


def _arrow_comparison_test(n_shared, n_a, n_b):
    import pyarrow as pa

    return arrow_array([comparison_test(s, a, b) for s, a, b in zip(n_shared.to_pylist(), n_a.to_pylist(),
                                                                    n_b.to_pylist(), strict=True)], pa.string())


def register_duckdb_functions(conn, existing: Collection[str] | None = None) -> None:
    """`welch_tests(values_a DOUBLE[], values_b DOUBLE[], resamples INTEGER, seed BIGINT, level DOUBLE)` returning
    STRUCT(ci_low, ci_high, p_ttest DOUBLE), NULL when a list is empty or NULL; `comparison_test(n_shared BIGINT,
    n_a BIGINT, n_b BIGINT) -> VARCHAR`. Called by the dbt-duckdb plugin for every connection; `existing`: the
    connection's scalar functions, when the caller has read them (sql_functions.scalar_functions)."""
    import duckdb
    from duckdb import sqltypes as t

    existing = sql_functions.scalar_functions(conn) if existing is None else existing
    sql_functions.register("welch_tests", _arrow_welch_tests)
    sql_functions.register("comparison_test", comparison_test, _arrow_comparison_test)
    if "comparison_test" not in existing:
        conn.create_function("comparison_test", _arrow_comparison_test, [t.BIGINT] * 3, t.VARCHAR, type="arrow",
                             null_handling="special", side_effects=False)
    if "welch_tests" not in existing:
        result = duckdb.struct_type({name: t.DOUBLE for name in FIELDS})
        conn.create_function("welch_tests", _arrow_welch_tests,
                             [duckdb.list_type(t.DOUBLE), duckdb.list_type(t.DOUBLE), t.INTEGER, t.BIGINT, t.DOUBLE],
                             result, type="arrow", null_handling="special", side_effects=False)


def register_spark_functions(spark) -> None:
    """The same two functions on a SparkSession, as pandas UDFs (python_jobs/warehouse/spark_session.py)."""
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql.functions import pandas_udf

    sql_functions.register("welch_tests", _arrow_welch_tests)
    sql_functions.register("comparison_test", comparison_test, _arrow_comparison_test)

    def udf(values_a, values_b, resamples, seeds, levels):
        out = _arrow_welch_tests(*(pa.Array.from_pandas(s, type=typ) for s, typ in zip(
            (values_a, values_b, resamples, seeds, levels),
            (pa.list_(pa.float64()), pa.list_(pa.float64()), pa.int64(), pa.int64(), pa.float64()), strict=True)))
        return pd.DataFrame({name: out.field(name).to_pylist() for name in FIELDS})

    def test_udf(n_shared, n_a, n_b):
        return pd.Series([comparison_test(*(None if pd.isna(v) else int(v) for v in row))
                          for row in zip(n_shared, n_a, n_b, strict=True)], dtype=object)

    # pandas_udf reads the kind of UDF from the signature's type hints (evaluated, not this module's strings)
    udf.__annotations__ = {**{p: pd.Series for p in ("values_a", "values_b", "resamples", "seeds", "levels")},
                           "return": pd.DataFrame}
    test_udf.__annotations__ = {**{p: pd.Series for p in ("n_shared", "n_a", "n_b")}, "return": pd.Series}
    fields = ", ".join(f"{name} double" for name in FIELDS)
    spark.udf.register("welch_tests", pandas_udf(udf, f"struct<{fields}>"))
    spark.udf.register("comparison_test", pandas_udf(test_udf, "string"))
