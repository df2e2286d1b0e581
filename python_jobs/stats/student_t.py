"""The quantiles the marts' intervals need, as SQL functions: neither DuckDB nor Spark has an inverse t or normal
distribution, so the dbt-duckdb plugin and the Spark session register

- `student_t_quantile(p DOUBLE, df BIGINT) -> DOUBLE`: the p-quantile of Student's t with df degrees of freedom,
  scipy.special.stdtrit (= scipy.stats.t.ppf): the t-intervals of mart_sweep_parameter_effects;
- `normal_quantile(p DOUBLE) -> DOUBLE`: the standard normal p-quantile, scipy.special.ndtri (= scipy.stats.norm.ppf,
  what ppi_py's and statsmodels' z-intervals use): the calibrated means of mart_judge_calibrated and the kappa
  intervals of the agreement marts.

NULL for a NULL argument, df < 1 or p outside (0, 1)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection

import numpy as np

from python_jobs.stats import sql_functions
from python_jobs.stats.sql_functions import arrow_array

NAME = "student_t_quantile"
NORMAL = "normal_quantile"


def t_quantiles(p: np.ndarray, df: np.ndarray) -> np.ndarray:
    """The quantiles, NaN where undefined (p or df missing as NaN, df < 1, p outside (0, 1))."""
    from scipy.special import stdtrit

    p, df = np.asarray(p, dtype=np.float64), np.asarray(df, dtype=np.float64)
    ok = (df >= 1) & (p > 0) & (p < 1)
    out = np.full(p.shape, np.nan)
    out[ok] = stdtrit(df[ok], p[ok])
    return out


def normal_quantiles(p: np.ndarray) -> np.ndarray:
    """The standard normal quantiles, NaN where undefined (p missing as NaN, p outside (0, 1))."""
    from scipy.special import ndtri

    p = np.asarray(p, dtype=np.float64)
    ok = (p > 0) & (p < 1)
    out = np.full(p.shape, np.nan)
    out[ok] = ndtri(p[ok])
    return out


# SQL name -> (the numpy function, its SQL argument types as DuckDB / Spark name them)
FUNCTIONS: dict[str, tuple[Callable[..., np.ndarray], tuple[str, ...]]] = {
    NAME: (t_quantiles, ("DOUBLE", "BIGINT")),
    NORMAL: (normal_quantiles, ("DOUBLE",)),
}


def _as_floats(values, na_value: float = np.nan) -> np.ndarray:
    """An Arrow or pandas column as float64, NaN for missing values."""
    if hasattr(values, "to_numpy") and hasattr(values, "type"):  # a pyarrow array
        import pyarrow as pa

        return values.cast(pa.float64()).to_numpy(zero_copy_only=False)
    import pandas as pd

    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64, na_value=na_value)


def _signature(n: int, annotation: object = inspect.Parameter.empty) -> inspect.Signature:
    """n positional parameters: DuckDB and pandas_udf read a function's arity (and pandas_udf its hints) from it."""
    return inspect.Signature([inspect.Parameter(f"c{i}", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                annotation=annotation) for i in range(n)], return_annotation=annotation)


def _arrow_function(fn: Callable[..., np.ndarray], n: int) -> Callable[..., object]:
    def arrow(*columns):
        import pyarrow as pa

        values = fn(*(_as_floats(c) for c in columns))
        return arrow_array(values, pa.float64(), mask=np.isnan(values))

    arrow.__signature__ = _signature(n)
    return arrow


def register_duckdb_functions(conn, existing: Collection[str] | None = None) -> None:
    """Every function of FUNCTIONS on a DuckDB connection (the dbt-duckdb plugin, every connection); `existing`: the
    connection's scalar functions, when the caller has read them (sql_functions.scalar_functions)."""
    from duckdb import sqltypes as t

    existing = sql_functions.scalar_functions(conn) if existing is None else existing
    for name, (fn, types) in FUNCTIONS.items():
        arrow = _arrow_function(fn, len(types))
        sql_functions.register(name, fn, _arrow_function)
        if name not in existing:
            conn.create_function(name, arrow, [getattr(t, ty) for ty in types], t.DOUBLE, type="arrow",
                                 null_handling="special", side_effects=False)


def register_spark_functions(spark) -> None:
    """The same functions on a SparkSession, as pandas UDFs (python_jobs/warehouse/spark_session.py)."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    for name, (fn, types) in FUNCTIONS.items():
        sql_functions.register(name, fn, _arrow_function)

        def udf(*columns, fn=fn):
            return pd.Series(fn(*(_as_floats(c) for c in columns))).astype("float64")

        # pandas_udf reads the kind of UDF from the signature's type hints (evaluated, not this module's strings):
        # one pandas Series per SQL argument
        udf.__signature__ = _signature(len(types), pd.Series)
        udf.__annotations__ = {**{f"c{i}": pd.Series for i in range(len(types))}, "return": pd.Series}
        spark.udf.register(name, pandas_udf(udf, "double"))
