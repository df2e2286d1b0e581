"""The shared query helpers: the home, the published state (the one manifest,
python_jobs/warehouse/publishing.py) and `query`, the one way a data function reads: a select over views named after
the published marts, on an in-memory DuckDB connection of its own that is closed at once (the warehouse file is never
opened, so the dashboard can never hold the lock `dbt build` needs)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

EXPORTS = Path("exports") / "marts"


def home_path(home: str | os.PathLike[str] | None = None) -> Path:
    raw = home if home is not None else os.environ.get("FINRAG_HOME", "warehouse")
    return Path(raw).expanduser().resolve()


def published(home: Path) -> dict[str, list[Path]] | None:
    """Published name -> its Parquet files, from the one manifest (python_jobs/warehouse/publishing.py); None when
    nothing is published or the published state is stale (publishing_problem says which)."""
    from python_jobs.warehouse.publishing import PublishError, published_tables

    try:
        return published_tables(home)
    except PublishError:
        return None


def publishing_problem(home: Path) -> str | None:
    """Why nothing can be read (nothing published, or stale: a newer build was not published), or None."""
    from python_jobs.warehouse.publishing import PublishError, read_manifest

    try:
        read_manifest(home)
    except PublishError as exc:
        return str(exc)
    return None


def export_manifest(home: Path) -> dict[str, Any] | None:
    """The published state's manifest (build and publish times, every model with its rows and columns); None when
    nothing is published or it is stale."""
    from python_jobs.warehouse.publishing import PublishError, read_manifest

    try:
        manifest = read_manifest(home)
    except PublishError:
        return None
    return {"build_id": manifest.build_id, "built_at": manifest.built_at.isoformat(),
            "published_at": manifest.published_at.isoformat(),
            "models": [{"name": m.name, "rows": m.rows, "columns": m.columns} for m in manifest.models.values()]}


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def query(home: Path, sql: str, params: Sequence[object] | None = None,
          marts: Iterable[str] = ()) -> pl.DataFrame | None:
    """Run `sql` over views named after the marts (the Parquet files the published manifest names). None when a
    mart is not published (or the published state is stale)."""
    views: list[str] = []
    tables = published(home)
    for name in marts:
        if tables is None or name not in tables:
            return None
        paths = ", ".join(_literal(str(f)) for f in tables[name])
        views.append(f'create view "{name}" as select * from read_parquet([{paths}], union_by_name = true)')
    con = duckdb.connect(":memory:")
    try:
        for view in views:
            con.execute(view)
        return con.sql(sql, params=list(params or [])).pl()
    finally:
        con.close()


def in_list(column: str, values: Sequence[str] | None) -> tuple[str, list[str]]:
    """A `column in (?, ...)` filter, or no filter when values is None/empty."""
    if not values:
        return "true", []
    return f"{column} in ({', '.join('?' for _ in values)})", list(values)


def column_values(frame: pl.DataFrame | None, name: str) -> list[Any]:
    """One column of a query's result as a list: empty when the mart is not published (query gave None)."""
    return [] if frame is None else frame[name].to_list()
