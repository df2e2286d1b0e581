"""Reading a built warehouse (the DuckDB file in a home), read-only."""

from __future__ import annotations

from pathlib import Path

import duckdb


def warehouse_query(home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()
