"""Reading a home's published marts in tests as readers do: the Parquet files the published manifest names
(python_jobs/warehouse/publishing.py; a file's name changes with every build that publishes it)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from python_jobs.warehouse.publishing import published_tables


def read_mart(home: Path, name: str) -> pl.DataFrame:
    """A published mart or seed, whole."""
    return pl.concat([pl.read_parquet(f) for f in published_tables(home)[name]], how="diagonal_relaxed")
