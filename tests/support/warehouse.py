"""Reading a built warehouse (the DuckDB file in a home), read-only."""

from __future__ import annotations

from pathlib import Path

import duckdb
import yaml

from support.paths import PROJECT


def warehouse_query(home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(home / "finrag.duckdb"), read_only=True)
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()


def retrieval_ks() -> list[int]:
    """The ranking cut-offs every retrieval model uses (dbt_project.yml var retrieval_ks; 0 = the whole ranking)."""
    return list(yaml.safe_load((PROJECT / "dbt_project.yml").read_text())["vars"]["retrieval_ks"])


def run_comparison_settings() -> dict[str, float]:
    """mart_run_comparison's statistics settings (dbt_project.yml vars run_comparison_resamples / _sign_flips /
    _seed / _level), as paired_tests takes them."""
    variables = yaml.safe_load((PROJECT / "dbt_project.yml").read_text())["vars"]
    return {name: variables[f"run_comparison_{name}"] for name in ("resamples", "sign_flips", "seed", "level")}
