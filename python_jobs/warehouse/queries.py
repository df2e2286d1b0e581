"""`finrag sql "QUERY"`: a read-only query against the warehouse, for analysts."""

from __future__ import annotations

import json
import sys

import duckdb
import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.config import warehouse_db, warehouse_home


def query(sql: str, home: str | None = None) -> pl.DataFrame:
    """Run one query on a read-only connection that is closed at once, so it never blocks `dbt build`."""
    db = warehouse_db(warehouse_home(home))
    if not db.exists():
        raise InputError(f"no warehouse at {db}: run `finrag build` (dbt build) first")
    con = duckdb.connect(str(db), read_only=True)
    try:
        rel = con.sql(sql)
        return rel.pl() if rel is not None else pl.DataFrame()
    except duckdb.Error as exc:
        raise InputError(str(exc).splitlines()[0]) from None
    finally:
        con.close()
