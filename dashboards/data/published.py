"""The shared query helpers: the home, the published state and `query`, the one way a data function reads - a select
over views of the marts it names, opened by the readers' one opener (python_jobs/marts/published.py: the CLI and the
gate open the published marts the same way) on an in-memory DuckDB connection that is closed at once (the warehouse
file is never opened, so the dashboard can never hold the lock `dbt build` needs)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from python_jobs.core.config import warehouse_home
from python_jobs.marts.published import EXPORTS_SUBDIR, PublishError, published_connection, read_manifest

EXPORTS = EXPORTS_SUBDIR


def home_path(home: str | os.PathLike[str] | None = None) -> Path:
    return warehouse_home(home)


def publishing_problem(home: Path) -> str | None:
    """Why nothing can be read (nothing published, or stale: a newer build was not published), or None."""
    try:
        read_manifest(home)
    except PublishError as exc:
        return str(exc)
    return None


def export_manifest(home: Path) -> dict[str, Any] | None:
    """The published state's manifest (build and publish times, every model with its rows and columns); None when
    nothing is published or it is stale."""
    try:
        manifest = read_manifest(home)
    except PublishError:
        return None
    return {"build_id": manifest.build_id, "built_at": manifest.built_at.isoformat(),
            "published_at": manifest.published_at.isoformat(),
            "models": [{"name": m.name, "rows": m.rows, "columns": m.columns} for m in manifest.models.values()]}


def query(home: Path, sql: str, params: Sequence[object] | None = None,
          marts: Iterable[str] = ()) -> pl.DataFrame | None:
    """Run `sql` over views named after the marts (the Parquet files the published manifest names). None when a
    mart is not published (or the published state is stale)."""
    try:
        with published_connection(home, marts) as con:
            return con.sql(sql, params=list(params or [])).pl()
    except PublishError:
        return None


def in_list(column: str, values: Sequence[str] | None) -> tuple[str, list[str]]:
    """A `column in (?, ...)` filter, or no filter when values is None/empty."""
    if not values:
        return "true", []
    return f"{column} in ({', '.join('?' for _ in values)})", list(values)


def column_values(frame: pl.DataFrame | None, name: str) -> list[Any]:
    """One column of a query's result as a list: empty when the mart is not published (query gave None)."""
    return [] if frame is None else frame[name].to_list()
