"""`student_t_quantile` (python_jobs/stats/student_t.py), the t of mart_sweep_parameter_effects' intervals:
scipy.stats.t.ppf, tan(pi (p - 1/2)) at one degree of freedom (the Cauchy distribution), the normal quantile for
many, and NULL where undefined, through DuckDB as the dbt plugin registers it."""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pytest
from scipy import stats

from python_jobs.stats.student_t import register_duckdb_functions, t_quantiles


def test_quantiles_are_scipys() -> None:
    p = np.array([0.975, 0.95, 0.5, 0.025, 0.995])
    for df in (1, 2, 3, 10, 1000):
        assert t_quantiles(p, np.full(p.shape, df)) == pytest.approx(stats.t.ppf(p, df), rel=1e-12)
    assert t_quantiles(np.array([0.975]), np.array([1]))[0] == pytest.approx(math.tan(math.pi * 0.475), rel=1e-12)
    assert t_quantiles(np.array([0.975]), np.array([10**7]))[0] == pytest.approx(stats.norm.ppf(0.975), rel=1e-6)


def test_the_sql_function_and_its_nulls() -> None:
    con = duckdb.connect()
    register_duckdb_functions(con)
    rows = con.sql("""
        select p, df, student_t_quantile(p, df) as t
        from (values (0.975, 1), (0.975, 4), (0.975, 0), (0.0, 3), (1.0, 3), (null, 3), (0.9, null)) as v(p, df)
    """).fetchall()
    assert rows[0][2] == pytest.approx(12.706204736174698, rel=1e-12)
    assert rows[1][2] == pytest.approx(stats.t.ppf(0.975, 4), rel=1e-12)
    assert [r[2] for r in rows[2:]] == [None] * 5  # df < 1, p outside (0, 1), a null argument
    register_duckdb_functions(con)  # a second registration on the same connection is a no-op


def test_the_normal_quantile_is_scipys_and_its_nulls() -> None:
    con = duckdb.connect()
    register_duckdb_functions(con)
    rows = con.sql("""
        select normal_quantile(p) from (values (0.975), (0.95), (0.5), (0.0), (1.0), (null)) as v(p)
    """).fetchall()
    assert [r[0] for r in rows[:3]] == [stats.norm.ppf(0.975), stats.norm.ppf(0.95), 0.0]  # ndtri: exactly scipy's
    assert [r[0] for r in rows[3:]] == [None] * 3
