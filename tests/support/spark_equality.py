"""Comparing a home's DuckDB warehouse with its Spark warehouse (`finrag build --target spark`), table by table.

The Spark tables are Parquet files under <home>/spark/warehouse/finrag.db/<table>/, so they are read here without a
JVM. Rows are compared as sets with multiplicity: both sides sorted on every column (floats rounded for the sort
only), then floats compared to `tolerance` and everything else exactly.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import polars as pl

# build state, not results: run_version hashes the lake partitions' landing times as each engine prints them
NOT_COMPARED = {"run_version", "pair_version"}  # pair_version: both runs' versions, and a build id for answer runs


def project_relations(home: Path) -> set[str]:
    """The relations the project defines - its models and seeds, from the DuckDB build's manifest. The build's own
    records (which runs were tested, which run versions each model holds) are tables too, but not the project's."""
    nodes = json.loads((home / "dbt_target" / "manifest.json").read_text())["nodes"].values()
    return {n.get("alias") or n["name"] for n in nodes if n["resource_type"] in ("model", "seed")}


def duckdb_tables(home: Path) -> dict[str, pl.DataFrame]:
    """Every table (not view) of the DuckDB warehouse's main schema that is a model or seed, as frames."""
    defined = project_relations(home)
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        names = [r[0] for r in con.sql(
            "select table_name from information_schema.tables "
            "where table_schema = 'main' and table_type = 'BASE TABLE'").fetchall()]
        return {n: con.sql(f'select * from "{n}"').pl() for n in names if n in defined}
    finally:
        con.close()


def spark_table(home: Path, name: str) -> pl.DataFrame | None:
    directory = home / "spark" / "warehouse" / "finrag.db" / name
    files = sorted(p for p in directory.glob("*.parquet")) if directory.exists() else []
    if not files:
        return None if not directory.exists() else pl.DataFrame()
    return pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed")


def _normal(frame: pl.DataFrame) -> pl.DataFrame:
    """One dtype per kind: integers Int64, decimals and floats Float64, timestamps naive UTC."""
    out = []
    for name, dtype in frame.schema.items():
        col = pl.col(name)
        if dtype.is_integer():
            col = col.cast(pl.Int64)
        elif dtype.is_float() or isinstance(dtype, pl.Decimal):
            col = col.cast(pl.Float64)
        elif isinstance(dtype, pl.Datetime):
            col = (col.dt.convert_time_zone("UTC").dt.replace_time_zone(None) if dtype.time_zone else col).cast(
                pl.Datetime("us"))
        out.append(col)
    return frame.select(out)


def differences(duck: pl.DataFrame, spark: pl.DataFrame, tolerance: float = 1e-9) -> list[str]:
    """What differs between the two frames of one table (empty: equal)."""
    problems = []
    columns = [c for c in duck.columns if c not in NOT_COMPARED]
    if sorted(columns) != sorted(c for c in spark.columns if c not in NOT_COMPARED):
        return [f"columns differ: duckdb {sorted(columns)} vs spark {sorted(spark.columns)}"]
    if duck.height != spark.height:
        return [f"{duck.height} rows in duckdb vs {spark.height} in spark"]
    a, b = _normal(duck.select(columns)), _normal(spark.select(columns))
    floats = [c for c, t in a.schema.items() if t == pl.Float64]
    sortable = [c for c, t in a.schema.items() if not isinstance(t, (pl.List, pl.Struct, pl.Array))]
    keys = [pl.col(c).round(6) if c in floats else pl.col(c) for c in sortable]
    a, b = a.sort(keys, nulls_last=True), b.sort(keys, nulls_last=True)
    for c in columns:
        left, right = a[c].to_list(), b[c].to_list()
        if c in floats:
            bad = [i for i, (x, y) in enumerate(zip(left, right, strict=True))
                   if not ((x is None and y is None) or (x is not None and y is not None and (
                       (math.isnan(x) and math.isnan(y)) or abs(x - y) <= tolerance)))]
        else:
            bad = [i for i, (x, y) in enumerate(zip(left, right, strict=True)) if x != y]
        if bad:
            i = bad[0]
            problems.append(f"column {c}: {len(bad)} row(s) differ, first duckdb {left[i]!r} vs spark {right[i]!r}")
    return problems


def compare_warehouses(home: Path, tolerance: float = 1e-9) -> dict[str, list[str]]:
    """Table -> its differences, for every DuckDB table (missing on Spark: reported); only tables that differ."""
    report: dict[str, list[str]] = {}
    for name, duck in duckdb_tables(home).items():
        spark = spark_table(home, name)
        if spark is None:
            report[name] = ["no such table on spark"]
            continue
        found = differences(duck, spark, tolerance)
        if found:
            report[name] = found
    return report
