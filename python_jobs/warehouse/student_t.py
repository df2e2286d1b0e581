"""The Student t quantile, for t-intervals in SQL (mart_sweep_parameter_effects): neither DuckDB nor Spark has an
inverse t distribution, so the dbt-duckdb plugin and the Spark session register this one as
`student_t_quantile(p DOUBLE, df BIGINT) -> DOUBLE`: the p-quantile of Student's t with df degrees of freedom,
scipy.special.stdtrit (= scipy.stats.t.ppf). NULL for a NULL argument, df < 1 or p outside (0, 1)."""

from __future__ import annotations

import numpy as np

from python_jobs.warehouse import sql_functions

NAME = "student_t_quantile"


def t_quantiles(p: np.ndarray, df: np.ndarray) -> np.ndarray:
    """The quantiles, NaN where undefined (p or df missing as NaN, df < 1, p outside (0, 1))."""
    from scipy.special import stdtrit

    p, df = np.asarray(p, dtype=np.float64), np.asarray(df, dtype=np.float64)
    ok = (df >= 1) & (p > 0) & (p < 1)
    out = np.full(p.shape, np.nan)
    out[ok] = stdtrit(df[ok], p[ok])
    return out


def _arrow_t_quantile(p, df):
    import pyarrow as pa

    values = t_quantiles(p.to_numpy(zero_copy_only=False), df.cast(pa.float64()).to_numpy(zero_copy_only=False))
    return pa.array(values, type=pa.float64(), mask=np.isnan(values))


def register_duckdb_functions(conn) -> None:
    """`student_t_quantile` on a DuckDB connection (the dbt-duckdb plugin, every connection)."""
    from duckdb import sqltypes as t

    sql_functions.register(NAME, _arrow_t_quantile)
    existing = {r[0] for r in conn.execute(
        "select function_name from duckdb_functions() where function_type = 'scalar'").fetchall()}
    if NAME not in existing:
        conn.create_function(NAME, _arrow_t_quantile, [t.DOUBLE, t.BIGINT], t.DOUBLE, type="arrow",
                             null_handling="special", side_effects=False)


def register_spark_functions(spark) -> None:
    """The same function on a SparkSession, as a pandas UDF (python_jobs/warehouse/spark_session.py)."""
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    sql_functions.register(NAME, _arrow_t_quantile)

    def udf(p, df):
        values = t_quantiles(pd.to_numeric(p, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan),
                             pd.to_numeric(df, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan))
        return pd.Series(values).astype("float64")

    # pandas_udf reads the kind of UDF from the signature's type hints (evaluated, not this module's strings)
    udf.__annotations__ = {"p": pd.Series, "df": pd.Series, "return": pd.Series}
    spark.udf.register(NAME, pandas_udf(udf, "double"))
